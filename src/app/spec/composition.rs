//! `createAgent`'s composition: the agents besides the main one (`agents`) and the
//! `/command`s that reach them (`commands`), with every problem named by its path.

use serde_json::Value;

use super::agent::DEFAULT_INSTRUCTIONS;
use super::model::{ModelSpec, read_model_at};
use super::{Fields, Problem, kind};
use crate::app::host::is_name;
use crate::run::orders::StandingOrders;
use crate::tool::ToolKind;

/// An agent of the composition besides the main one (`agents: [...]`).
#[derive(Debug, Clone, PartialEq)]
pub struct SubAgentSpec {
    pub name: String,
    /// What it is good for: the `@name` list and, as a tool, its description.
    pub description: String,
    pub instructions: String,
    /// Its own model (rules or a proxy); none: the main agent's.
    pub model: Option<ModelSpec>,
    /// `memory: "own"`: a resident, with a conversation of its own.
    pub own_memory: bool,
    /// `tool`: how the main agent is offered it, if at all.
    pub tool: Option<Offer>,
    /// `allow: {actions, gold_per_day, energy_per_day, communities, battles,
    /// message}`: its owner's standing orders.
    pub orders: Option<StandingOrders>,
}

/// How a sub-agent is offered to the main agent (`tool`).
#[derive(Debug, Clone, PartialEq)]
pub enum Offer {
    /// `"tools"`: seed 004's composite. Its tools join the main agent's list, each
    /// call routed to it and shown under it: those `tools` names (a host tool's
    /// included), or with none every tool of its own the main agent lacks.
    Tools(Vec<String>),
    /// `"data" | "action"`: one opaque tool the main agent calls with a request,
    /// running a run of its own; `"data"` may only look things up.
    Opaque(ToolKind),
}

/// `agents: [{name, description?, instructions?, model?, memory?, tool?, tools?,
/// allow?}]`.
pub(super) fn read_agents(
    value: Option<&Value>,
    main: &str,
    problems: &mut Vec<Problem>,
) -> Vec<SubAgentSpec> {
    const KNOWN: [&str; 8] = [
        "name",
        "description",
        "instructions",
        "model",
        "memory",
        "tool",
        "tools",
        "allow",
    ];
    let Some(value) = value else {
        return Vec::new();
    };
    let Some(list) = value.as_array() else {
        problems.push(Problem {
            path: "config.agents".into(),
            message: format!("expected a list of agents, got {}", kind(value)),
        });
        return Vec::new();
    };
    let mut agents: Vec<SubAgentSpec> = Vec::new();
    for (index, value) in list.iter().enumerate() {
        let path = format!("config.agents[{index}]");
        let Some(mut f) = Fields::new(value, &path, problems, &KNOWN) else {
            continue;
        };
        let name = f.string("name").unwrap_or_default();
        if !is_name(&name) {
            f.problem(
                "name",
                format!("use 1 to 64 letters, digits, `_` or `-`, got `{name}`"),
            );
        } else if name == main || agents.iter().any(|a| a.name == name) {
            f.problem("name", format!("`{name}` names another agent already"));
        }
        let description = f.string("description").unwrap_or_default();
        let instructions = f
            .string("instructions")
            .unwrap_or_else(|| DEFAULT_INSTRUCTIONS.into());
        let own_memory = match f.string("memory").as_deref() {
            None | Some("shared") => false,
            Some("own") => true,
            Some(other) => {
                f.problem(
                    "memory",
                    format!("expected \"own\" or \"shared\", got `{other}`"),
                );
                false
            }
        };
        let tools = read_tool_names(f.get("tools"), &path, f.problems);
        let tool = match f.string("tool").as_deref() {
            None | Some("tools") if tools.is_some() => tools.map(Offer::Tools),
            None => None,
            Some("tools") => Some(Offer::Tools(Vec::new())),
            Some(_) if tools.is_some() => {
                f.problem(
                    "tools",
                    "names the tools it brings to the main agent's list, with `tool: \"tools\"`; \
                     an opaque `data` or `action` tool runs with all of its own",
                );
                None
            }
            Some("data") => Some(Offer::Opaque(ToolKind::Data)),
            Some("action") => Some(Offer::Opaque(ToolKind::Action)),
            Some(other) => {
                f.problem(
                    "tool",
                    format!("expected \"tools\", \"data\" or \"action\", got `{other}`"),
                );
                None
            }
        };
        let model_value = f.get("model");
        if model_value.is_some_and(|m| m.get("local").is_some()) {
            f.problem(
                "model",
                "a sub-agent's model is rules or a proxy; the local model serves the main agent",
            );
        }
        let model = match model_value {
            Some(m) if m.get("local").is_none() => {
                read_model_at(Some(m), &format!("{path}.model"), f.problems)
            }
            _ => None,
        };
        let orders = match f.get("allow") {
            None | Some(Value::Null) => None,
            Some(allow) => match StandingOrders::read(allow.clone()) {
                Ok(orders) => Some(orders),
                Err(error) => {
                    f.problem(
                        "allow",
                        format!(
                            "expected standing orders {{actions?: [names], gold_per_day?: n, \
                             energy_per_day?: n, communities?: [ids], battles?: [ids], \
                             message?: [ids or names]}}: {error}"
                        ),
                    );
                    None
                }
            },
        };
        agents.push(SubAgentSpec {
            name,
            description,
            instructions,
            model,
            own_memory,
            tool,
            orders,
        });
    }
    agents
}

