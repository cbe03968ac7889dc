//! A character, compiled: its identity and enabled workflows, checked as a whole once
//! [`super::file`] has read the file's sections. Every problem is reported with its
//! JSON path — a
//! `next_state` naming no state, a pattern that does not compile or is too large, a
//! `{context.field}` placeholder naming no field — so an author can fix the file in
//! one pass. The file as a whole stays within [`super::limits`] (counts, sizes, and
//! the compiled size of all its patterns together), and `regex-lite` matches in
//! linear time, so a hostile file cannot stall the page.

use std::collections::BTreeSet;

use regex_lite::Regex;
use serde_json::{Map, Value};

use super::file::{CharacterFile, CreateDef, Identity, LoadError, Note, TriggersDef, WorkflowDef};
use super::limits::{self, MAX_FILE_BYTES, PatternBudget};
/// The next state that completes a transaction.
pub const COMPLETED: &str = "completed";

/// Compiled triggers.
#[derive(Debug, Clone)]
pub struct Matcher {
    pub patterns: Vec<Regex>,
    /// Lower-cased.
    pub keywords: Vec<String>,
    pub llm: bool,
}

/// What a state does when its triggers match.
#[derive(Debug, Clone)]
pub enum Action {
    Create(CreateDef),
    Update(Map<String, Value>),
    Complete(Map<String, Value>),
    None,
}

/// What a step says: to the model (the prompt injection), and in character when
/// there is no model (the offline reply).
#[derive(Debug, Clone, Default)]
pub struct Lines {
    pub injection: Option<String>,
    pub offline_reply: Option<String>,
}

