//! The browser behind the seams: the only module that touches `web_sys` and `js_sys`.

mod clock;
pub mod demo;
mod fetch;
mod page_title;
mod storage;

pub use clock::BrowserClock;
pub use fetch::Fetch;
pub use page_title::PageTitle;
pub use storage::LocalStorage;
