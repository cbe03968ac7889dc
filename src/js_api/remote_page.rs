//! A page the agent does not share a window with: `page: {snapshot, perform, settle}`
//! in `createAgent`, beside `builtins: ["page"]`. The extension's side panel passes
//! functions that ask the content script in each frame of the person's tab over the
//! extension's messaging; the page tools (`tool::page`) work over them exactly as
//! over the panel's own window. `snapshot()` resolves to the page as the
//! `familiar-page` walker writes it (JSON text or the parsed object),
//! `perform(element, act)` takes an element's number and `{act, value}`, and
//! `settle()` waits for the page to react (a navigation included). Where the tab's
//! page declares tools with WebMCP, `declared()` lists them (`getTools()`'s entries
//! without their window, each frame's as its content script reads them) and
//! `execute(name, input)` runs one through `executeTool`, resolving to its answer as
//! text: the page's declared tools are offered as on the page's own window
//! (`tool::page::declared`). Without them none are.

use std::cell::RefCell;
use std::rc::Rc;

use futures::future::LocalBoxFuture;
use js_sys::{Function, Promise};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use super::js::{field, message_of, to_js, to_json};
use crate::base::json::from_value;
use crate::tool::page::{Act, DeclaredTools, PageDom, Snapshot};

/// The page the agent reads over a host's functions, and its declared tools when the
/// host passes `declared` and `execute`.
#[derive(Clone)]
pub struct Bridge {
    pub dom: Rc<dyn PageDom>,
    pub declared: Option<Rc<dyn DeclaredTools>>,
}

/// Takes `page: {snapshot, perform, settle?}` out of `createAgent`'s config (functions
/// are not JSON): the rest is read as usual. A `page` that is not such an object is a
/// clear error.
pub fn take_remote_page(config: JsValue) -> Result<(JsValue, Option<Bridge>), String> {
    let page = field(&config, "page");
    if page.is_undefined() || page.is_null() {
        return Ok((config, None));
    }
    let function = |name: &str| field(&page, name).dyn_into::<Function>().ok();
    let (Some(snapshot), Some(perform)) = (function("snapshot"), function("perform")) else {
        return Err(
            "config.page must be {snapshot(), perform(element, act), settle()}: \
             functions that read and act on the page"
                .into(),
        );
    };
    let rest = js_sys::Object::assign(&js_sys::Object::new(), &config.unchecked_into());
    let _ = js_sys::Reflect::delete_property(&rest, &"page".into());
    let declared = match (function("declared"), function("execute")) {
        (Some(list), Some(execute)) => {
            Some(Rc::new(RemoteTools { list, execute }) as Rc<dyn DeclaredTools>)
        }
        _ => None,
    };
    let dom: Rc<dyn PageDom> = Rc::new(RemotePage {
        snapshot,
        perform,
        settle: function("settle"),
        last: RefCell::new(None),
    });
    Ok((rest.into(), Some(Bridge { dom, declared })))
}

/// The host's `declared()` and `execute(name, input)`: the tab's declared tools.
struct RemoteTools {
    list: Function,
    execute: Function,
}

impl DeclaredTools for RemoteTools {
    fn list(&self) -> LocalBoxFuture<'_, Result<Vec<serde_json::Value>, String>> {
        Box::pin(async move {
            let listed = settled("declared tools", self.list.call0(&JsValue::NULL)).await?;
            match to_json(&listed)? {
                serde_json::Value::Array(entries) => Ok(entries),
                _ => Err("the page's declared() gave no list".to_owned()),
            }
        })
    }

    fn execute<'a>(
        &'a self,
        name: &'a str,
        input: &'a serde_json::Value,
    ) -> LocalBoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let returned = self
                .execute
                .call2(&JsValue::NULL, &JsValue::from(name), &to_js(input));
            let answer = settled("declared tool", returned).await?;
            Ok(match answer.as_string() {
                Some(text) => text,
                None if answer.is_undefined() => String::new(),
                None => to_json(&answer)?.to_string(),
            })
        })
    }
}

/// The host's functions as the page tools' browser side.
struct RemotePage {
    snapshot: Function,
    perform: Function,
    settle: Option<Function>,
    last: RefCell<Option<Snapshot>>,
}

/// Calls `function` and waits for what it returns, a promise or not.
async fn settled(what: &str, returned: Result<JsValue, JsValue>) -> Result<JsValue, String> {
    let returned = returned.map_err(|e| format!("the page's {what} threw: {}", message_of(&e)))?;
    JsFuture::from(Promise::resolve(&returned))
        .await
        .map_err(|e| format!("the page's {what} failed: {}", message_of(&e)))
}

impl PageDom for RemotePage {
    fn snapshot(&self) -> LocalBoxFuture<'_, Result<Snapshot, String>> {
        Box::pin(async move {
            let value = settled("snapshot", self.snapshot.call0(&JsValue::NULL)).await?;
            // Through the crate's one reader of values (`base::json`), so the
            // snapshot's types add their fields and nothing of a second deserializer.
            let value = match value.as_string() {
                Some(text) => serde_json::from_str(&text).map_err(|e| e.to_string()),
                None => to_json(&value),
            };
            let read = value.and_then(|v| from_value::<Snapshot>(v).map_err(|e| e.to_string()));
            let snapshot = read.map_err(|e| format!("the page's snapshot is not readable: {e}"))?;
            *self.last.borrow_mut() = Some(snapshot.clone());
            Ok(snapshot)
        })
    }

    fn last(&self) -> Option<Snapshot> {
        self.last.borrow().clone()
    }

    fn perform<'a>(&'a self, element: u32, act: &'a Act) -> LocalBoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let returned = self
                .perform
                .call2(&JsValue::NULL, &JsValue::from(element), &to_js(act));
            settled("perform", returned).await.map(|_| ())
        })
    }

    fn settle(&self) -> LocalBoxFuture<'static, ()> {
        let returned = match &self.settle {
            Some(settle) => settle.call0(&JsValue::NULL),
            None => return Box::pin(gloo_timers::future::TimeoutFuture::new(50)),
        };
        Box::pin(async move {
            let _ = settled("settle", returned).await;
        })
    }
}
