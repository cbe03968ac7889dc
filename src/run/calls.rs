//! The model's calls as the run takes them, before anything is asked or run: each
//! call gets an id no other call of its reply has, and its arguments are read once —
//! repaired as the registry would repair them, and written back as the JSON that will
//! run — so the transcript, the approval card, the describer and the tool all see the
//! same arguments. What a person approved is checked again when the call runs.

use std::collections::BTreeSet;

use serde_json::Value;

use super::Invocation;
use crate::base::text::Text;
use crate::llm::message::ToolCall;
use crate::tool::{RunsOn, ToolError, ToolInfo, parse_arguments};

/// `calls` with unique ids (a repeated or empty id gets a suffix that no other call
/// of the reply has) and their arguments as the JSON text that will run: broken JSON
/// is replaced by its repair; arguments that cannot be read even so are left as the
/// model wrote them, and [`invalid_arguments`] refuses them before anyone is asked.
pub(super) fn normalized(mut calls: Vec<ToolCall>) -> Vec<ToolCall> {
    // Most replies give each call an id of its own: they keep them, with nothing made.
    let distinct = calls.iter().enumerate().all(|(index, call)| {
        !call.id.trim().is_empty() && calls.iter().take(index).all(|c| c.id != call.id)
    });
    if !distinct {
        let given: Vec<Text> = calls.iter().map(|c| c.id.clone()).collect();
        let mut taken: BTreeSet<String> = BTreeSet::new();
        for (index, call) in calls.iter_mut().enumerate() {
            call.id = unique_id(&call.id, index, &given, &mut taken).into();
        }
    }
    for call in &mut calls {
        // Text that reads as JSON already is what runs (the registry tries it as it is
        // first); anything else is replaced by its repair.
        let readable = serde_json::from_str::<Value>(&call.arguments).is_ok();
        if let (false, Ok(value)) = (readable, parse_arguments(&call.name, &call.arguments)) {
            call.arguments = value.to_string().into();
        }
    }
    calls
}

/// `id` if no earlier call took it, else the first `{id}_{n}` that no call of the
/// reply has (given or made), so a model's own later id is never shadowed.
fn unique_id(id: &str, index: usize, given: &[Text], taken: &mut BTreeSet<String>) -> String {
    let base = if id.trim().is_empty() {
        format!("call_{index}")
    } else {
        id.to_owned()
    };
    let free = |candidate: &String, taken: &BTreeSet<String>| {
        !taken.contains(candidate) && (candidate == id || !given.iter().any(|g| g == candidate))
    };
    let mut candidate = base.clone();
    let mut n = 1;
    while !free(&candidate, taken) {
        n += 1;
        candidate = format!("{base}_{n}");
    }
    taken.insert(candidate.clone());
    candidate
}

/// Why `call`'s arguments cannot run, found before any approval: they are not JSON
/// even once repaired, not an object, or (for a host's tool) not what its schema asks,
/// checked as the host checks them.
pub(super) fn invalid_arguments(call: &ToolCall, info: Option<&ToolInfo>) -> Option<ToolError> {
    let value = match parse_arguments(&call.name, &call.arguments) {
        Ok(value) => value,
        Err(error) => return Some(error),
    };
    let invalid = |reason: String| ToolError::InvalidArguments {
        tool: call.name.to_string(),
        reason,
    };
    if !value.is_object() {
        return Some(invalid("the arguments must be a JSON object".into()));
    }
    let info = info.filter(|t| t.runs_on == RunsOn::Host)?;
    crate::base::json::schema::validate(&info.spec.parameters, &value)
        .err()
        .map(invalid)
}

/// The arguments `call` would run with, as the registry and the host read them.
pub(super) fn arguments_of(call: &ToolCall) -> Option<Value> {
    parse_arguments(&call.name, &call.arguments).ok()
}

impl Invocation {
    /// Why this call may not run now: a person approved other arguments than the
    /// ones it would run with (compared as values, not as text).
    pub fn approval_broken(&self) -> Option<ToolError> {
        let approved = self.approved.as_ref()?;
        if arguments_of(&self.call).as_ref() == Some(&**approved) {
            return None;
        }
        Some(ToolError::Refused {
            tool: self.call.name.to_string(),
            reason: format!(
                "its arguments {} are not the ones approved ({approved}); nothing was run",
                self.call.arguments
            ),
        })
    }
}
