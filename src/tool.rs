//! Tools and the registry that offers them to the model.
//!
//! A tool is typed at the edge — [`Tool::Args`] derives its JSON Schema, its output
//! serializes — and erased once, privately, when registered. The registry hands the
//! schemas to the model and turns every way a call can go wrong (unknown tool, bad
//! arguments, a failing tool) into a [`ToolError`] the model reads on its next turn.
//! Boundaries, approvals and idempotency keys arrive with the agent core.

use std::collections::BTreeMap;
use std::future::Future;
use std::rc::Rc;

use futures::future::LocalBoxFuture;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::llm::ToolSpec;
use crate::message::ToolCall;

/// Whether a tool only reads the world or changes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolKind {
    /// Read-only; several may run at once.
    Data,
    /// Changes the world; one per step.
    Action,
}

/// A typed tool.
pub trait Tool: 'static {
    /// The name the model calls it by.
    const NAME: &'static str;
    const KIND: ToolKind;
    type Args: DeserializeOwned + JsonSchema;
    type Output: Serialize;
    type Error: std::fmt::Display;

    /// What the tool does, for the model.
    fn description(&self) -> String;

    fn call(&self, args: Self::Args) -> impl Future<Output = Result<Self::Output, Self::Error>>;
}

/// Arguments for a tool that takes none.
#[derive(Debug, Clone, Copy, Default, serde::Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// A call that did not produce a result. All of these go back to the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    #[error("there is no tool named `{0}`")]
    Unknown(String),
    #[error("invalid arguments for `{tool}`: {reason}")]
    InvalidArguments { tool: String, reason: String },
    #[error("`{tool}` failed: {message}")]
    Failed { tool: String, message: String },
}

type ErasedCall = Box<dyn Fn(Value) -> LocalBoxFuture<'static, Result<Value, ToolError>>>;

struct Entry {
    spec: ToolSpec,
    kind: ToolKind,
    call: ErasedCall,
}

/// The tools an agent may use.
#[derive(Default)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Entry>,
}

impl ToolRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool, replacing any tool of the same name.
    pub fn register<T: Tool>(&mut self, tool: T) -> &mut Self {
        let tool = Rc::new(tool);
        let spec = ToolSpec {
            name: T::NAME.to_owned(),
            description: tool.description(),
            parameters: parameters_schema::<T::Args>(),
        };
        let call: ErasedCall = Box::new(move |args| {
            let tool = Rc::clone(&tool);
            Box::pin(async move { call_typed(&*tool, args).await })
        });
        self.tools.insert(
            T::NAME.to_owned(),
            Entry {
                spec,
                kind: T::KIND,
                call,
            },
        );
        self
    }

    /// The schemas to offer the model, in name order.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools.values().map(|e| e.spec.clone()).collect()
    }

    pub fn kind_of(&self, name: &str) -> Option<ToolKind> {
        self.tools.get(name).map(|e| e.kind)
    }

    /// Runs one call; every failure comes back as a [`ToolError`], never a panic.
    pub async fn call(&self, call: &ToolCall) -> Result<Value, ToolError> {
        let entry = self
            .tools
            .get(&call.name)
            .ok_or_else(|| ToolError::Unknown(call.name.clone()))?;
        let args = parse_arguments(&call.name, &call.arguments)?;
        (entry.call)(args).await
    }
}

async fn call_typed<T: Tool>(tool: &T, args: Value) -> Result<Value, ToolError> {
    let args: T::Args = serde_json::from_value(args).map_err(|e| ToolError::InvalidArguments {
        tool: T::NAME.to_owned(),
        reason: e.to_string(),
    })?;
    let output = tool.call(args).await.map_err(|e| ToolError::Failed {
        tool: T::NAME.to_owned(),
        message: e.to_string(),
    })?;
    serde_json::to_value(output).map_err(|e| ToolError::Failed {
        tool: T::NAME.to_owned(),
        message: format!("its result could not be encoded: {e}"),
    })
}

/// Parses the model's argument text; an empty string means no arguments.
fn parse_arguments(tool: &str, text: &str) -> Result<Value, ToolError> {
    let text = if text.trim().is_empty() { "{}" } else { text };
    serde_json::from_str(text).map_err(|e| ToolError::InvalidArguments {
        tool: tool.to_owned(),
        reason: format!("not valid JSON ({e})"),
    })
}

/// The JSON Schema of `A` as a function's `parameters`: an object schema without the
/// meta keys models do not need.
fn parameters_schema<A: JsonSchema>() -> Value {
    let mut schema = schemars::schema_for!(A).to_value();
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
        object.remove("title");
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;
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

        async fn call(&self, args: AddArgs) -> Result<i64, String> {
            args.a.checked_add(args.b).ok_or_else(|| "overflow".into())
        }
    }

    fn registry() -> ToolRegistry {
        let mut registry = ToolRegistry::new();
        registry.register(Add);
        registry
    }

    fn call(name: &str, arguments: &str) -> Result<Value, ToolError> {
        block_on(registry().call(&ToolCall {
            id: "1".into(),
            name: name.into(),
            arguments: arguments.into(),
        }))
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
            async fn call(&self, _: NoArgs) -> Result<&'static str, String> {
                Ok("pong")
            }
        }
        registry.register(Ping);
        let call = ToolCall {
            id: "1".into(),
            name: "ping".into(),
            arguments: " ".into(),
        };
        assert_eq!(block_on(registry.call(&call)), Ok(json!("pong")));
    }
}
