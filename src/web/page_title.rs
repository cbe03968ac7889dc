//! `page_title`: reads the title of the page the agent lives in.

use serde::Serialize;

use crate::tool::{CallContext, NoArgs, Tool, ToolKind};

/// Tells the model the title of the current page.
#[derive(Debug, Clone, Copy, Default)]
pub struct PageTitle;

/// The page's title and address (origin and path).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PageInfo {
    pub title: String,
    pub url: String,
}

impl Tool for PageTitle {
    const NAME: &'static str = "page_title";
    const KIND: ToolKind = ToolKind::Data;
    type Args = NoArgs;
    type Output = PageInfo;
    type Error = &'static str;

    fn description(&self) -> String {
        "The title and address of the web page the user is on.".into()
    }

    fn parameters() -> serde_json::Value {
        NoArgs::parameters()
    }

    async fn call(&self, _: NoArgs, _: CallContext) -> Result<PageInfo, &'static str> {
        let window = web_sys::window().ok_or("there is no browser window")?;
        let document = window.document().ok_or("the window has no document")?;
        let location = window.location();
        // Origin and path only: login tokens and session ids live in the query and the
        // fragment, and this goes to a model.
        let url = format!(
            "{}{}",
            location.origin().unwrap_or_default(),
            location.pathname().unwrap_or_default()
        );
        Ok(PageInfo {
            title: document.title(),
            url,
        })
    }
}
