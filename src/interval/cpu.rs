//! The sequential oracle of interval moves (re-exported from [`crate::cpu`]).

/// Interval move one item at a time, the oracle of [`crate::interval_gather`],
/// [`crate::interval_scatter`] and [`crate::interval_move`]: for each item `j` of interval `s`
/// (`offsets` holds the intervals' starts and then the item count), of rank `r = j -
/// offsets[s]`, `out[destinations[s] + r] = input[sources[s] + r]`, `j` standing for the
/// index where `sources` or `destinations` is `None`. Items in order: a later one wins where
/// destinations overlap.
pub fn interval_move<T: Copy>(input: &[T], offsets: &[usize], sources: Option<&[usize]>, destinations: Option<&[usize]>, out: &mut [T]) {
    let mut s = 0;
    for j in 0..offsets.last().copied().unwrap_or(0) {
        while offsets[s + 1] <= j {
            s += 1;
        }
        let rank = j - offsets[s];
        let from = sources.map_or(j, |f| f[s] + rank);
        let to = destinations.map_or(j, |d| d[s] + rank);
        out[to] = input[from];
    }
}
