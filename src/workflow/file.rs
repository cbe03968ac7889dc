//! A character file as its author writes it: a whole CDL character definition (seed
//! 002) — identity, personality, backstory and whatever else the author keeps there —
//! of which the workflows read `identity`, `workflows` and `offline_reply`. Every
//! other top-level section is kept as it is and reported as a [`Note`], never as an
//! error, so a real CDL file loads. Inside `workflows` the schema is strict: an
//! unknown field is a [`LoadError`] with its full path
//! (`workflows.drink_order.states[0].triggers.intent_pattern`), because a misspelt
//! trigger silently doing nothing is the worst outcome for an author.
//!
//! Checking what the sections mean together (states, patterns, placeholders) is
//! [`super::character`]'s work.

use crate::base::json::Read;
use std::collections::BTreeMap;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::base::json::schema::describe;

/// The sections the workflows read; every other top-level section is kept.
const READ: [&str; 3] = ["identity", "workflows", "offline_reply"];

/// One problem in a character file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct LoadError {
    /// Where, e.g. `workflows.drink_order.states[1].next_state` (`$`: the whole file).
    pub path: String,
    pub message: String,
}

/// Something in a character file the workflows keep but do not use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// Where, e.g. `backstory` or `identity.age`.
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for Note {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// A character file, its sections read.
#[derive(Debug, Clone)]
pub struct CharacterFile {
    pub identity: Identity,
    pub workflows: BTreeMap<String, WorkflowDef>,
    /// What the character says, with no model, when no workflow has a reply.
    pub offline_reply: Option<String>,
    /// The other top-level sections, as written.
    pub sections: Map<String, Value>,
    pub notes: Vec<Note>,
}

impl CharacterFile {
    /// Reads the file's sections; every problem comes back at once, with its path.
    pub fn parse(text: &str) -> Result<Self, Vec<LoadError>> {
        let value: Value = serde_json::from_str(text).map_err(|e| {
            vec![LoadError {
                path: "$".into(),
                message: format!("the file is not JSON: {e}"),
            }]
        })?;
        let Value::Object(mut sections) = value else {
            return Err(vec![LoadError {
                path: "$".into(),
                message: format!("expected an object, got {}", describe(&value)),
            }]);
        };
        let mut errors = Vec::new();
        let identity = match sections.remove("identity") {
            Some(value) => section::<Identity>(value, "identity", &mut errors),
            None => {
                errors.push(LoadError {
                    path: "identity".into(),
                    message: "a character needs an identity with a name".into(),
                });
                None
            }
        };
        let workflows = sections
            .remove("workflows")
            .map_or(Some(BTreeMap::new()), |value| {
                section(value, "workflows", &mut errors)
            });
        let offline_reply = match sections.remove("offline_reply") {
            None | Some(Value::Null) => Some(None),
            Some(value) => section::<String>(value, "offline_reply", &mut errors).map(Some),
        };
        let (Some(identity), Some(workflows), Some(offline_reply)) =
            (identity, workflows, offline_reply)
        else {
            return Err(errors);
        };
        let mut notes: Vec<Note> = identity
            .other
            .keys()
            .map(|key| Note {
                path: format!("identity.{key}"),
                message: "kept; the workflows do not use it".into(),
            })
            .collect();
        notes.extend(
            sections
                .keys()
                .filter(|k| !READ.contains(&k.as_str()))
                .map(|key| Note {
                    path: key.clone(),
                    message: "a section the workflows do not use; kept as written".into(),
                }),
        );
        Ok(Self {
            identity,
            workflows,
            offline_reply,
            sections,
            notes,
        })
    }
}

/// `value` read as a `T`; a problem is pushed with its path under `at`.
fn section<T: DeserializeOwned>(value: Value, at: &str, errors: &mut Vec<LoadError>) -> Option<T> {
    crate::base::json::from_value(value)
        .map_err(|e| {
            let inner = e.path().to_string();
            let path = match inner.as_str() {
                "." => at.to_owned(),
                rest if rest.starts_with('[') => format!("{at}{rest}"),
                rest => format!("{at}.{rest}"),
            };
            errors.push(LoadError {
                path,
                message: e.into_inner().to_string(),
            });
        })
        .ok()
}

/// Who the character is; fields besides these are kept (and noted).
#[derive(Debug, Clone, Read)]
pub struct Identity {
    pub name: String,
    #[serde(default)]
    pub occupation: String,
    #[serde(default)]
    pub personality: String,
    /// Everything else the author wrote about the character.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

#[derive(Debug, Clone, Read)]
#[serde(deny_unknown_fields)]
pub struct WorkflowDef {
    #[serde(default)]
    pub enabled: bool,
    /// Defaults to the workflow's name.
    #[serde(default)]
    pub transaction_type: Option<String>,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub states: Vec<StateDef>,
    #[serde(default)]
    pub cancellation: Option<CancellationDef>,
    #[serde(default)]
    pub timeout: Option<TimeoutDef>,
}

#[derive(Debug, Clone, Read)]
#[serde(deny_unknown_fields)]
pub struct StateDef {
    pub name: String,
    #[serde(default)]
    pub triggers: TriggersDef,
    #[serde(default)]
    pub actions: ActionsDef,
    #[serde(default)]
    pub next_state: Option<String>,
}

/// Every field may be left out.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TriggersDef {
    /// Regexes (case-insensitive); named groups become context fields.
    pub intent_patterns: Vec<String>,
    /// Words that suggest the intent: they trigger when no classifier can decide
    /// (see the module documentation of [`crate::workflow`]).
    pub keywords: Vec<String>,
    /// When only keywords match and a model is there, ask it.
    pub llm_classification: bool,
}

/// Every field may be left out.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ActionsDef {
    pub create_transaction: Option<CreateDef>,
    pub update_transaction: Option<UpdateDef>,
    pub complete_transaction: Option<UpdateDef>,
    pub prompt_injection: Option<String>,
    /// What the character says with no model (the demo's rules mode), in character.
    pub offline_reply: Option<String>,
}

#[derive(Debug, Clone, Default, Read)]
#[serde(deny_unknown_fields)]
pub struct CreateDef {
    #[serde(default)]
    pub context_fields: Vec<String>,
    /// Prices by the (lower-cased) value of the price field.
    #[serde(default)]
    pub price_lookup: BTreeMap<String, Value>,
    /// The field the price is looked up by: by default the first named group of the
    /// state's patterns, else the first context field other than `price`.
    #[serde(default)]
    pub price_field: Option<String>,
    /// The price of anything the lookup lacks.
    #[serde(default = "default_price")]
    pub default_price: Value,
}

fn default_price() -> Value {
    Value::from(5)
}

/// Every field may be left out.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UpdateDef {
    pub context_updates: Map<String, Value>,
}

#[derive(Debug, Clone, Read)]
#[serde(deny_unknown_fields)]
pub struct CancellationDef {
    pub triggers: TriggersDef,
    #[serde(default)]
    pub prompt_injection: Option<String>,
    #[serde(default)]
    pub offline_reply: Option<String>,
}

#[derive(Debug, Clone, Read)]
#[serde(deny_unknown_fields)]
pub struct TimeoutDef {
    pub duration_minutes: u32,
    /// What happens at the timeout; `auto_cancel` (the only one) expires it.
    #[serde(default = "auto_cancel")]
    pub action: String,
    #[serde(default)]
    pub prompt_injection: Option<String>,
    #[serde(default)]
    pub offline_reply: Option<String>,
}

fn auto_cancel() -> String {
    "auto_cancel".into()
}
