//! What a run keeps across its iterations: the plan (steps left after the current
//! decision) and context memory (facts, and follow-ups still owed — "reply to the
//! leader when done"). The model writes both through the built-in `plan` tool; a
//! follow-up is settled when its tool succeeds.

use crate::base::json::{Read, SchemaText};
use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::llm::ToolSpec;

/// The built-in tool through which the model records its plan and memory.
pub const PLAN_TOOL: &str = "plan";

/// Something the run must still do before it is finished.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema, Read, SchemaText)]
pub struct FollowUp {
    /// The action tool that settles it, e.g. `reply_to_message`.
    pub tool: String,
    /// What is owed, e.g. "report back to the leader on message 12".
    pub note: String,
}

/// One step of a plan (seed 000's plan items): what it is for, and, when the model
/// says, the tool and arguments it will use. Written as plain text when it is only
/// words (as plans were before steps named their tool); read from either form.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlanStep {
    pub description: String,
    pub tool: Option<String>,
    pub args: Option<Value>,
}

impl From<&str> for PlanStep {
    fn from(description: &str) -> Self {
        Self {
            description: description.to_owned(),
            ..Self::default()
        }
    }
}

impl PlanStep {
    /// Whether calling `tool` carries out this step: its tool, or (none named) any.
    pub fn done_by(&self, tool: &str) -> bool {
        self.tool.as_deref().is_none_or(|own| own == tool)
    }
}

impl std::fmt::Display for PlanStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.tool, self.description.is_empty()) {
            (Some(tool), true) => write!(f, "{tool}")?,
            (Some(tool), false) => write!(f, "{} ({tool})", self.description)?,
            (None, _) => write!(f, "{}", self.description)?,
        }
        if let Some(args) = &self.args {
            write!(f, " {args}")?;
        }
        Ok(())
    }
}

impl Serialize for PlanStep {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.tool.is_none() && self.args.is_none() {
            return s.serialize_str(&self.description);
        }
        let mut object = serde_json::Map::new();
        object.insert("description".into(), Value::from(self.description.clone()));
        if let Some(tool) = &self.tool {
            object.insert("tool".into(), Value::from(tool.clone()));
        }
        if let Some(args) = &self.args {
            object.insert("args".into(), args.clone());
        }
        object.serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for PlanStep {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match Value::deserialize(d)? {
            Value::String(description) => Ok(Self {
                description,
                ..Self::default()
            }),
            Value::Object(mut fields) => {
                let text = |value: Option<Value>, what: &str| match value {
                    None | Some(Value::Null) => Ok(None),
                    Some(Value::String(text)) => Ok(Some(text)),
                    Some(_) => Err(D::Error::custom(format!("a step's `{what}` is text"))),
                };
                // The seed numbers its items (`step`); the order says as much.
                fields.remove("step");
                let description = text(fields.remove("description"), "description")?;
                let tool = text(fields.remove("tool"), "tool")?;
                let args = match fields.remove("args").or_else(|| fields.remove("arguments")) {
                    None | Some(Value::Null) => None,
                    Some(args @ Value::Object(_)) => Some(args),
                    Some(_) => return Err(D::Error::custom("a step's `args` is an object")),
                };
                if let Some(unknown) = fields.keys().next() {
                    return Err(D::Error::custom(format!(
                        "unknown field `{unknown}` in a step; known: description, tool, args"
                    )));
                }
                if description.is_none() && tool.is_none() {
                    return Err(D::Error::custom("a step needs a description or a tool"));
                }
                Ok(Self {
                    description: description.unwrap_or_default(),
                    tool,
                    args,
                })
            }
            _ => Err(D::Error::custom(
                "a step is text, or {description, tool?, args?}",
            )),
        }
    }
}

// Read by hand (text, or an object), so its schema is written by hand, once: here,
// as text, from which schemars' impl below reads it too.
impl SchemaText for PlanStep {
    const NAME: &'static str = "PlanStep";
    const BODY: &'static str = r#"{"description":"A step: what it is for, in words, or with the tool and arguments it will use.","anyOf":[{"type":"string"},{"type":"object","properties":{"description":{"type":"string"},"tool":{"type":"string"},"args":{"type":"object"}},"additionalProperties":false}]}"#;
}

