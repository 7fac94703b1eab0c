//! The sequential oracle of bulk insert and bulk remove (re-exported from [`crate::cpu`]).

/// `array` with `values[j]` inserted before `array[positions[j]]` (positions sorted, each at
/// most `array.len()`; equal positions keep their values' order): the oracle of
/// [`crate::bulk_insert`].
pub fn bulk_insert<T: Copy>(array: &[T], positions: &[usize], values: &[T]) -> Vec<T> {
    assert_eq!(positions.len(), values.len(), "a value per position");
    let mut out = Vec::with_capacity(array.len() + values.len());
    let mut inserts = positions.iter().zip(values).peekable();
    for i in 0..=array.len() {
        while let Some((_, &value)) = inserts.next_if(|&(&p, _)| p <= i) {
            out.push(value);
        }
        out.extend(array.get(i));
    }
    out
}

/// `array` without the items at `positions` (any order, repeats removing an item once): the
/// oracle of [`crate::bulk_remove`].
pub fn bulk_remove<T: Copy>(array: &[T], positions: &[usize]) -> Vec<T> {
    let mut removed = vec![false; array.len()];
    for &p in positions {
        removed[p] = true;
    }
    array.iter().zip(&removed).filter(|(_, &gone)| !gone).map(|(&item, _)| item).collect()
}
