//! The registry: the tools an agent may use, each erased once, privately, when it is
//! registered. It hands their schemas to the model, governs each by its policy
//! (approval, author, timeout, a describer and a judge for the card that asks a
//! person), and turns every way a call can go wrong into a [`ToolError`]. The typed
//! [`Tool`] and its policy types live in the parent module.

use std::future::Future;
use std::rc::Rc;

use futures::future::LocalBoxFuture;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::base::small_map::SmallMap;
use crate::llm::ToolSpec;
use crate::llm::message::ToolCall;
#[cfg(feature = "store")]
use crate::tool::ledger::{self, Ledger};
use crate::tool::{
    Approval, Author, CallContext, Consequential, DEFAULT_TOOL_TIMEOUT_MS, RunsOn, Tool, ToolError,
    ToolInfo, ToolKind, Valued, parameters_schema,
};

type ErasedCall =
    Box<dyn Fn(Value, CallContext) -> LocalBoxFuture<'static, Result<Value, ToolError>>>;

struct Entry {
    info: ToolInfo,
    call: ErasedCall,
}

/// Says in plain words what a call would do, from its arguments, for the card that
/// asks a person; `None` when it cannot tell.
pub type Describer = Rc<dyn Fn(&Value) -> Option<String>>;

/// What a call reaches beyond its tool's policy, for the grants a person gives on a
/// card ("Allow for this task", a standing permission on a site): judged from what it
/// acts on (a page action: the element as the page was last read).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reach {
    /// The site it acts on (`https://shop.example`), when it acts on one: grants hold
    /// for one site.
    pub site: Option<String>,
    /// Why it asks a person every time, whatever they granted before (it submits,
    /// buys, deletes, sends or signs out); `None`: a grant may cover it.
    pub always_asks: Option<String>,
    /// Whether it is of a harmless kind (it shows or moves to something) that a
    /// standing permission on its site may cover.
    pub standing: bool,
    /// What it acts with, read off its target: the text typed, the option chosen,
    /// the name of the button pressed, a link's destination on another site. Each is
    /// traced to its source before a grant may cover the call.
    pub values: Vec<Valued>,
}

/// Judges a call's [`Reach`] from its arguments.
pub type Judge = Rc<dyn Fn(&Value) -> Reach>;

/// The tools an agent may use.
#[derive(Default)]
pub struct ToolRegistry {
    tools: SmallMap<String, Entry>,
    describers: SmallMap<String, Describer>,
    judges: SmallMap<String, Judge>,
    /// Look-ups a run may answer again from their first answer, until its next action.
    cached: Vec<String>,
    /// Tools another registry runs ([`ToolRegistry::adopt`]), under its own ledger.
    adopted: Vec<String>,
    /// Counters of the writes made to what kept look-ups read ([`ToolRegistry::watch_writes`]).
    #[cfg(feature = "store")]
    watched: Vec<Rc<dyn Fn() -> u64>>,
    #[cfg(feature = "store")]
    ledger: Option<Ledger>,
}

