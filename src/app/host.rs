//! Tools the host runs: a game's or a page's own functions, given to the session at
//! run time. Each has a schema the model is offered and a [`Handler`] that answers a
//! call by request id; [`HostTools`] is the driver's [`Host`], so every call is
//! awaited under the tool's timeout like any other. A handler runs at most once per
//! request id: a repeated id (a resumed run re-sending an action) gets the first
//! answer. [`Channel`] ([`channel`]) answers calls over messages instead (seed 003's
//! `function_call` / `function_result`), for an iframe, an extension port or a socket;
//! [`super::normalize_origin`] reads the origin an iframe is at.
//! What a channel answers is another party's words unless the host says otherwise
//! ([`HostTools::register_answered`]): reading it makes later actions ask.

use std::cell::RefCell;
use std::collections::VecDeque;

use crate::base::small_map::SmallMap;
use std::rc::Rc;

use futures::future::{FutureExt, LocalBoxFuture, Shared};
use serde_json::Value;

use crate::llm::ToolSpec;
use crate::llm::message::ToolCall;
use crate::run::driver::Host;
use crate::tool::{Approval, Author, Consequential, RunsOn, ToolInfo, ToolKind};

mod channel;
pub use channel::{Channel, Ignored, Target};

/// Answers one call: the request id and the parsed, checked arguments in; a JSON
/// result or an error message for the model out.
pub type Handler = Rc<dyn Fn(&str, Value) -> LocalBoxFuture<'static, Result<Value, String>>>;

type Answer = Shared<LocalBoxFuture<'static, Result<Value, String>>>;

/// How many answered request ids are remembered for deduplication.
pub(super) const REMEMBERED: usize = 512;

/// What the host says about one of its tools.
#[derive(Debug, Clone, PartialEq)]
pub struct HostTool {
    pub spec: ToolSpec,
    pub kind: ToolKind,
    pub approval: Approval,
    pub timeout_ms: u64,
    /// Who may have written its results, as the host says (`author` in
    /// `registerTool`); unsaid, it depends on who answers: see [`HostTools::register`]
    /// and [`HostTools::register_answered`].
    pub author: Option<Author>,
    /// Which arguments carry consequence (`consequential` in `registerTool`): see
    /// [`crate::tool::ToolInfo::consequential`].
    pub consequential: Vec<Consequential>,
}

/// Why a host tool could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostToolError {
    #[error("a tool needs a name of 1 to 64 letters, digits, `_` or `-`, got `{0}`")]
    BadName(String),
    #[error("`{tool}`'s parameters must be a JSON Schema of type \"object\": {reason}")]
    BadSchema { tool: String, reason: String },
    #[error("`{tool}`'s timeout must be 1 to 600000 ms, got {ms}")]
    BadTimeout { tool: String, ms: u64 },
}

impl HostTool {
    /// Checks what a host gave: a name models accept, an object schema, a timeout
    /// within reason.
    pub fn check(&self) -> Result<(), HostToolError> {
        let name = &self.spec.name;
        if !is_name(name) {
            return Err(HostToolError::BadName(name.clone()));
        }
        crate::base::json::schema::check_schema(&self.spec.parameters).map_err(|reason| {
            HostToolError::BadSchema {
                tool: name.clone(),
                reason,
            }
        })?;
        if !(1..=600_000).contains(&self.timeout_ms) {
            return Err(HostToolError::BadTimeout {
                tool: name.clone(),
                ms: self.timeout_ms,
            });
        }
        Ok(())
    }
}

/// Whether `name` can name a tool or an agent: 1 to 64 letters, digits, `_` or `-`
/// (what model APIs accept as a function name).
pub(super) fn is_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The host's tools and the answers given so far.
#[derive(Default)]
pub struct HostTools {
    tools: RefCell<SmallMap<String, (HostTool, Handler)>>,
    answers: RefCell<VecDeque<(String, Answer)>>,
}

