//! `createAgent`'s configuration: name, instructions, model, run options, character,
//! store, storage and built-in tools.

use serde_json::{Map, Value};

use super::composition::{SubAgentSpec, read_agents, read_commands};
use super::model::{ModelSpec, read_model};
use super::{Fields, Problem, kind};
use crate::app::DEFAULT_KEEP_TURNS;
use crate::app::Options;
use crate::app::host::is_name;
use crate::app::settings::Backend;
use crate::llm::rules::RulesModel;
use crate::run::DEFAULT_REASON_TOKENS;

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
    /// The page assistant's tools: reading the page and acting on it, each action
    /// asking first (feature `page`).
    Page,
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
    /// The composition's other agents, reached by `@name`, `/command` or as tools.
    pub agents: Vec<SubAgentSpec>,
    /// `/command` → the agent it goes to.
    pub commands: Vec<(String, String)>,
}

pub(super) const DEFAULT_INSTRUCTIONS: &str = "You are a helpful agent. Use your tools when they help; \
    answer briefly.";

impl AgentSpec {
    /// Reads `createAgent`'s argument; every problem comes back at once.
    pub fn from_value(value: &Value) -> Result<Self, Vec<Problem>> {
        const KNOWN: [&str; 19] = [
            "agents",
            "reasonMaxTokens",
            "commands",
            "goalGuess",
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
            "keepTurns",
            "supervisor",
        ];
        let mut problems = Vec::new();
        let empty = Value::Object(Map::new());
        let value = if value.is_null() { &empty } else { value };
        let Some(mut f) = Fields::new(value, "config", &mut problems, &KNOWN) else {
            return Err(problems);
        };
        let name = f.string("name").unwrap_or_else(|| "familiar".into());
        if !is_name(&name) {
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
        options.supervisor = f.boolean("supervisor").unwrap_or(false);
        options.guess_goal = f.boolean("goalGuess").unwrap_or(false);
        if let Some(tokens) = f.number("reasonMaxTokens", 16..=100_000) {
            options.reason_tokens = u32::try_from(tokens).unwrap_or(DEFAULT_REASON_TOKENS);
        }
        if let Some(ms) = f.number("timeBudgetMs", 1_000..=3_600_000) {
            options.time_budget_ms = ms;
        }
        if let Some(turns) = f.number("keepTurns", 10..=100_000) {
            options.keep_turns = usize::try_from(turns).unwrap_or(DEFAULT_KEEP_TURNS);
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
        let agents = read_agents(f.get("agents"), &name, f.problems);
        let commands = read_commands(f.get("commands"), &name, &agents, f.problems);
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
            agents,
            commands,
        })
    }
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
            let settings = crate::app::settings::Settings {
                backend: backend.clone(),
                ..crate::app::settings::Settings::default()
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
            Some("page") => builtins.push(Builtin::Page),
            _ => problems.push(Problem {
                path: format!("config.builtins[{i}]"),
                message: format!(
                    "expected \"clock\", \"page_title\", \"memory\" or \"page\", got {item}"
                ),
            }),
        }
    }
    builtins
}

#[cfg(test)]
mod tests {
    use super::super::describe;
    use super::*;
    use crate::tool::ToolKind;
    use serde_json::json;

    #[test]
    fn an_empty_config_is_an_offline_agent_kept_under_its_own_namespace() {
        let spec = AgentSpec::from_value(&Value::Null).unwrap();
        assert_eq!(spec.name, "familiar");
        assert!(matches!(spec.model, ModelSpec::Rules(_)));
        assert_eq!(spec.namespace, "familiar.agent.familiar");
        assert_eq!(spec.store, Backend::Local);
        assert!(spec.persist);
        assert!(
            !spec.options.supervisor,
            "chat is not supervised unless asked"
        );
    }