impl Lines {
    fn new(injection: &Option<String>, offline_reply: &Option<String>) -> Self {
        Self {
            injection: injection.clone(),
            offline_reply: offline_reply.clone(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct State {
    pub name: String,
    pub matcher: Matcher,
    pub action: Action,
    pub lines: Lines,
    /// The state the transaction moves to; [`COMPLETED`] ends it.
    pub next: String,
    /// The context field a created transaction's price is looked up by.
    pub item_field: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Workflow {
    pub name: String,
    pub transaction_type: String,
    pub description: String,
    pub states: Vec<State>,
    pub cancellation: Option<(Matcher, Lines)>,
    /// Minutes of inactivity before a pending transaction expires.
    pub timeout: Option<(u32, Lines)>,
}

/// A loaded character: its identity and its enabled workflows, compiled, with the
/// rest of its file kept.
#[derive(Debug, Clone)]
pub struct Character {
    pub identity: Identity,
    pub workflows: Vec<Workflow>,
    pub offline_reply: Option<String>,
    /// The file's other top-level sections (backstory, personality…), as written.
    pub sections: Map<String, Value>,
    /// What the file holds that the workflows keep but do not use.
    pub notes: Vec<Note>,
}

impl Character {
    /// Reads and checks a character file; every problem comes back at once. A file
    /// past one of the [`limits`] is refused before any pattern is compiled.
    pub fn from_json(text: &str) -> Result<Self, Vec<LoadError>> {
        if text.len() > MAX_FILE_BYTES {
            return Err(vec![error(
                "$".into(),
                &format!(
                    "the file is {} KiB; a character file is at most {} KiB (MAX_FILE_BYTES)",
                    text.len().div_ceil(1024),
                    MAX_FILE_BYTES / 1024
                ),
            )]);
        }
        let file = CharacterFile::parse(text)?;
        let mut errors = limits::check(&file);
        if !errors.is_empty() {
            return Err(errors);
        }
        let mut budget = PatternBudget::default();
        let mut workflows = Vec::new();
        for (name, def) in &file.workflows {
            let path = format!("workflows.{name}");
            if let Some(workflow) = compile_workflow(name, def, &path, &mut budget, &mut errors)
                && def.enabled
            {
                workflows.push(workflow);
            }
        }
        if errors.is_empty() {
            Ok(Self {
                identity: file.identity,
                workflows,
                offline_reply: file.offline_reply,
                sections: file.sections,
                notes: file.notes,
            })
        } else {
            Err(errors)
        }
    }
}

fn compile_workflow(
    name: &str,
    def: &WorkflowDef,
    path: &str,
    budget: &mut PatternBudget,
    errors: &mut Vec<LoadError>,
) -> Option<Workflow> {
    let before = errors.len();
    if def.enabled && def.states.is_empty() {
        errors.push(error(
            format!("{path}.states"),
            "an enabled workflow needs states",
        ));
    }
    let mut names = BTreeSet::new();
    names.extend(def.states.iter().map(|s| s.name.as_str()));
    let mut states = Vec::new();
    let mut fields = BTreeSet::new();
    fields.insert("price".to_owned());
    for (i, state) in def.states.iter().enumerate() {
        let at = format!("{path}.states[{i}]");
        let matcher = compile_triggers(&state.triggers, &format!("{at}.triggers"), budget, errors);
        fields.extend(matcher.patterns.iter().flat_map(|p| {
            p.capture_names()
                .flatten()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        }));
        let actions = &state.actions;
        let action = match (
            &actions.create_transaction,
            &actions.update_transaction,
            &actions.complete_transaction,
        ) {
            (Some(create), None, None) => {
                fields.extend(create.context_fields.iter().cloned());
                Action::Create(create.clone())
            }
            (None, Some(update), None) => {
                fields.extend(update.context_updates.keys().cloned());
                Action::Update(update.context_updates.clone())
            }
            (None, None, Some(complete)) => {
                fields.extend(complete.context_updates.keys().cloned());
                Action::Complete(complete.context_updates.clone())
            }
            (None, None, None) => Action::None,
            _ => {
                errors.push(error(
                    format!("{at}.actions"),
                    "a state takes one transaction action",
                ));
                Action::None
            }
        };
        if i == 0 && !matches!(action, Action::Create(_)) && def.enabled {
            errors.push(error(
                format!("{at}.actions"),
                "the first state must create the transaction (create_transaction)",
            ));
        }
        let next = match &state.next_state {
            Some(next) if next == COMPLETED || names.contains(next.as_str()) => next.clone(),
            Some(next) => {
                errors.push(error(
                    format!("{at}.next_state"),
                    &format!(
                        "there is no state `{next}` (states: {})",
                        names.iter().copied().collect::<Vec<_>>().join(", ")
                    ),
                ));
                next.clone()
            }
            None => COMPLETED.to_owned(),
        };
        let item_field = match &action {
            Action::Create(create) => item_field(create, &matcher),
            _ => None,
        };
        states.push(State {
            name: state.name.clone(),
            matcher,
            action,
            lines: Lines::new(&actions.prompt_injection, &actions.offline_reply),
            next,
            item_field,
        });
    }
    let cancellation = def.cancellation.as_ref().map(|c| {
        let matcher = compile_triggers(
            &c.triggers,
            &format!("{path}.cancellation.triggers"),
            budget,
            errors,
        );
        (matcher, Lines::new(&c.prompt_injection, &c.offline_reply))
    });
    let timeout = def.timeout.as_ref().map(|t| {
        let lines = Lines::new(&t.prompt_injection, &t.offline_reply);
        (t.duration_minutes, lines)
    });
    if let Some(timeout) = &def.timeout {
        if timeout.duration_minutes == 0 {
            errors.push(error(
                format!("{path}.timeout.duration_minutes"),
                "must be at least 1",
            ));
        }
        if timeout.action != "auto_cancel" {
            errors.push(error(
                format!("{path}.timeout.action"),
                &format!("unknown action `{}`; use auto_cancel", timeout.action),
            ));
        }
    }
    // Every placeholder must name a field some state provides.
    let said = states
        .iter()
        .enumerate()
        .map(|(i, state)| (format!("{path}.states[{i}].actions"), &state.lines))
        .chain(
            cancellation
                .iter()
                .map(|(_, l)| (format!("{path}.cancellation"), l)),
        )
        .chain(timeout.iter().map(|(_, l)| (format!("{path}.timeout"), l)));
    for (at, lines) in said {
        let texts = [
            ("prompt_injection", &lines.injection),
            ("offline_reply", &lines.offline_reply),
        ];
        for (name, text) in texts {
            for field in placeholders(text.as_deref().unwrap_or_default()) {
                if !fields.contains(field) {
                    errors.push(error(
                        format!("{at}.{name}"),
                        &format!("`{{context.{field}}}` names no field of this workflow"),
                    ));
                }
            }
        }
    }
    (errors.len() == before).then(|| Workflow {
        name: name.to_owned(),
        transaction_type: def
            .transaction_type
            .clone()
            .unwrap_or_else(|| name.to_owned()),
        description: def.description.clone(),
        states,
        cancellation,
        timeout,
    })
}

/// The field a price is looked up by: the author's `price_field`, else the first
/// named group of the state's patterns, else its first context field but `price`.
fn item_field(create: &CreateDef, matcher: &Matcher) -> Option<String> {
    let group = || {
        matcher
            .patterns
            .iter()
            .find_map(|p| p.capture_names().flatten().next().map(str::to_owned))
    };
    let listed = || {
        create
            .context_fields
            .iter()
            .find(|f| f.as_str() != "price")
            .cloned()
    };
    create.price_field.clone().or_else(group).or_else(listed)
}

fn compile_triggers(
    def: &TriggersDef,
    path: &str,
    budget: &mut PatternBudget,
    errors: &mut Vec<LoadError>,
) -> Matcher {
    let mut patterns = Vec::new();
    for (i, source) in def.intent_patterns.iter().enumerate() {
        match budget.compile(source) {
            Ok(regex) => patterns.extend(regex),
            Err(message) => errors.push(error(format!("{path}.intent_patterns[{i}]"), &message)),
        }
    }
    Matcher {
        patterns,
        keywords: def.keywords.iter().map(|k| k.to_lowercase()).collect(),
        llm: def.llm_classification,
    }
}

fn error(path: String, message: &str) -> LoadError {
    LoadError {
        path,
        message: message.to_owned(),
    }
}

/// The field names of the `{context.field}` placeholders in `text`.
pub fn placeholders(text: &str) -> Vec<&str> {
    text.split("{context.")
        .skip(1)
        .filter_map(|rest| rest.split_once('}').map(|(field, _)| field))
        .collect()
}

/// `text` with each `{context.field}` replaced by the field's value.
pub fn interpolate(text: &str, context: &Map<String, Value>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{context.") {
        let (before, after) = rest.split_at(start);
        out.push_str(before);
        let tail = after.get("{context.".len()..).unwrap_or("");
        match tail.split_once('}') {
            Some((field, remainder)) => {
                match context.get(field) {
                    Some(Value::String(s)) => out.push_str(s),
                    Some(value) => out.push_str(&value.to_string()),
                    None => {
                        out.push_str(after.get(..field.len() + "{context.}".len()).unwrap_or(""))
                    }
                }
                rest = remainder;
            }
            None => {
                out.push_str(after);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}