impl JsonSchema for PlanStep {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        <Self as SchemaText>::NAME.into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        // Through `Value`, whose reader every build has, not one of its own for `Schema`.
        let value: Value = serde_json::from_str(<Self as SchemaText>::BODY).unwrap_or_default();
        schemars::Schema::try_from(value).unwrap_or_default()
    }
}

/// Facts and follow-ups kept for the whole run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Read)]
pub struct ContextMemory {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub facts: BTreeMap<String, Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub owed: Vec<FollowUp>,
}

/// The most facts a conversation carries from one run to the next.
pub const CARRIED_FACTS: usize = 64;
/// The most follow-ups a conversation carries from one run to the next.
pub const CARRIED_OWED: usize = 16;

impl ContextMemory {
    pub fn is_empty(&self) -> bool {
        self.facts.is_empty() && self.owed.is_empty()
    }

    /// This memory for a run that can settle with its tools only what `can` allows:
    /// the facts and those follow-ups, and, apart, the follow-ups it cannot settle
    /// (a reply owed to a leader waits for a trigger that allows replying).
    pub fn split_owed(&self, can: impl Fn(&str) -> bool) -> (Self, Vec<FollowUp>) {
        let (owed, aside) = self.owed.iter().cloned().partition(|f| can(&f.tool));
        let memory = Self {
            facts: self.facts.clone(),
            owed,
        };
        (memory, aside)
    }

    /// What a conversation keeps after a run: the run's memory, then the follow-ups
    /// kept `aside` from it, bounded (the newest facts by key order are dropped first,
    /// then the oldest follow-ups).
    pub fn carried(run: &Self, aside: Vec<FollowUp>) -> Self {
        let mut kept = run.clone();
        for follow_up in aside {
            if !kept.owed.contains(&follow_up) {
                kept.owed.push(follow_up);
            }
        }
        while kept.facts.len() > CARRIED_FACTS {
            kept.facts.pop_last();
        }
        let over = kept.owed.len().saturating_sub(CARRIED_OWED);
        kept.owed.drain(..over);
        kept
    }

    /// A successful call of `tool` settles the first follow-up it was owed for.
    pub fn settle(&mut self, tool: &str) -> Option<FollowUp> {
        let index = self.owed.iter().position(|f| f.tool == tool)?;
        Some(self.owed.remove(index))
    }
}

/// The `plan` tool's arguments.
#[derive(Debug, Clone, Default, PartialEq, JsonSchema, Read, SchemaText)]
#[serde(deny_unknown_fields)]
pub struct PlanUpdate {
    /// The steps left after the action you take now, in order; replaces the old plan.
    #[serde(default)]
    pub steps: Option<Vec<PlanStep>>,
    /// Facts to keep for the rest of this task, e.g. {"battle_id": 3}.
    #[serde(default)]
    pub remember: Option<BTreeMap<String, Value>>,
    /// Things you must still do before the task is finished, each with the action
    /// tool that does it, e.g. a reply to the message that started this.
    #[serde(default)]
    pub owe: Option<Vec<FollowUp>>,
}

/// The `plan` tool as the model sees it.
pub fn plan_tool_spec() -> ToolSpec {
    let parameters = crate::base::json::schema::parameters::<PlanUpdate>();
    ToolSpec {
        name: PLAN_TOOL.into(),
        description: "Record your plan and what to keep in mind: the steps left after \
                      the action you take now, facts to remember, and follow-ups you \
                      owe (such as replying when done). Call it alongside an action."
            .into(),
        parameters,
    }
}