impl HostTools {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) a tool the host answers with its own function. Unless the
    /// tool names its author, its look-ups' results are another party's (a host's data
    /// may carry what its players wrote) and its actions' results the host's own report
    /// of what it did ([`Author::default_for`] its kind).
    pub fn register(&self, mut tool: HostTool, handler: Handler) -> Result<(), HostToolError> {
        tool.author.get_or_insert(Author::default_for(tool.kind));
        self.insert(tool, handler)
    }

    /// Adds (or replaces) a tool whose calls another party answers over a channel (an
    /// iframe, a port, a socket: see [`Channel::handler`]). Whatever its kind, its
    /// results are that party's words unless the tool says [`Author::Own`]: reading one
    /// makes the conversation's later actions ask, so a frame cannot put instructions
    /// in an action's result and have the next action run on them unasked.
    pub fn register_answered(
        &self,
        mut tool: HostTool,
        handler: Handler,
    ) -> Result<(), HostToolError> {
        tool.author.get_or_insert(Author::Others);
        self.insert(tool, handler)
    }

    fn insert(&self, tool: HostTool, handler: Handler) -> Result<(), HostToolError> {
        tool.check()?;
        self.tools
            .borrow_mut()
            .insert(tool.spec.name.clone(), (tool, handler));
        Ok(())
    }

    /// Removes a tool; whether it was there.
    pub fn unregister(&self, name: &str) -> bool {
        self.tools.borrow_mut().remove(name).is_some()
    }

    /// The tools as a run is given them.
    pub fn catalogue(&self) -> Vec<ToolInfo> {
        self.tools
            .borrow()
            .values()
            .map(|(tool, _)| ToolInfo {
                spec: tool.spec.clone(),
                kind: tool.kind,
                approval: tool.approval,
                runs_on: RunsOn::Host,
                timeout_ms: tool.timeout_ms,
                author: tool.author.unwrap_or_default(),
                consequential: tool.consequential.clone(),
            })
            .collect()
    }

    /// The answer to `request_id`: the one already given or under way, else a new
    /// call of the handler.
    fn answer(&self, request_id: &str, call: &ToolCall) -> Answer {
        let known = self
            .answers
            .borrow()
            .iter()
            .find(|(id, _)| id == request_id)
            .map(|(_, answer)| answer.clone());
        if let Some(answer) = known {
            return answer;
        }
        let answer = self.start(request_id, call).shared();
        let mut answers = self.answers.borrow_mut();
        if answers.len() >= REMEMBERED {
            answers.pop_front();
        }
        answers.push_back((request_id.to_owned(), answer.clone()));
        answer
    }

    fn start(
        &self,
        request_id: &str,
        call: &ToolCall,
    ) -> LocalBoxFuture<'static, Result<Value, String>> {
        let handler = self
            .tools
            .borrow()
            .get(call.name.as_str())
            .map(|(tool, handler)| (tool.spec.parameters.clone(), Rc::clone(handler)));
        let Some((schema, handler)) = handler else {
            let error = format!("there is no host tool named `{}`", call.name);
            return Box::pin(async move { Err(error) });
        };
        let args = crate::tool::parse_arguments(&call.name, &call.arguments)
            .map_err(|e| e.to_string())
            .and_then(|args| {
                crate::base::json::schema::validate(&schema, &args)
                    .map(|()| args)
                    .map_err(|e| format!("invalid arguments: {e}"))
            });
        match args {
            Ok(args) => handler(request_id, args),
            Err(error) => Box::pin(async move { Err(error) }),
        }
    }
}

impl Host for HostTools {
    fn call<'a>(
        &'a self,
        request_id: &'a str,
        call: &'a ToolCall,
    ) -> LocalBoxFuture<'a, Result<Value, String>> {
        Box::pin(self.answer(request_id, call))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;
    use serde_json::json;
    use std::cell::Cell;

    fn tool(name: &str) -> HostTool {
        HostTool {
            spec: ToolSpec {
                name: name.into(),
                description: "Spawns a monster.".into(),
                parameters: json!({
                    "type": "object",
                    "properties": {"kind": {"type": "string"}},
                    "required": ["kind"]
                }),
            },
            kind: ToolKind::Action,
            approval: Approval::Auto,
            timeout_ms: 1_000,
            author: None,
            consequential: Vec::new(),
        }
    }

    fn call(id: &str, arguments: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "spawn".into(),
            arguments: arguments.into(),
        }
    }

    #[test]
    fn a_handler_runs_once_per_request_id_and_a_repeat_gets_the_first_answer() {
        let host = HostTools::new();
        let runs = Rc::new(Cell::new(0));
        let counter = Rc::clone(&runs);
        let handler: Handler = Rc::new(move |id, args| {
            counter.set(counter.get() + 1);
            let answer = json!({ "id": id, "spawned": args["kind"] });
            Box::pin(async move { Ok(answer) })
        });
        host.register(tool("spawn"), handler).unwrap();
        let first = block_on(host.call("r1", &call("c1", r#"{"kind": "goblin"}"#)));
        let again = block_on(host.call("r1", &call("c1", r#"{"kind": "troll"}"#)));
        assert_eq!(first, Ok(json!({"id": "r1", "spawned": "goblin"})));
        assert_eq!(again, first);
        assert_eq!(runs.get(), 1);
        block_on(host.call("r2", &call("c1", r#"{"kind": "troll"}"#))).unwrap();
        assert_eq!(runs.get(), 2);
    }

    #[test]
    fn arguments_are_checked_against_the_tool_schema_before_the_handler_runs() {
        let host = HostTools::new();
        let handler: Handler = Rc::new(|_, _| Box::pin(async { Ok(Value::Null) }));
        host.register(tool("spawn"), handler).unwrap();
        let error = block_on(host.call("r1", &call("c1", r#"{"kind": 3}"#))).unwrap_err();
        assert_eq!(error, "invalid arguments: `kind` must be a string, got 3");
        let error = block_on(host.call("r2", &call("c1", "{}"))).unwrap_err();
        assert_eq!(error, "invalid arguments: `kind` is required");
        let unknown = ToolCall {
            name: "vanish".into(),
            ..call("c1", "{}")
        };
        let error = block_on(host.call("r3", &unknown)).unwrap_err();
        assert_eq!(error, "there is no host tool named `vanish`");
    }

    #[test]
    fn a_tool_with_a_bad_name_schema_or_timeout_is_refused() {
        let host = HostTools::new();
        let handler: Handler = Rc::new(|_, _| Box::pin(async { Ok(Value::Null) }));
        let mut bad = tool("spawn monsters");
        assert!(matches!(
            host.register(bad.clone(), Rc::clone(&handler)),
            Err(HostToolError::BadName(_))
        ));
        bad.spec.name = "spawn".into();
        bad.spec.parameters = json!({"type": "string"});
        assert!(matches!(
            host.register(bad.clone(), Rc::clone(&handler)),
            Err(HostToolError::BadSchema { .. })
        ));
        bad.spec.parameters = json!({"type": "object"});
        bad.timeout_ms = 0;
        assert!(matches!(
            host.register(bad, handler),
            Err(HostToolError::BadTimeout { .. })
        ));
        assert!(host.catalogue().is_empty());
    }
}