impl ToolRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool, replacing any tool of the same name.
    pub fn register<T: Tool>(&mut self, tool: T) -> &mut Self {
        let tool = Rc::new(tool);
        let description = tool.description();
        self.register_with(
            T::NAME,
            T::KIND,
            description,
            T::parameters(),
            move |args: T::Args, cx| {
                let tool = Rc::clone(&tool);
                async move { tool.call(args, cx).await }
            },
        );
        if let Some(author) = T::AUTHOR {
            self.set_author(T::NAME, author);
        }
        self
    }

    /// Adds a tool made of a function of typed arguments, replacing any tool of the
    /// same name. Tools with no state of their own are shortest written this way.
    pub fn register_fn<A, O, E, F, Fut>(
        &mut self,
        name: &str,
        kind: ToolKind,
        description: impl Into<String>,
        f: F,
    ) -> &mut Self
    where
        A: DeserializeOwned + JsonSchema,
        O: Serialize,
        E: std::fmt::Display,
        F: Fn(A, CallContext) -> Fut + 'static,
        Fut: Future<Output = Result<O, E>> + 'static,
    {
        self.register_with(name, kind, description, parameters_schema::<A>(), f)
    }

    /// [`ToolRegistry::register_fn`] with the arguments' schema given, written down
    /// rather than derived.
    pub fn register_with<A, O, E, F, Fut>(
        &mut self,
        name: &str,
        kind: ToolKind,
        description: impl Into<String>,
        parameters: Value,
        f: F,
    ) -> &mut Self
    where
        A: DeserializeOwned,
        O: Serialize,
        E: std::fmt::Display,
        F: Fn(A, CallContext) -> Fut + 'static,
        Fut: Future<Output = Result<O, E>> + 'static,
    {
        let info = ToolInfo {
            spec: ToolSpec {
                name: name.to_owned(),
                description: description.into(),
                parameters,
            },
            kind,
            approval: Approval::default_for(kind),
            runs_on: RunsOn::Page,
            timeout_ms: DEFAULT_TOOL_TIMEOUT_MS,
            author: Author::default_for(kind),
            consequential: Vec::new(),
        };
        let f = Rc::new(f);
        let tool = name.to_owned();
        let call: ErasedCall = Box::new(move |args, cx| {
            let f = Rc::clone(&f);
            let tool = tool.clone();
            Box::pin(async move { call_typed(&tool, &*f, args, cx).await })
        });
        self.tools.insert(name.to_owned(), Entry { info, call });
        self
    }

    /// Adds a tool the host runs (a game answering from JavaScript, say): its schema
    /// comes from the host, and its calls go to the driver's `Host` with a request id
    /// and the tool's timeout. Called in the page, it fails.
    pub fn register_host(&mut self, spec: ToolSpec, kind: ToolKind, timeout_ms: u64) -> &mut Self {
        let name = spec.name.clone();
        let info = ToolInfo {
            spec,
            kind,
            approval: Approval::default_for(kind),
            runs_on: RunsOn::Host,
            timeout_ms,
            author: Author::default_for(kind),
            consequential: Vec::new(),
        };
        let call: ErasedCall = Box::new(move |_, _| {
            let tool = name.clone();
            Box::pin(async move {
                Err(ToolError::Failed {
                    tool,
                    message: "it runs in the host, not in the page".into(),
                })
            })
        });
        self.tools
            .insert(info.spec.name.clone(), Entry { info, call });
        self
    }

    /// Takes tool `name` of `owner` (a sub-agent's registry) into this one, as seed
    /// 004's composite gathers its sub-agents' tools: with its whole policy (approval,
    /// author, timeout, consequential arguments, describer, judge, caching), its calls
    /// run by `owner`, under `owner`'s ledger when it keeps one (this registry's is not
    /// asked again). Whether `owner` has such a tool.
    pub fn adopt(&mut self, owner: &Rc<ToolRegistry>, name: &str) -> bool {
        let Some(entry) = owner.tools.get(name) else {
            return false;
        };
        let info = entry.info.clone();
        let from = Rc::clone(owner);
        let tool = name.to_owned();
        let call: ErasedCall = Box::new(move |args, cx| {
            let from = Rc::clone(&from);
            let call = ToolCall {
                id: cx.idempotency_key.clone().unwrap_or_default(),
                name: tool.as_str().into(),
                arguments: args.to_string().into(),
            };
            Box::pin(async move { from.call(&call, cx).await })
        });
        if let Some(describer) = owner.describers.get(name) {
            self.describers
                .insert(name.to_owned(), Rc::clone(describer));
        }
        if let Some(judge) = owner.judges.get(name) {
            self.judges.insert(name.to_owned(), Rc::clone(judge));
        }
        if owner.caches(name) {
            self.cached.push(name.to_owned());
            #[cfg(feature = "store")]
            for writes in &owner.watched {
                if !self.watched.iter().any(|w| Rc::ptr_eq(w, writes)) {
                    self.watched.push(Rc::clone(writes));
                }
            }
        }
        self.adopted.push(name.to_owned());
        self.tools.insert(name.to_owned(), Entry { info, call });
        true
    }

    /// Records applied action calls in `ledger`, so a call repeated with the same
    /// idempotency key returns the recorded result instead of acting again.
    #[cfg(feature = "store")]
    pub fn with_ledger(&mut self, ledger: Ledger) -> &mut Self {
        self.ledger = Some(ledger);
        self
    }

    /// Sets who must approve calls to `name`; unknown names are ignored.
    pub fn set_approval(&mut self, name: &str, approval: Approval) -> &mut Self {
        if let Some(entry) = self.tools.get_mut(name) {
            entry.info.approval = approval;
        }
        self
    }

    /// Gives the tool `name` words for what a call would do; unknown names are ignored.
    pub fn set_describer(&mut self, name: &str, describer: Describer) -> &mut Self {
        if self.tools.contains_key(name) {
            self.describers.insert(name.to_owned(), describer);
        }
        self
    }

    /// What `call` would do, in plain words, when its tool can say: read from the
    /// arguments exactly as [`ToolRegistry::call`] reads them (repaired the same way),
    /// so the words are about what will run.
    pub fn describe(&self, call: &ToolCall) -> Option<String> {
        let describer = self.describers.get(call.name.as_str())?;
        describer(&parse_arguments(&call.name, &call.arguments).ok()?)
    }

    /// Gives the tool `name` a judge of what its calls reach, which lets a person's
    /// grants cover them (see [`Reach`]); unknown names are ignored. A tool without
    /// one is covered by no grant but "always" in a conversation.
    pub fn set_judge(&mut self, name: &str, judge: Judge) -> &mut Self {
        if self.tools.contains_key(name) {
            self.judges.insert(name.to_owned(), judge);
        }
        self
    }

    /// What `call` reaches, when its tool has a judge; arguments that cannot be read
    /// reach something unknown, so the call always asks.
    pub fn judge(&self, call: &ToolCall) -> Option<Reach> {
        let judge = self.judges.get(call.name.as_str())?;
        Some(match parse_arguments(&call.name, &call.arguments) {
            Ok(arguments) => judge(&arguments),
            Err(error) => Reach {
                always_asks: Some(error.to_string()),
                ..Reach::default()
            },
        })
    }

    /// Sets who must approve every action registered so far: an operator whose agent
    /// acts on its own, with no person to ask (an NPC), says [`Approval::Auto`] here.
    pub fn set_action_approval(&mut self, approval: Approval) -> &mut Self {
        for entry in self.tools.values_mut() {
            if entry.info.kind == ToolKind::Action {
                entry.info.approval = approval;
            }
        }
        self
    }

    /// Declares which arguments of tool `name` carry consequence (see
    /// [`ToolInfo::consequential`]); no such tool, nothing.
    pub fn set_consequential(&mut self, name: &str, consequential: &[(&str, &str)]) -> &mut Self {
        if let Some(entry) = self.tools.get_mut(name) {
            entry.info.consequential = consequential
                .iter()
                .map(|(argument, means)| Consequential {
                    argument: (*argument).to_owned(),
                    means: (*means).to_owned(),
                })
                .collect();
        }
        self
    }

    /// Says who may have written `name`'s results; unknown names are ignored. Mark a
    /// tool [`Author::Own`] only when nothing another party wrote can reach its result.
    pub fn set_author(&mut self, name: &str, author: Author) -> &mut Self {
        if let Some(entry) = self.tools.get_mut(name) {
            entry.info.author = author;
        }
        self
    }

    /// Lets a run answer look-up `name`, asked again with the same arguments, with its
    /// first answer until the run's next action (seed 000's tool caching): for a tool
    /// that reads what actions change, such as the world's rows.
    pub fn cache_results(&mut self, name: &str) -> &mut Self {
        self.cached.push(name.to_owned());
        self
    }

    /// Whether a run may keep `name`'s answers ([`ToolRegistry::cache_results`]).
    pub fn caches(&self, name: &str) -> bool {
        self.cached.iter().any(|n| n == name)
    }

    /// Watches a count of the writes made to what the kept look-ups read (a store's
    /// [`crate::store::Store::writes`]): when it moves, a run drops the answers it kept,
    /// whoever wrote (another agent acting in the same world, the person).
    #[cfg(feature = "store")]
    pub fn watch_writes(&mut self, writes: Rc<dyn Fn() -> u64>) -> &mut Self {
        self.watched.push(writes);
        self
    }

    /// The watched writes so far, summed: a run's kept answers hold while it stays.
    #[cfg(feature = "store")]
    pub fn writes_seen(&self) -> u64 {
        self.watched
            .iter()
            .fold(0, |sum, writes| sum.wrapping_add(writes()))
    }

    /// Without a store there is nothing to watch: kept answers hold until an action.
    #[cfg(not(feature = "store"))]
    pub fn writes_seen(&self) -> u64 {
        0
    }

    /// Sets how long calls to `name` may take; unknown names are ignored.
    pub fn set_timeout(&mut self, name: &str, ms: u64) -> &mut Self {
        if let Some(entry) = self.tools.get_mut(name) {
            entry.info.timeout_ms = ms;
        }
        self
    }

    /// The tools and their policies, in name order: what a run is given.
    pub fn catalogue(&self) -> Vec<ToolInfo> {
        self.tools.values().map(|e| e.info.clone()).collect()
    }

    /// The schemas to offer the model, in name order.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools.values().map(|e| e.info.spec.clone()).collect()
    }

    /// What tool `name` says it does (its description), if it is registered.
    pub fn description_of(&self, name: &str) -> Option<&str> {
        self.tools
            .get(name)
            .map(|e| e.info.spec.description.as_str())
    }

    pub fn kind_of(&self, name: &str) -> Option<ToolKind> {
        self.tools.get(name).map(|e| e.info.kind)
    }

    /// Records that the action `call` under `key` may have taken effect (it timed
    /// out): a resumed run gets this record back instead of applying it again. A
    /// build without the store has no ledger: the host dedupes by request id.
    #[cfg(not(feature = "store"))]
    pub async fn record_unknown(&self, _call: &ToolCall, _key: &str) -> Result<(), String> {
        Ok(())
    }

    /// Records that the action `call` under `key` may have taken effect (it timed
    /// out): a resumed run gets this record back instead of applying it again.
    #[cfg(feature = "store")]
    pub async fn record_unknown(&self, call: &ToolCall, key: &str) -> Result<(), String> {
        let Some(ledger) = &self.ledger else {
            return Ok(());
        };
        if self.kind_of(&call.name) != Some(ToolKind::Action) {
            return Ok(());
        }
        let outcome = serde_json::json!({
            "outcome": "unknown",
            "note": "an earlier attempt timed out and may have taken effect",
        });
        let recorded = ledger.record(key, &call.name, &outcome).await;
        recorded.map_err(|e| e.to_string())
    }

    /// Runs one call; every failure comes back as a [`ToolError`], never a panic.
    pub async fn call(&self, call: &ToolCall, cx: CallContext) -> Result<Value, ToolError> {
        let entry = self
            .tools
            .get(call.name.as_str())
            .ok_or_else(|| ToolError::Unknown(call.name.to_string()))?;
        let args = parse_arguments(&call.name, &call.arguments)?;
        #[cfg(feature = "store")]
        if let (Some(ledger), ToolKind::Action, Some(key), false) = (
            &self.ledger,
            entry.info.kind,
            &cx.idempotency_key,
            self.adopted.iter().any(|a| *a == call.name),
        ) {
            let key = key.clone();
            return ledger::once(ledger, &key, call, (entry.call)(args, cx)).await;
        }
        (entry.call)(args, cx).await
    }
}

