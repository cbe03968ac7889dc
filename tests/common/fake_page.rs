//! A page in memory for the page tools' native tests: it answers reads with its
//! snapshot and records every act done to it. Included by `#[path]` where needed
//! (not through `common`, whose other parts those tests do not use).

use std::cell::RefCell;

use familiar::tool::page::{Act, Control, PageDom, Snapshot};
use futures::future::LocalBoxFuture;

/// A page in memory that records what was done to it.
pub struct FakePage {
    pub page: RefCell<Snapshot>,
    pub done: RefCell<Vec<(u32, Act)>>,
}

impl FakePage {
    pub fn new(page: Snapshot) -> Self {
        Self {
            page: RefCell::new(page),
            done: RefCell::new(Vec::new()),
        }
    }
}

impl PageDom for FakePage {
    fn snapshot(&self) -> LocalBoxFuture<'_, Result<Snapshot, String>> {
        Box::pin(async { Ok(self.page.borrow().clone()) })
    }
    fn last(&self) -> Option<Snapshot> {
        Some(self.page.borrow().clone())
    }
    fn perform<'a>(&'a self, element: u32, act: &'a Act) -> LocalBoxFuture<'a, Result<(), String>> {
        self.done.borrow_mut().push((element, act.clone()));
        Box::pin(async { Ok(()) })
    }
    fn settle(&self) -> LocalBoxFuture<'static, ()> {
        Box::pin(async {})
    }
}

/// A visible, enabled element of `role` named `name`, in no form or frame.
pub fn control(id: u32, role: &str, name: &str) -> Control {
    Control {
        id,
        role: role.into(),
        name: name.into(),
        value: None,
        min: None,
        max: None,
        checked: None,
        disabled: false,
        visible: true,
        options: Vec::new(),
        href: None,
        form: None,
        sensitive: false,
        focused: false,
        popup_of: None,
        frame: None,
    }
}
