//! What a run keeps across its iterations: the plan (steps left after the current
//! decision) and context memory (facts, and follow-ups still owed — "reply to the
//! leader when done"). The model writes both through the built-in `plan` tool; a
//! follow-up is settled when its tool succeeds.

use crate::base::json::fields::read_fields;
use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::llm::ToolSpec;

/// The built-in tool through which the model records its plan and memory.
pub const PLAN_TOOL: &str = "plan";

/// Something the run must still do before it is finished.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct FollowUp {
    /// The action tool that settles it, e.g. `reply_to_message`.
    pub tool: String,
    /// What is owed, e.g. "report back to the leader on message 12".
    pub note: String,
}

read_fields!(FollowUp { tool, note });

/// Facts and follow-ups kept for the whole run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ContextMemory {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub facts: BTreeMap<String, Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub owed: Vec<FollowUp>,
}

read_fields!(ContextMemory { facts = default, owed = default });

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
#[derive(Debug, Clone, Default, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanUpdate {
    /// The steps left after the action you take now, in order; replaces the old plan.
    #[serde(default)]
    pub steps: Option<Vec<String>>,
    /// Facts to keep for the rest of this task, e.g. {"battle_id": 3}.
    #[serde(default)]
    pub remember: Option<BTreeMap<String, Value>>,
    /// Things you must still do before the task is finished, each with the action
    /// tool that does it, e.g. a reply to the message that started this.
    #[serde(default)]
    pub owe: Option<Vec<FollowUp>>,
}

read_fields!(PlanUpdate deny_unknown { steps = default, remember = default, owe = default });

/// [`PlanUpdate`]'s schema as schemars derives it for a tool's parameters (a test
/// holds them equal).
const PLAN_SCHEMA: &str = r##"{"$defs":{"FollowUp":{"description":"Something the run must still do before it is finished.","properties":{"note":{"description":"What is owed, e.g. \"report back to the leader on message 12\".","type":"string"},"tool":{"description":"The action tool that settles it, e.g. `reply_to_message`.","type":"string"}},"required":["tool","note"],"type":"object"}},"additionalProperties":false,"description":"The `plan` tool's arguments.","properties":{"owe":{"default":null,"description":"Things you must still do before the task is finished, each with the action\ntool that does it, e.g. a reply to the message that started this.","items":{"$ref":"#/$defs/FollowUp"},"type":["array","null"]},"remember":{"additionalProperties":true,"default":null,"description":"Facts to keep for the rest of this task, e.g. {\"battle_id\": 3}.","type":["object","null"]},"steps":{"default":null,"description":"The steps left after the action you take now, in order; replaces the old plan.","items":{"type":"string"},"type":["array","null"]}},"type":"object"}"##;

/// The `plan` tool as the model sees it.
pub fn plan_tool_spec() -> ToolSpec {
    let parameters = crate::base::json::schema::written(PLAN_SCHEMA);
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
    plan: &mut Vec<String>,
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
    fn the_plan_tools_written_schema_is_the_derived_one() {
        let mut derived = schemars::schema_for!(PlanUpdate).to_value();
        if let Some(object) = derived.as_object_mut() {
            object.remove("$schema");
            object.remove("title");
        }
        assert_eq!(plan_tool_spec().parameters, derived);
    }

    #[test]
    fn a_plan_call_replaces_the_steps_and_adds_facts_and_follow_ups() {
        let mut plan = vec!["old".to_owned()];
        let mut memory = ContextMemory::default();
        let args = r#"{"steps": ["buy food", "eat"], "remember": {"battle_id": 3},
                       "owe": [{"tool": "reply_to_message", "note": "tell the leader"}]}"#;
        apply_plan(args, &mut plan, &mut memory).unwrap();
        apply_plan(args, &mut plan, &mut memory).unwrap();
        assert_eq!(plan, ["buy food", "eat"]);
        assert_eq!(memory.facts["battle_id"], 3);
        assert_eq!(memory.owed.len(), 1, "the same follow-up is owed once");
        assert_eq!(
            memory.settle("reply_to_message").unwrap().note,
            "tell the leader"
        );
        assert!(memory.owed.is_empty());
    }

    #[test]
    fn bad_plan_arguments_are_an_error_for_the_model_and_change_nothing() {
        let mut plan = vec!["keep".to_owned()];
        let mut memory = ContextMemory::default();
        let error = apply_plan(r#"{"stepz": []}"#, &mut plan, &mut memory).unwrap_err();
        assert!(error.contains("stepz"), "{error}");
        assert_eq!(plan, ["keep"]);
    }
}