async fn call_typed<A, O, E, Fut>(
    tool: &str,
    f: &dyn Fn(A, CallContext) -> Fut,
    args: Value,
    cx: CallContext,
) -> Result<Value, ToolError>
where
    A: DeserializeOwned,
    O: Serialize,
    E: std::fmt::Display,
    Fut: Future<Output = Result<O, E>>,
{
    let args: A = crate::base::json::from_value(args).map_err(|e| ToolError::InvalidArguments {
        tool: tool.to_owned(),
        reason: e.to_string(),
    })?;
    let output = f(args, cx).await.map_err(|e| ToolError::Failed {
        tool: tool.to_owned(),
        message: e.to_string(),
    })?;
    crate::base::json::to_value(&output).map_err(|e| ToolError::Failed {
        tool: tool.to_owned(),
        message: format!("its result could not be encoded: {e}"),
    })
}

/// A call's arguments as JSON: empty means `{}`; broken JSON (a raw newline in a
/// string, a missing brace) goes through the same repair as the model's other output
/// before it is refused.
pub(crate) fn parse_arguments(tool: &str, text: &str) -> Result<Value, ToolError> {
    let text = if text.trim().is_empty() { "{}" } else { text };
    serde_json::from_str(text).or_else(|error| {
        crate::base::json::repair(text)
            .ok()
            .and_then(|repaired| serde_json::from_str(&repaired).ok())
            .ok_or_else(|| ToolError::InvalidArguments {
                tool: tool.to_owned(),
                reason: format!("not valid JSON ({error})"),
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::NoArgs;
    use futures::executor::block_on;
    use serde_json::json;

    #[derive(serde::Deserialize, JsonSchema)]
    struct AddArgs {
        /// The first number.
        a: i64,
        b: i64,
    }

    struct Add;

    impl Tool for Add {
        const NAME: &'static str = "add";
        const KIND: ToolKind = ToolKind::Data;
        type Args = AddArgs;
        type Output = i64;
        type Error = String;

        fn description(&self) -> String {
            "Adds two numbers.".into()
        }

        async fn call(&self, args: AddArgs, _: CallContext) -> Result<i64, String> {
            args.a.checked_add(args.b).ok_or_else(|| "overflow".into())
        }
    }

    fn registry() -> ToolRegistry {
        let mut registry = ToolRegistry::new();
        registry.register(Add);
        registry
    }

    fn call(name: &str, arguments: &str) -> Result<Value, ToolError> {
        let call = ToolCall {
            id: "1".into(),
            name: name.into(),
            arguments: arguments.into(),
        };
        block_on(registry().call(&call, CallContext::default()))
    }

    #[test]
    fn a_valid_call_returns_the_typed_output_as_json() {
        assert_eq!(call("add", r#"{"a": 2, "b": 3}"#), Ok(json!(5)));
    }

    #[test]
    fn the_schema_comes_from_the_argument_type() {
        let specs = registry().specs();
        let parameters = &specs[0].parameters;
        assert_eq!(parameters["type"], "object");
        assert_eq!(
            parameters["properties"]["a"]["description"],
            "The first number."
        );
        assert_eq!(parameters["required"], json!(["a", "b"]));
        assert!(parameters.get("$schema").is_none());
    }

    #[test]
    fn arguments_with_a_raw_newline_or_a_missing_brace_are_repaired_before_the_call() {
        assert_eq!(call("add", "{\"a\": 2, \"b\": 3"), Ok(json!(5)));
        assert_eq!(call("add", "{'a': 2, 'b': 3,}"), Ok(json!(5)));
    }

    #[test]
    fn every_bad_call_is_a_tool_error() {
        assert_eq!(call("sub", "{}"), Err(ToolError::Unknown("sub".into())));
        assert!(matches!(
            call("add", "{oops"),
            Err(ToolError::InvalidArguments { .. })
        ));
        assert!(matches!(
            call("add", r#"{"a": 1}"#),
            Err(ToolError::InvalidArguments { .. })
        ));
        let overflow = call("add", &format!(r#"{{"a": {}, "b": 1}}"#, i64::MAX));
        assert_eq!(
            overflow.map_err(|e| e.to_string()),
            Err("`add` failed: overflow".into())
        );
    }

    #[test]
    fn empty_argument_text_means_no_arguments() {
        let mut registry = ToolRegistry::new();
        struct Ping;
        impl Tool for Ping {
            const NAME: &'static str = "ping";
            const KIND: ToolKind = ToolKind::Data;
            type Args = NoArgs;
            type Output = &'static str;
            type Error = String;
            fn description(&self) -> String {
                "Pong.".into()
            }
            async fn call(&self, _: NoArgs, _: CallContext) -> Result<&'static str, String> {
                Ok("pong")
            }
        }
        registry.register(Ping);
        let call = ToolCall {
            id: "1".into(),
            name: "ping".into(),
            arguments: " ".into(),
        };
        assert_eq!(
            block_on(registry.call(&call, CallContext::default())),
            Ok(json!("pong"))
        );
    }
}
