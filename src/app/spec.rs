//! What a host page hands the JS API, read from JSON with every problem named by its
//! path: the agent's configuration (`createAgent`), a tool's description
//! (`registerTool`) and a game event (`trigger`). Pure, so the same checks run
//! natively; the browser layer only turns JavaScript values into JSON first.

use serde_json::{Map, Value};

use crate::json::schema::describe as kind;

use super::Options;
use crate::llm::ToolSpec;
use crate::openai::ModelSettings;
use crate::rules::RulesModel;
use crate::run::{Actor, Boundaries, Observation, Subject, Trigger};
use crate::settings::Backend;
use crate::tool::{Approval, DEFAULT_TOOL_TIMEOUT_MS, ToolKind};

/// One problem with what the host gave, at a path such as `model.url`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Every problem as one message: a line each.
pub fn describe(what: &str, problems: &[Problem]) -> String {
    let lines: Vec<String> = problems.iter().map(|p| format!("  {p}")).collect();
    format!("{what}:\n{}", lines.join("\n"))
}

/// Where the agent's answers come from.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelSpec {
    /// The rules model, with the host's rules (or none: it answers its fallback).
    Rules(RulesModel),
    Proxy(ModelSettings),
}

/// The character to play: given whole, or where to fetch it.
#[derive(Debug, Clone, PartialEq)]
pub enum CharacterSpec {
    File(Value),
    Url(String),
}

/// Built-in tools a host may ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    Clock,
    PageTitle,
    Memory,
}

/// `createAgent`'s configuration, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentSpec {
    pub name: String,
    pub instructions: String,
    pub model: ModelSpec,
    pub options: Options,
    pub character: Option<CharacterSpec>,
    pub store: Backend,
    pub namespace: String,
    /// Keep conversations in `localStorage` (else in memory only).
    pub persist: bool,
    pub builtins: Vec<Builtin>,
}

const DEFAULT_INSTRUCTIONS: &str = "You are a helpful agent. Use your tools when they help; \
    answer briefly.";

/// A reader of one JSON object that collects problems instead of stopping.
struct Fields<'a> {
    object: &'a Map<String, Value>,
    path: String,
    problems: &'a mut Vec<Problem>,
}

impl<'a> Fields<'a> {
    fn new(
        value: &'a Value,
        path: &str,
        problems: &'a mut Vec<Problem>,
        known: &[&str],
    ) -> Option<Self> {
        let Some(object) = value.as_object() else {
            problems.push(Problem {
                path: path.to_owned(),
                message: format!("expected an object, got {}", kind(value)),
            });
            return None;
        };
        for key in object.keys().filter(|k| !known.contains(&k.as_str())) {
            problems.push(Problem {
                path: join(path, key),
                message: format!("unknown field; known fields: {}", known.join(", ")),
            });
        }
        Some(Self {
            object,
            path: path.to_owned(),
            problems,
        })
    }

    fn problem(&mut self, field: &str, message: impl Into<String>) {
        self.problems.push(Problem {
            path: join(&self.path, field),
            message: message.into(),
        });
    }

    fn get(&self, field: &str) -> Option<&'a Value> {
        self.object.get(field).filter(|v| !v.is_null())
    }

    fn string(&mut self, field: &str) -> Option<String> {
        match self.get(field)? {
            Value::String(s) => Some(s.clone()),
            other => {
                let message = format!("expected a string, got {}", kind(other));
                self.problem(field, message);
                None
            }
        }
    }

    fn boolean(&mut self, field: &str) -> Option<bool> {
        match self.get(field)? {
            Value::Bool(b) => Some(*b),
            other => {
                let message = format!("expected true or false, got {}", kind(other));
                self.problem(field, message);
                None
            }
        }
    }

    fn number(&mut self, field: &str, range: std::ops::RangeInclusive<u64>) -> Option<u64> {
        let value = self.get(field)?;
        match value.as_u64().filter(|n| range.contains(n)) {
            Some(n) => Some(n),
            None => {
                let message = format!(
                    "expected a whole number from {} to {}, got {value}",
                    range.start(),
                    range.end()
                );
                self.problem(field, message);
                None
            }
        }
    }
}

fn join(path: &str, field: &str) -> String {
    if field.is_empty() {
        path.to_owned()
    } else if path.is_empty() {
        field.to_owned()
    } else {
        format!("{path}.{field}")
    }
}

fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

