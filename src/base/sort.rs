//! Stable sorting with one compiled sort for the whole program.
//!
//! `slice::sort_by` is generic: every element type and comparison compiles its own
//! copy of the standard library's merge sort, about 3.5 KB of wasm each, and the bundle
//! carried eleven of them. Here only positions are sorted, through a comparison behind
//! `dyn`, and the items are then swapped into that order. (Collecting into a `BTreeMap`,
//! serde_json's `Map` included, sorts as well: extend an empty map instead.)

use std::cmp::Ordering;

/// Sorts `items` by `compare`, keeping equal items in their order, like
/// `slice::sort_by`.
pub fn sort_by<T>(items: &mut [T], compare: impl Fn(&T, &T) -> Ordering) {
    // Nothing to order (a step's one tool result, most often): nothing is made.
    if items.len() < 2 {
        return;
    }
    let order = sorted_positions(items.len(), &|a, b| match (items.get(a), items.get(b)) {
        (Some(x), Some(y)) => compare(x, y),
        _ => Ordering::Equal,
    });
    permute(items, &order);
}

/// Sorts `items` by `key`, keeping items with equal keys in their order, like
/// `slice::sort_by_key`.
pub fn sort_by_key<T, K: Ord>(items: &mut [T], key: impl Fn(&T) -> K) {
    sort_by(items, |a, b| key(a).cmp(&key(b)));
}

/// Sorts `items` in ascending order, like `slice::sort`.
pub fn sort<T: Ord>(items: &mut [T]) {
    sort_by(items, T::cmp);
}

/// The positions `0..len` in the order `compare` puts them: the one place a sort is
/// compiled.
fn sorted_positions(len: usize, compare: &dyn Fn(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    #[allow(clippy::disallowed_methods)] // the one sort the others go through
    order.sort_by(|&a, &b| compare(a, b));
    order
}

/// Rearranges `items` so that position `k` holds what was at `order[k]`, following
/// each cycle of the permutation once.
fn permute<T>(items: &mut [T], order: &[usize]) {
    let mut placed = vec![false; items.len()];
    for start in 0..items.len() {
        let mut current = start;
        while let Some(done) = placed.get_mut(current).filter(|done| !**done) {
            *done = true;
            match order.get(current) {
                Some(&next) if next != start && next < items.len() => {
                    items.swap(current, next);
                    current = next;
                }
                _ => break,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_keys_keep_their_order() {
        let mut words = vec!["bb", "a", "cc", "d", "ee"];
        sort_by_key(&mut words, |w| w.len());
        assert_eq!(words, ["a", "d", "bb", "cc", "ee"]);
    }

    #[test]
    fn empty_and_single_lists_are_sorted() {
        let mut none: Vec<u8> = Vec::new();
        sort(&mut none);
        assert!(none.is_empty());
        let mut one = vec![7];
        sort(&mut one);
        assert_eq!(one, [7]);
    }
}
