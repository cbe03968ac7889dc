//! `page`: the page tools over this window's own document (the one-tag build and
//! `builtins: ["page"]` with no `page` bridge): the `familiar-page` walker, reading
//! same-origin frames in place, behind [`PageDom`].

use familiar_page::PageDomAdapter;
use futures::future::LocalBoxFuture;

use crate::tool::page::{Act, PageDom, Snapshot};

/// This window's document, read and acted on in place.
pub struct WindowPage(PageDomAdapter);

impl Default for WindowPage {
    fn default() -> Self {
        Self(PageDomAdapter::new(true))
    }
}

impl PageDom for WindowPage {
    fn snapshot(&self) -> LocalBoxFuture<'_, Result<Snapshot, String>> {
        Box::pin(std::future::ready(self.0.snapshot()))
    }

    fn last(&self) -> Option<Snapshot> {
        self.0.snapshot().ok()
    }

    fn perform<'a>(&'a self, element: u32, act: &'a Act) -> LocalBoxFuture<'a, Result<(), String>> {
        Box::pin(std::future::ready(self.0.perform(element, act)))
    }

    fn settle(&self) -> LocalBoxFuture<'static, ()> {
        // Handlers an action schedules (a timeout, a promise), then the page's own
        // changes until it is quiet, briefly bounded.
        Box::pin(familiar_page::settle())
    }
}