impl AgentSpec {
    /// Reads `createAgent`'s argument; every problem comes back at once.
    pub fn from_value(value: &Value) -> Result<Self, Vec<Problem>> {
        const KNOWN: [&str; 13] = [
            "name",
            "instructions",
            "model",
            "maxSteps",
            "planning",
            "reflection",
            "goalCheck",
            "character",
            "store",
            "namespace",
            "persist",
            "builtins",
            "timeBudgetMs",
        ];
        let mut problems = Vec::new();
        let empty = Value::Object(Map::new());
        let value = if value.is_null() { &empty } else { value };
        let Some(mut f) = Fields::new(value, "config", &mut problems, &KNOWN) else {
            return Err(problems);
        };
        let name = f.string("name").unwrap_or_else(|| "familiar".into());
        if !valid_name(&name) {
            f.problem(
                "name",
                format!("use 1 to 64 letters, digits, `_` or `-`, got `{name}`"),
            );
        }
        let instructions = f
            .string("instructions")
            .unwrap_or_else(|| DEFAULT_INSTRUCTIONS.into());
        let mut options = Options::default();
        if let Some(steps) = f.number("maxSteps", 1..=50) {
            options.max_iterations = u32::try_from(steps).unwrap_or(1);
        }
        options.planning = f.boolean("planning").unwrap_or(false);
        options.reflection = match f.get("reflection") {
            Some(Value::Bool(on)) => u32::from(*on),
            Some(_) => f
                .number("reflection", 0..=3)
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or(0),
            None => 0,
        };
        options.goal_check_on_events = f.boolean("goalCheck").unwrap_or(true);
        if let Some(ms) = f.number("timeBudgetMs", 1_000..=3_600_000) {
            options.time_budget_ms = ms;
        }
        let given = f.string("namespace");
        let namespace = given
            .clone()
            .unwrap_or_else(|| format!("familiar.agent.{name}"));
        let namespace_ok = given.is_none()
            || (1..=100).contains(&namespace.len())
                && namespace
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
        if !namespace_ok {
            f.problem(
                "namespace",
                format!("use letters, digits, `.`, `_` or `-`, got `{namespace}`"),
            );
        }
        let persist = f.boolean("persist").unwrap_or(true);
        let model = read_model(f.get("model"), f.problems);
        let store = read_store(f.get("store"), f.problems);
        let character = match f.get("character") {
            None => None,
            Some(Value::String(url)) => Some(CharacterSpec::Url(url.clone())),
            Some(file @ Value::Object(_)) => Some(CharacterSpec::File(file.clone())),
            Some(other) => {
                let message = format!(
                    "expected a character file (an object) or its URL, got {}",
                    kind(other)
                );
                f.problem("character", message);
                None
            }
        };
        let builtins = read_builtins(f.get("builtins"), f.problems);
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(Self {
            name,
            instructions,
            model: model.unwrap_or(ModelSpec::Rules(RulesModel {
                rules: Vec::new(),
                fallback: String::new(),
            })),
            options,
            character,
            store,
            namespace,
            persist,
            builtins,
        })
    }
}

fn read_model(value: Option<&Value>, problems: &mut Vec<Problem>) -> Option<ModelSpec> {
    let no_rules = || RulesModel {
        rules: Vec::new(),
        fallback: "I run offline with no rules for this.".into(),
    };
    let value = value?;
    if value.as_str() == Some("rules") {
        return Some(ModelSpec::Rules(no_rules()));
    }
    if value.get("rules").is_some() {
        let mut f = Fields::new(value, "config.model", problems, &["rules", "fallback"])?;
        let fallback = f.string("fallback");
        let rules = f.get("rules").cloned().unwrap_or_default();
        let file = serde_json::json!({"rules": rules, "fallback": fallback.unwrap_or_else(|| no_rules().fallback)});
        return match serde_json::from_value::<RulesModel>(file) {
            Ok(model) => Some(ModelSpec::Rules(model)),
            Err(error) => {
                f.problem("rules", error.to_string());
                None
            }
        };
    }
    const KNOWN: [&str; 7] = [
        "url",
        "model",
        "header",
        "temperature",
        "maxTokens",
        "timeoutMs",
        "stream",
    ];
    let mut f = Fields::new(value, "config.model", problems, &KNOWN)?;
    let url = f.string("url").unwrap_or_default();
    let model = f.string("model").unwrap_or_default();
    let mut settings = ModelSettings::new(url, model);
    if let Some(temperature) = f.get("temperature") {
        match temperature.as_f64() {
            Some(t) => settings.temperature = Some(t as f32),
            None => f.problem(
                "temperature",
                format!("expected a number, got {}", kind(temperature)),
            ),
        }
    }
    settings.max_tokens = f
        .number("maxTokens", 1..=1_000_000)
        .and_then(|n| u32::try_from(n).ok());
    if let Some(ms) = f.number("timeoutMs", 1..=u64::MAX) {
        settings.timeout_ms = ms;
    }
    if let Some(stream) = f.boolean("stream") {
        settings.stream = stream;
    }
    if let Some(header) = f.get("header") {
        let mut h = Fields::new(
            header,
            "config.model.header",
            f.problems,
            &["name", "value"],
        )?;
        let name = h.string("name").unwrap_or_default();
        let value = h.string("value").unwrap_or_default();
        settings.extra_header = Some((name, value));
    }
    if let Err(error) = settings.validate() {
        f.problem("", error.to_string());
    }
    Some(ModelSpec::Proxy(settings))
}

