//! [`Kept`]: what a run made of one of its shared values (an estimate of the system
//! prompt, the tools offered once look-ups are used up), kept while that value is the
//! same, so a step does not make it again. Not part of the run: never saved, never
//! compared.

use std::cell::RefCell;
use std::rc::Rc;

/// `V` made of a shared `T`, kept with the value it was made of (held, so its
/// address is not another value's).
pub(super) struct Kept<T: ?Sized, V = usize>(RefCell<Option<(Rc<T>, V)>>);

impl<T: ?Sized, V: Clone> Kept<T, V> {
    /// What `make` made of `value`, made again only when `value` is another.
    pub(super) fn of(&self, value: &Rc<T>, make: impl FnOnce(&T) -> V) -> V {
        if let Some((known, made)) = &*self.0.borrow()
            && Rc::ptr_eq(known, value)
        {
            return made.clone();
        }
        let made = make(value);
        *self.0.borrow_mut() = Some((Rc::clone(value), made.clone()));
        made
    }
}

impl<T: ?Sized, V> Default for Kept<T, V> {
    fn default() -> Self {
        Self(RefCell::new(None))
    }
}

impl<T: ?Sized, V: Clone> Clone for Kept<T, V> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<T: ?Sized, V> std::fmt::Debug for Kept<T, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Kept")
    }
}

impl<T: ?Sized, V> PartialEq for Kept<T, V> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