/// Applies a `plan` call to the plan and memory; the error is for the model.
pub fn apply_plan(
    arguments: &str,
    plan: &mut Vec<PlanStep>,
    memory: &mut ContextMemory,
) -> Result<Value, String> {
    let text = if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    };
    let update: PlanUpdate = crate::base::json::from_text(text)
        .map_err(|e| format!("invalid arguments for `plan`: {e}"))?;
    if let Some(steps) = update.steps {
        *plan = steps;
    }
    if let Some(facts) = update.remember {
        memory.facts.extend(facts);
    }
    if let Some(owed) = update.owe {
        for follow_up in owed {
            if !memory.owed.contains(&follow_up) {
                memory.owed.push(follow_up);
            }
        }
    }
    Ok(serde_json::json!({ "plan": plan, "memory": memory }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_tools_schema_written_at_compile_time_is_the_derived_one() {
        let mut derived = schemars::schema_for!(PlanUpdate).to_value();
        if let Some(object) = derived.as_object_mut() {
            object.remove("$schema");
            object.remove("title");
        }
        assert_eq!(plan_tool_spec().parameters, derived);
    }

    #[test]
    fn a_plan_call_replaces_the_steps_and_adds_facts_and_follow_ups() {
        let mut plan = vec![PlanStep {
            description: "old".into(),
            ..PlanStep::default()
        }];
        let mut memory = ContextMemory::default();
        let args = r#"{"steps": ["buy food", "eat"], "remember": {"battle_id": 3},
                       "owe": [{"tool": "reply_to_message", "note": "tell the leader"}]}"#;
        apply_plan(args, &mut plan, &mut memory).unwrap();
        apply_plan(args, &mut plan, &mut memory).unwrap();
        let words: Vec<String> = plan.iter().map(ToString::to_string).collect();
        assert_eq!(words, ["buy food", "eat"]);
        assert_eq!(memory.facts["battle_id"], 3);
        assert_eq!(memory.owed.len(), 1, "the same follow-up is owed once");
        assert_eq!(
            memory.settle("reply_to_message").unwrap().note,
            "tell the leader"
        );
        assert!(memory.owed.is_empty());
    }

    #[test]
    fn a_step_may_name_its_tool_and_arguments_as_the_seeds_plan_items_do() {
        let mut plan = Vec::new();
        let mut memory = ContextMemory::default();
        let args = r#"{"steps": [
            {"step": 2, "tool": "buy_item", "args": {"item": "food"}, "description": "buy food"},
            {"tool": "consume_item"},
            "reply to the leader"]}"#;
        let result = apply_plan(args, &mut plan, &mut memory).unwrap();
        assert_eq!(plan[0].tool.as_deref(), Some("buy_item"));
        assert_eq!(plan[0].args, Some(serde_json::json!({"item": "food"})));
        assert!(plan[0].done_by("buy_item") && !plan[0].done_by("do_work"));
        assert!(
            plan[2].done_by("anything"),
            "a step in words is done by any action"
        );
        assert_eq!(
            plan[0].to_string(),
            r#"buy food (buy_item) {"item":"food"}"#
        );
        // Written back: words as text, the rest as objects; read again the same.
        let written = serde_json::to_value(&plan).unwrap();
        assert_eq!(written[2], "reply to the leader");
        assert_eq!(
            written[1],
            serde_json::json!({"description": "", "tool": "consume_item"})
        );
        assert_eq!(result["plan"], written);
        let read: Vec<PlanStep> = crate::base::json::from_value(written).unwrap();
        assert_eq!(read, plan);
        for bad in [
            r#"{"steps": [{"args": {}}]}"#,
            r#"{"steps": [{"tool": 3}]}"#,
            r#"{"steps": [{"tool": "x", "why": 1}]}"#,
        ] {
            assert!(apply_plan(bad, &mut plan, &mut memory).is_err(), "{bad}");
        }
    }

    #[test]
    fn bad_plan_arguments_are_an_error_for_the_model_and_change_nothing() {
        let keep = PlanStep {
            description: "keep".into(),
            ..PlanStep::default()
        };
        let mut plan = vec![keep.clone()];
        let mut memory = ContextMemory::default();
        let error = apply_plan(r#"{"stepz": []}"#, &mut plan, &mut memory).unwrap_err();
        assert!(error.contains("stepz"), "{error}");
        assert_eq!(plan, [keep]);
    }
}