fn read_store(value: Option<&Value>, problems: &mut Vec<Problem>) -> Backend {
    match value {
        None => Backend::Local,
        Some(Value::String(s)) if s == "local" => Backend::Local,
        Some(value) => {
            let Some(mut f) =
                Fields::new(value, "config.store", problems, &["supabaseUrl", "anonKey"])
            else {
                return Backend::Local;
            };
            let url = f.string("supabaseUrl").unwrap_or_default();
            let anon_key = f.string("anonKey").unwrap_or_default();
            let backend = Backend::Supabase { url, anon_key };
            let settings = crate::settings::Settings {
                backend: backend.clone(),
                ..crate::settings::Settings::default()
            };
            for problem in settings.problems() {
                let field = if problem.field.ends_with("url") {
                    "supabaseUrl"
                } else {
                    "anonKey"
                };
                f.problem(field, problem.message);
            }
            backend
        }
    }
}

fn read_builtins(value: Option<&Value>, problems: &mut Vec<Problem>) -> Vec<Builtin> {
    let Some(value) = value else {
        return Vec::new();
    };
    let Some(list) = value.as_array() else {
        problems.push(Problem {
            path: "config.builtins".into(),
            message: format!("expected a list, got {}", kind(value)),
        });
        return Vec::new();
    };
    let mut builtins = Vec::new();
    for (i, item) in list.iter().enumerate() {
        match item.as_str() {
            Some("clock") => builtins.push(Builtin::Clock),
            Some("page_title") => builtins.push(Builtin::PageTitle),
            Some("memory") => builtins.push(Builtin::Memory),
            _ => problems.push(Problem {
                path: format!("config.builtins[{i}]"),
                message: format!("expected \"clock\", \"page_title\" or \"memory\", got {item}"),
            }),
        }
    }
    builtins
}

/// `registerTool`'s description of a tool (its handler is the caller's business).
pub fn tool_from_value(value: &Value) -> Result<super::HostTool, Vec<Problem>> {
    const KNOWN: [&str; 8] = [
        "name",
        "description",
        "parameters",
        "kind",
        "approval",
        "timeoutMs",
        "handler",
        "origin",
    ];
    let mut problems = Vec::new();
    let Some(mut f) = Fields::new(value, "tool", &mut problems, &KNOWN) else {
        return Err(problems);
    };
    let name = f.string("name").unwrap_or_default();
    let description = f.string("description").unwrap_or_default();
    if description.trim().is_empty() {
        f.problem(
            "description",
            "say what the tool does: the model chooses tools by it",
        );
    }
    let parameters = f
        .get("parameters")
        .cloned()
        .unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}}));
    let kind = match f.string("kind").as_deref() {
        None | Some("action") => ToolKind::Action,
        Some("data") => ToolKind::Data,
        Some(other) => {
            f.problem(
                "kind",
                format!("expected \"data\" or \"action\", got \"{other}\""),
            );
            ToolKind::Action
        }
    };
    let approval = match f.string("approval").as_deref() {
        None | Some("auto") => Approval::Auto,
        Some("ask") => Approval::Ask,
        Some("deny") => Approval::Deny,
        Some(other) => {
            f.problem(
                "approval",
                format!("expected \"auto\", \"ask\" or \"deny\", got \"{other}\""),
            );
            Approval::Auto
        }
    };
    let timeout_ms = f
        .number("timeoutMs", 1..=600_000)
        .unwrap_or(DEFAULT_TOOL_TIMEOUT_MS);
    if f.get("origin").is_some_and(|o| !o.is_string()) {
        f.problem(
            "origin",
            "expected the origin to post to, e.g. \"https://game.example\"",
        );
    }
    let tool = super::HostTool {
        spec: ToolSpec {
            name,
            description,
            parameters,
        },
        kind,
        approval,
        timeout_ms,
    };
    if let Err(error) = tool.check() {
        let field = match error {
            super::HostToolError::BadName(_) => "name",
            super::HostToolError::BadSchema { .. } => "parameters",
            super::HostToolError::BadTimeout { .. } => "timeoutMs",
        };
        f.problem(field, error.to_string());
    }
    if problems.is_empty() {
        Ok(tool)
    } else {
        Err(problems)
    }
}