    #[test]
    fn a_full_config_is_read() {
        let spec = AgentSpec::from_value(&json!({
            "name": "grunt", "instructions": "You are an orc.",
            "model": {"url": "https://llm.example.com/v1", "model": "small",
                      "header": {"name": "X-Proxy-Token", "value": "team-42"}},
            "maxSteps": 5, "planning": true, "reflection": true, "goalCheck": false,
            "character": "/characters/dotty.json", "namespace": "game.grunt",
            "persist": false, "builtins": ["clock", "memory", "page"], "timeBudgetMs": 60000,
            "keepTurns": 500, "supervisor": true, "reasonMaxTokens": 800
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
        assert_eq!(spec.options.keep_turns, 500);
        assert_eq!(spec.options.reason_tokens, 800);
        assert!(spec.options.supervisor);
        assert_eq!(
            spec.character,
            Some(CharacterSpec::Url("/characters/dotty.json".into()))
        );
        assert_eq!(
            spec.builtins,
            [Builtin::Clock, Builtin::Memory, Builtin::Page]
        );
    }

    #[test]
    fn every_problem_is_reported_with_its_path() {
        let problems = AgentSpec::from_value(&json!({
            "name": "two words", "maxSteps": 0, "colour": "red",
            "model": {"url": "ftp://x", "model": ""},
            "store": {"supabaseUrl": "http://db.example.com", "anonKey": ""},
            "builtins": ["clock", "laser"], "character": 7, "keepTurns": 3
        }))
        .unwrap_err();
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        for path in [
            "config.colour",
            "config.name",
            "config.maxSteps",
            "config.model.url",
            "config.model.model",
            "config.store.supabaseUrl",
            "config.store.anonKey",
            "config.builtins[1]",
            "config.character",
            "config.keepTurns",
        ] {
            assert!(paths.contains(&path), "{path} missing from {paths:?}");
        }
        let text = describe("createAgent's config has problems", &problems);
        assert!(text.starts_with("createAgent's config has problems:\n  config."));
    }

    #[test]
    fn model_problems_name_the_deepest_path_and_none_hides_another() {
        let problems = AgentSpec::from_value(&json!({
            "model": {"url": "ftp://x", "model": "", "temperature": 5, "timeoutMs": 10,
                      "header": {"name": "Cookie", "value": "Bearer sk-proj-abc"}}
        }))
        .unwrap_err();
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "config.model.url",
                "config.model.model",
                "config.model.temperature",
                "config.model.timeoutMs",
                "config.model.header.name",
                "config.model.header.value",
            ]
        );
        assert_eq!(problems[1].message, "the model name is empty");
        let key = AgentSpec::from_value(&json!({
            "model": {"url": "https://llm.example.com/v1", "model": "m",
                      "header": {"name": "Authorization", "value": "Bearer sk-proj-abc"}}
        }))
        .unwrap_err();
        assert_eq!(key[0].path, "config.model.header.value");
        // A header that is not an object still leaves the rest checked.
        let problems =
            AgentSpec::from_value(&json!({"model": {"url": "x", "header": 3}})).unwrap_err();
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "config.model.header",
                "config.model.url",
                "config.model.model"
            ]
        );
    }

    #[test]
    fn a_bad_rule_is_named_by_its_own_path() {
        let problems = AgentSpec::from_value(&json!({
            "model": {"rules": [{"keywords": "goblin", "answer": "ok"}]}
        }))
        .unwrap_err();
        assert_eq!(problems[0].path, "config.model.rules[0].keywords");
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
    fn a_context_window_is_read_and_checked_against_max_tokens() {
        let config = |model: Value| AgentSpec::from_value(&json!({ "model": model }));
        let spec = config(
            json!({"url": "http://127.0.0.1:8081/v1", "model": "smollm2",
                                 "maxTokens": 96, "contextTokens": 2048}),
        )
        .unwrap();
        let ModelSpec::Proxy(model) = spec.model else {
            panic!("not a proxy");
        };
        assert_eq!(model.context_tokens, Some(2048));
        let problems = config(json!({"url": "http://127.0.0.1:8081/v1", "model": "m",
                                     "maxTokens": 4096, "contextTokens": 2048}))
        .err()
        .unwrap_or_default();
        assert!(
            problems
                .iter()
                .any(|p| p.to_string().contains("context window")),
            "{problems:?}"
        );
        assert!(
            config(json!({"url": "http://x.dev/v1", "model": "m", "contextTokens": 10})).is_err()
        );
    }

    #[test]
    fn a_local_models_sha256_is_read_lowercased_and_a_malformed_one_refused() {
        let config = |local: Value| AgentSpec::from_value(&json!({ "model": { "local": local } }));
        let hash = "AB".repeat(32);
        let spec = config(json!({"url": "/m.gguf", "sha256": hash})).unwrap();
        let ModelSpec::Local(local) = spec.model else {
            panic!("not local");
        };
        assert_eq!(local.sha256, Some("ab".repeat(32)));
        let problems = config(json!({"url": "/m.gguf", "sha256": "abc"}))
            .err()
            .unwrap_or_default();
        assert!(
            problems
                .iter()
                .any(|p| p.to_string().contains("config.model.local.sha256")
                    && p.to_string().contains("64 hexadecimal digits")),
            "{problems:?}"
        );
    }

    #[test]
    fn a_local_models_backend_is_auto_unless_named_and_an_unknown_one_refused() {
        use crate::llm::local::LocalBackend;
        let config = |local: Value| AgentSpec::from_value(&json!({ "model": { "local": local } }));
        let backend = |local: Value| match config(local).map(|s| s.model) {
            Ok(ModelSpec::Local(local)) => Some(local.backend),
            _ => None,
        };
        assert_eq!(backend(json!({"url": "/m.gguf"})), Some(LocalBackend::Auto));
        assert_eq!(backend(json!("/m.gguf")), Some(LocalBackend::Auto));
        for (word, expected) in [
            ("auto", LocalBackend::Auto),
            ("webgpu", LocalBackend::WebGpu),
            ("cpu", LocalBackend::Cpu),
        ] {
            assert_eq!(
                backend(json!({"url": "/m.gguf", "backend": word})),
                Some(expected)
            );
        }
        let problems = config(json!({"url": "/m.gguf", "backend": "gpu"}))
            .err()
            .unwrap_or_default();
        assert!(
            problems.iter().any(|p| {
                let p = p.to_string();
                p.contains("config.model.local.backend") && p.contains("“auto”, “webgpu” or “cpu”")
            }),
            "{problems:?}"
        );
    }

    #[test]
    fn a_local_models_threads_are_every_core_unless_named_and_out_of_range_refused() {
        let config = |local: Value| AgentSpec::from_value(&json!({ "model": { "local": local } }));
        let threads = |local: Value| match config(local).map(|s| s.model) {
            Ok(ModelSpec::Local(local)) => Some(local.threads),
            _ => None,
        };
        assert_eq!(threads(json!({"url": "/m.gguf"})), Some(None));
        assert_eq!(
            threads(json!({"url": "/m.gguf", "threads": 3})),
            Some(Some(3))
        );
        for wrong in [json!(0), json!(65), json!(2.5), json!("all")] {
            let problems = config(json!({"url": "/m.gguf", "threads": wrong}))
                .err()
                .unwrap_or_default();
            assert!(
                problems.iter().any(|p| {
                    let p = p.to_string();
                    p.contains("config.model.local.threads") && p.contains("from 1 to 64")
                }),
                "{wrong}: {problems:?}"
            );
        }
    }

    #[test]
    fn a_composition_is_read_with_its_agents_commands_and_goal_guess() {
        let spec = AgentSpec::from_value(&json!({
            "name": "guide",
            "goalGuess": true,
            "agents": [
                {"name": "scout", "description": "Finds things", "tool": "data"},
                {"name": "Dotty", "memory": "own", "model": {"rules": [], "fallback": "Hm."}},
            ],
            "commands": {"find": "scout"},
        }))
        .unwrap();
        assert!(spec.options.guess_goal);
        assert_eq!(spec.agents.len(), 2);
        assert_eq!(
            spec.agents[0].tool,
            Some(super::super::Offer::Opaque(ToolKind::Data))
        );
        assert!(!spec.agents[0].own_memory && spec.agents[0].model.is_none());
        assert!(spec.agents[1].own_memory);
        assert!(matches!(spec.agents[1].model, Some(ModelSpec::Rules(_))));
        assert_eq!(spec.commands, [("find".to_owned(), "scout".to_owned())]);
    }

    #[test]
    fn a_composite_sub_agent_brings_the_tools_it_names_and_a_stray_list_is_refused() {
        let spec = AgentSpec::from_value(&json!({
            "agents": [
                {"name": "shop", "tool": "tools", "tools": ["buy_item", "stock"]},
                {"name": "bank", "tools": ["deposit"]},
                {"name": "all", "tool": "tools"},
            ],
        }))
        .unwrap();
        let offers: Vec<_> = spec.agents.iter().map(|a| a.tool.clone()).collect();
        let tools = |names: &[&str]| {
            Some(super::super::Offer::Tools(
                names.iter().map(|n| (*n).to_owned()).collect(),
            ))
        };
        assert_eq!(
            offers,
            [
                tools(&["buy_item", "stock"]),
                tools(&["deposit"]),
                tools(&[])
            ]
        );
        let problems = AgentSpec::from_value(&json!({
            "agents": [
                {"name": "a", "tool": "data", "tools": ["x"]},
                {"name": "b", "tools": ["x", "x", "no spaces"]},
                {"name": "c", "tools": "x"},
            ],
        }))
        .unwrap_err();
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "config.agents[0].tools",
                "config.agents[1].tools[1]",
                "config.agents[1].tools[2]",
                "config.agents[2].tools",
            ]
        );
    }

    #[test]
    fn a_bad_composition_names_each_problem() {
        let problems = AgentSpec::from_value(&json!({
            "name": "guide",
            "agents": [
                {"name": "guide"},
                {"name": "a b", "memory": "forever", "tool": "both"},
                {"name": "x", "model": {"local": "m.gguf"}},
                {"name": "x"},
            ],
            "commands": {"go": "nobody", "bad cmd": "x"},
        }))
        .unwrap_err();
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        for path in [
            "config.agents[0].name",
            "config.agents[1].name",
            "config.agents[1].memory",
            "config.agents[1].tool",
            "config.agents[2].model",
            "config.agents[3].name",
            "config.commands.go",
            "config.commands.bad cmd",
        ] {
            assert!(paths.contains(&path), "{path} in {problems:?}");
        }
    }
}
