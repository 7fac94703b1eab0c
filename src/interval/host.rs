//! Interval moves on host slices, by the CPU (re-exported from [`crate::host`]).

use super::HostIntervals;
use crate::error::Result;
use crate::host::parallel::load_balance;
use crate::key::Value;
use crate::types::SortIndex;

/// Interval gather on the host: `out[starts[s] + r] = input[sources[s] + r]` (see
/// [`crate::interval`]); the device call's errors, and starts that are not non-decreasing from
/// 0 or an interval reaching past `input` are [`crate::Error::InvalidArgument`]. The rest of
/// `out` is left as it is.
pub fn interval_gather<I: SortIndex, V: Value>(count: usize, starts: &[I], sources: &[I], input: &[V], out: &mut [V]) -> Result<()> {
    HostIntervals { count, starts, sources: Some(sources), destinations: None }.check(input.len(), out.len())?;
    // The items are the output's first `count`: spans of them on the host threads.
    load_balance(starts, &mut out[..count], |s, rank| input[sources[s].value() as usize + rank as usize]);
    Ok(())
}

/// Interval scatter on the host: `out[destinations[s] + r] = input[starts[s] + r]`; checked as
/// [`interval_gather`], an interval reaching past `out` being an error too.
pub fn interval_scatter<I: SortIndex, V: Value>(count: usize, starts: &[I], destinations: &[I], input: &[V], out: &mut [V]) -> Result<()> {
    move_intervals(HostIntervals { count, starts, sources: None, destinations: Some(destinations) }, input, out)
}

/// Interval move on the host: `out[destinations[s] + r] = input[sources[s] + r]`; checked as
/// [`interval_gather`] and [`interval_scatter`].
pub fn interval_move<I: SortIndex, V: Value>(count: usize, starts: &[I], sources: &[I], destinations: &[I], input: &[V], out: &mut [V]) -> Result<()> {
    move_intervals(HostIntervals { count, starts, sources: Some(sources), destinations: Some(destinations) }, input, out)
}

/// Checks the move and copies each interval, in order on the calling thread (a later
/// interval's values win where destinations overlap).
fn move_intervals<I: SortIndex, V: Value>(m: HostIntervals<'_, I>, input: &[V], out: &mut [V]) -> Result<()> {
    m.check(input.len(), out.len())?;
    for (s, length) in m.lengths().enumerate() {
        let item = m.starts[s].value() as usize;
        let from = m.sources.map_or(item, |f| f[s].value() as usize);
        let to = m.destinations.map_or(item, |d| d[s].value() as usize);
        out[to..to + length].copy_from_slice(&input[from..from + length]);
    }
    Ok(())
}