/// `trigger`'s game event: `{kind, event, actor, subject, allowedActions}`.
pub fn observation_from_value(value: &Value) -> Result<Observation, Vec<Problem>> {
    const KNOWN: [&str; 5] = ["kind", "event", "actor", "subject", "allowedActions"];
    let mut problems = Vec::new();
    let Some(mut f) = Fields::new(value, "event", &mut problems, &KNOWN) else {
        return Err(problems);
    };
    let trigger_kind = f.string("kind").unwrap_or_default();
    let event = f.string("event").unwrap_or_default();
    if trigger_kind.trim().is_empty() {
        f.problem("kind", "name the family of event, e.g. \"battle\"");
    }
    if event.trim().is_empty() {
        f.problem("event", "name the event, e.g. \"battle.started\"");
    }
    let actor = match f.get("actor") {
        None => Actor::default(),
        Some(Value::String(name)) => Actor {
            name: name.clone(),
            ..Actor::default()
        },
        Some(actor) => match serde_json::from_value(actor.clone()) {
            Ok(actor) => actor,
            Err(error) => {
                f.problem("actor", format!("expected {{id?, name?, state?}}: {error}"));
                Actor::default()
            }
        },
    };
    let subject = match f.get("subject") {
        Some(Value::String(content)) => Subject {
            content: content.clone(),
            ..Subject::default()
        },
        Some(subject) => {
            let subject = subject.clone();
            let renamed = match subject {
                Value::Object(mut fields) => {
                    if let Some(id) = fields.remove("messageId") {
                        fields.insert("message_id".into(), id);
                    }
                    Value::Object(fields)
                }
                other => other,
            };
            match serde_json::from_value::<Subject>(renamed) {
                Ok(subject) => subject,
                Err(error) => {
                    f.problem(
                        "subject",
                        format!(
                            "expected a description or {{kind?, id?, content, messageId?}}: {error}"
                        ),
                    );
                    Subject::default()
                }
            }
        }
        None => {
            f.problem(
                "subject",
                "say what happened: the model reads it as its first message",
            );
            Subject::default()
        }
    };
    if subject.content.trim().is_empty() && f.get("subject").is_some() {
        f.problem("subject", "the description is empty");
    }
    let allowed_actions = match f.get("allowedActions") {
        None => None,
        Some(Value::Array(list)) if list.iter().all(Value::is_string) => Some(
            list.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect(),
        ),
        Some(other) => {
            let message = format!("expected a list of tool names, got {}", kind(other));
            f.problem("allowedActions", message);
            None
        }
    };
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(Observation {
        trigger: Trigger {
            kind: trigger_kind,
            event,
        },
        actor,
        subject,
        boundaries: Boundaries { allowed_actions },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_empty_config_is_an_offline_agent_kept_under_its_own_namespace() {
        let spec = AgentSpec::from_value(&Value::Null).unwrap();
        assert_eq!(spec.name, "familiar");
        assert!(matches!(spec.model, ModelSpec::Rules(_)));
        assert_eq!(spec.namespace, "familiar.agent.familiar");
        assert_eq!(spec.store, Backend::Local);
        assert!(spec.persist);
    }

    #[test]
    fn a_full_config_is_read() {
        let spec = AgentSpec::from_value(&json!({
            "name": "grunt", "instructions": "You are an orc.",
            "model": {"url": "https://llm.example.com/v1", "model": "small",
                      "header": {"name": "X-Proxy-Token", "value": "team-42"}},
            "maxSteps": 5, "planning": true, "reflection": true, "goalCheck": false,
            "character": "/characters/dotty.json", "namespace": "game.grunt",
            "persist": false, "builtins": ["clock", "memory"], "timeBudgetMs": 60000
        }))
        .unwrap();
        let ModelSpec::Proxy(model) = &spec.model else {
            panic!("not a proxy");
        };
        assert_eq!(
            model.extra_header,
            Some(("X-Proxy-Token".into(), "team-42".into()))
        );
        assert_eq!(spec.options.max_iterations, 5);
        assert_eq!(spec.options.reflection, 1);
        assert!(spec.options.planning && !spec.options.goal_check_on_events);
        assert_eq!(spec.options.time_budget_ms, 60_000);
        assert_eq!(
            spec.character,
            Some(CharacterSpec::Url("/characters/dotty.json".into()))
        );
        assert_eq!(spec.builtins, [Builtin::Clock, Builtin::Memory]);
    }

    #[test]
    fn every_problem_is_reported_with_its_path() {
        let problems = AgentSpec::from_value(&json!({
            "name": "two words", "maxSteps": 0, "colour": "red",
            "model": {"url": "ftp://x", "model": ""},
            "store": {"supabaseUrl": "http://db.example.com", "anonKey": ""},
            "builtins": ["clock", "laser"], "character": 7
        }))
        .unwrap_err();
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        for path in [
            "config.colour",
            "config.name",
            "config.maxSteps",
            "config.model",
            "config.store.supabaseUrl",
            "config.store.anonKey",
            "config.builtins[1]",
            "config.character",
        ] {
            assert!(paths.contains(&path), "{path} missing from {paths:?}");
        }
        let text = describe("createAgent's config has problems", &problems);
        assert!(text.starts_with("createAgent's config has problems:\n  config."));
    }

    #[test]
    fn a_provider_key_in_the_proxy_header_is_refused() {
        let problems = AgentSpec::from_value(&json!({
            "model": {"url": "https://llm.example.com/v1", "model": "m",
                      "header": {"name": "Authorization", "value": "Bearer sk-proj-abc"}}
        }))
        .unwrap_err();
        assert!(
            problems[0].message.contains("provider API key"),
            "{problems:?}"
        );
    }

    #[test]
    fn rules_given_inline_make_the_offline_model() {
        let spec = AgentSpec::from_value(&json!({
            "model": {"rules": [{"keywords": ["goblin"], "tool": "spawn", "answer": "ok"}],
                      "fallback": "Hm."}
        }))
        .unwrap();
        let ModelSpec::Rules(rules) = spec.model else {
            panic!("not rules");
        };
        assert_eq!(rules.rules.len(), 1);
        assert_eq!(rules.fallback, "Hm.");
    }

    #[test]
    fn a_tool_description_is_checked_whole() {
        let tool = tool_from_value(&json!({
            "name": "spawn", "description": "Spawns a monster.", "kind": "action",
            "approval": "ask", "timeoutMs": 2000, "origin": "https://game.example",
            "parameters": {"type": "object", "properties": {"kind": {"type": "string"}}}
        }))
        .unwrap();
        assert_eq!(tool.approval, Approval::Ask);
        assert_eq!(tool.timeout_ms, 2_000);
        let problems = tool_from_value(&json!({
            "name": "", "kind": "magic", "approval": "maybe", "timeoutMs": -1,
            "parameters": {"type": "array"}
        }))
        .unwrap_err();
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "tool.description",
                "tool.kind",
                "tool.approval",
                "tool.timeoutMs",
                "tool.name"
            ]
        );
    }

    #[test]
    fn a_game_event_becomes_an_observation_with_its_boundaries() {
        let observation = observation_from_value(&json!({
            "kind": "battle", "event": "battle.started",
            "actor": {"id": 7, "name": "Grunt", "state": {"hp": 12}},
            "subject": {"kind": "battle", "id": 3, "content": "Goblins attack", "messageId": 9},
            "allowedActions": ["join_battle"]
        }))
        .unwrap();
        assert_eq!(observation.actor.name, "Grunt");
        assert_eq!(observation.subject.message_id, Some(json!(9)));
        assert!(observation.boundaries.allows("join_battle"));
        assert!(!observation.boundaries.allows("flee"));
        let short = observation_from_value(&json!({
            "kind": "chat", "event": "npc.greeted", "actor": "Grunt", "subject": "Hello"
        }))
        .unwrap();
        assert_eq!(short.subject.content, "Hello");
        for (url, ok) in [
            ("http://127.0.0.1:54321", true),
            ("http://localhost/rest", true),
            ("http://[::1]:80", true),
            ("http://127.attacker.example", false),
            ("http://db.example.com", false),
            ("https://db.example.com", true),
        ] {
            assert_eq!(crate::http::secure_or_loopback(url), ok, "{url}");
        }
        let problems = observation_from_value(&json!({"allowedActions": "all"})).unwrap_err();
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "event.kind",
                "event.event",
                "event.subject",
                "event.allowedActions"
            ]
        );
    }
}
