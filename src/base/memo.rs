//! A figure worked out once and kept beside the value it is about (a message's token
//! estimate), so that a step which needs it again costs nothing. It is not part of the
//! value: equality ignores it and it is never saved; whoever changes the value clears
//! it.

use std::sync::OnceLock;

/// A kept figure, or none yet. (Set once: a value shown by the UI's signals must be
/// shareable, which a `Cell` is not.)
#[derive(Debug, Clone, Default)]
pub struct Memo<T: Copy>(OnceLock<T>);

impl<T: Copy> Memo<T> {
    /// The kept figure, working it out with `make` the first time.
    pub fn get_or(&self, make: impl FnOnce() -> T) -> T {
        *self.0.get_or_init(make)
    }

    /// The kept figure, if there is one.
    pub fn get(&self) -> Option<T> {
        self.0.get().copied()
    }

    /// Keeps `value`, unless a figure is kept already.
    pub fn set(&self, value: T) {
        let _ = self.0.set(value);
    }

    /// Forgets the figure: the value it was about changed.
    pub fn clear(&mut self) {
        self.0 = OnceLock::new();
    }
}

impl<T: Copy> Eq for Memo<T> {}

impl<T: Copy> PartialEq for Memo<T> {
    /// Two values are equal whatever their memos say.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_figure_is_made_once_until_cleared_and_never_makes_values_differ() {
        let mut memo = Memo::default();
        let mut made = 0;
        assert_eq!(
            memo.get_or(|| {
                made += 1;
                7
            }),
            7
        );
        assert_eq!(
            memo.get_or(|| {
                made += 1;
                8
            }),
            7
        );
        assert_eq!(made, 1);
        memo.clear();
        assert_eq!(memo.get(), None);
        assert_eq!(memo, Memo::default());
    }
}
