//! `createAgent({…, webmcp: true})`: the host's registered tools offered to the
//! browser's own agents through WebMCP (`document.modelContext`), each registered as
//! the host registers it and taken back when the host unregisters it or destroys the
//! agent. A browser agent's call is not run here: it becomes a turn of the session
//! (`Session::visit`), judged by the same registry, boundaries, approvals and
//! provenance as the agent's own calls, as words another party wrote, so an action
//! waits for a person's card. A browser or page without WebMCP publishes nothing.

use wasm_bindgen::JsValue;

use super::FamiliarAgent;
use super::js::field;
#[cfg(feature = "webmcp")]
pub use publisher::Publisher;

/// A build without WebMCP's publishing has nothing to publish with.
#[cfg(not(feature = "webmcp"))]
pub struct Publisher;

/// Takes `webmcp` out of `createAgent`'s config: whether the host's tools are
/// published.
pub fn take_webmcp(config: JsValue) -> Result<(JsValue, bool), String> {
    let flag = field(&config, "webmcp");
    if flag.is_undefined() {
        return Ok((config, false));
    }
    let publish = flag
        .as_bool()
        .ok_or("config.webmcp must be true or false")?;
    if publish && cfg!(not(feature = "webmcp")) {
        return Err("config.webmcp needs WebMCP's publishing, which this build leaves out: use the full build (dist/, `trunk build --release`) or one with the `webmcp` feature".into());
    }
    let rest = js_sys::Object::assign(&js_sys::Object::new(), &config.into());
    let _ = js_sys::Reflect::delete_property(&rest, &"webmcp".into());
    Ok((rest.into(), publish))
}

impl FamiliarAgent {
    /// The host registered `name`: published when the agent publishes its tools.
    pub(super) fn published(&self, name: &str) {
        #[cfg(feature = "webmcp")]
        if let Some(publisher) = self.webmcp.borrow().as_ref() {
            publisher.publish(name);
        }
        #[cfg(not(feature = "webmcp"))]
        let _ = name;
    }

    /// The host unregistered `name`: taken back from the model context.
    pub(super) fn unpublished(&self, name: &str) {
        #[cfg(feature = "webmcp")]
        if let Some(publisher) = self.webmcp.borrow().as_ref() {
            publisher.unpublish(name);
        }
        #[cfg(not(feature = "webmcp"))]
        let _ = name;
    }
}

#[cfg(feature = "webmcp")]
mod publisher {
    use std::cell::{Cell, RefCell};
    use std::collections::HashMap;
    use std::rc::Rc;

    use wasm_bindgen::JsValue;

    use super::super::js::console_error;
    use crate::app::{Session, Visited};
    use crate::tool::ToolKind;
    use crate::web::published_tools::{Execute, PublishedTool, model_context, publish};

    /// The host's tools in this page's model context.
    pub struct Publisher {
        session: Session,
        context: JsValue,
        published: Rc<RefCell<HashMap<String, PublishedTool>>>,
        /// Until the agent is destroyed: a registration that ends after is taken back.
        live: Rc<Cell<bool>>,
    }

    impl Drop for Publisher {
        fn drop(&mut self) {
            self.live.set(false);
            self.published.borrow_mut().clear();
        }
    }

    impl Publisher {
        /// A publisher for `session`'s host tools; `None` where the browser has no WebMCP.
        pub fn new(session: Session) -> Option<Self> {
            Some(Self {
                session,
                context: model_context()?,
                published: Rc::default(),
                live: Rc::new(Cell::new(true)),
            })
        }

        /// Registers the host tool `name` (again, if it was registered before).
        pub(super) fn publish(&self, name: &str) {
            self.published.borrow_mut().remove(name);
            let catalogue = self.session.host_tools().catalogue();
            let Some(tool) = catalogue.into_iter().find(|t| t.spec.name == name) else {
                return;
            };
            let (session, called) = (self.session.clone(), name.to_owned());
            let execute: Execute = Box::new(move |input| {
                let (session, called) = (session.clone(), called.clone());
                Box::pin(async move {
                    match session.visit(&called, &input).await {
                        Ok(Visited::Ran(result)) => Ok(result),
                        Ok(Visited::Refused(why)) => Err(why),
                        Err(e) => Err(e.to_string()),
                    }
                })
            });
            let (context, published) = (self.context.clone(), Rc::clone(&self.published));
            let (session, live) = (self.session.clone(), Rc::clone(&self.live));
            wasm_bindgen_futures::spawn_local(async move {
                let spec = &tool.spec;
                let read_only = tool.kind == ToolKind::Data;
                let done = publish(
                    &context,
                    &spec.name,
                    &spec.description,
                    &spec.parameters,
                    read_only,
                    execute,
                )
                .await;
                let wanted = || {
                    live.get()
                        && (session.host_tools().catalogue())
                            .iter()
                            .any(|t| t.spec.name == spec.name)
                };
                match done {
                    // Kept only while the agent lives and the host still has the tool;
                    // else dropped, which takes it back.
                    Ok(registered) if wanted() => {
                        published.borrow_mut().insert(spec.name.clone(), registered);
                    }
                    Ok(_) => {}
                    Err(why) => console_error(&format!(
                        "webmcp: the browser did not take the tool `{}`: {why}",
                        spec.name
                    )),
                }
            });
        }

        /// Takes the tool `name` back from the model context.
        pub(super) fn unpublish(&self, name: &str) {
            self.published.borrow_mut().remove(name);
        }
    }
}