/// `tools: ["name", …]`: tool names, each as `registerTool` takes them.
fn read_tool_names(
    value: Option<&Value>,
    path: &str,
    problems: &mut Vec<Problem>,
) -> Option<Vec<String>> {
    let list = match value? {
        Value::Null => return None,
        Value::Array(list) => list,
        other => {
            problems.push(Problem {
                path: format!("{path}.tools"),
                message: format!("expected a list of tool names, got {}", kind(other)),
            });
            return None;
        }
    };
    let mut names = Vec::new();
    for (index, name) in list.iter().enumerate() {
        match name.as_str() {
            Some(name) if is_name(name) && !names.iter().any(|n| n == name) => {
                names.push(name.to_owned());
            }
            _ => problems.push(Problem {
                path: format!("{path}.tools[{index}]"),
                message: format!(
                    "expected a tool's name (1 to 64 letters, digits, `_` or `-`, once), got {name}"
                ),
            }),
        }
    }
    Some(names)
}

/// `commands: {"cmd": "agent"}`: each names one of the agents.
pub(super) fn read_commands(
    value: Option<&Value>,
    main: &str,
    agents: &[SubAgentSpec],
    problems: &mut Vec<Problem>,
) -> Vec<(String, String)> {
    let Some(value) = value else {
        return Vec::new();
    };
    let Some(object) = value.as_object() else {
        problems.push(Problem {
            path: "config.commands".into(),
            message: format!(
                "expected {{\"command\": \"agent name\"}}, got {}",
                kind(value)
            ),
        });
        return Vec::new();
    };
    let mut commands = Vec::new();
    for (command, target) in object {
        let path = format!("config.commands.{command}");
        let mut problem = |message: String| {
            problems.push(Problem {
                path: path.clone(),
                message,
            });
        };
        if !is_name(command) {
            problem(format!(
                "a command is 1 to 64 letters, digits, `_` or `-`, got `{command}`"
            ));
            continue;
        }
        match target.as_str() {
            Some(agent) if agents.iter().any(|a| a.name == agent) => {
                commands.push((command.clone(), agent.to_owned()));
            }
            Some(agent) => {
                let known: Vec<&str> = agents.iter().map(|a| a.name.as_str()).collect();
                problem(format!(
                    "`{agent}` is not one of config.agents ({}); `{main}` answers plain messages already",
                    if known.is_empty() {
                        "none given".to_owned()
                    } else {
                        known.join(", ")
                    }
                ));
            }
            None => problem(format!("expected an agent's name, got {}", kind(target))),
        }
    }
    commands
}
