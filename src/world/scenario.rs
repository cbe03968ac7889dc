//! Scenarios: a recorded or hand-written run as one JSON file — the world's seed
//! rows, the trigger (an [`Observation`] whose actor is the agent; its current stats
//! are read from the seeded rows as [`world::perceive`] reads them), and the model's
//! replies as OpenAI chat-completion assistant messages — replayed through the real
//! engine over the in-memory store. `familiar-probe scenario FILE.json` and the
//! native tests run them through [`play`]; an optional `expect` block says what must
//! come out, and [`Replay::mismatches`] says what did not.

use crate::base::json::Read;
use std::rc::Rc;

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::base::clock::{FixedClock, Instant};
use crate::llm::message::Message;
use crate::llm::openai::parse_completion;
use crate::llm::scripted::ScriptedModel;
use crate::llm::{ChatResponse, LlmError};
use crate::run::driver::{Seams, Stop, drive};
use crate::run::event::Event;
use crate::run::{AgentRun, ContextMemory, Observation, Outcome};
use crate::store::{LocalStore, Select, Store, StoreError};
use crate::tool::ToolRegistry;
use crate::tool::ledger::Ledger;
use crate::world;

/// 2026-11-22T09:00:00Z: scenarios run at a fixed time, so their rows are stable.
const SCENARIO_TIME_MS: i64 = 1_795_338_000_000;

/// One scenario file.
#[derive(Debug, Clone, Read)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Seed rows, `{"table": [rows…]}`.
    pub world: Map<String, Value>,
    /// The trigger; `actor.id` is the agent's user id in the world.
    pub observation: Observation,
    #[serde(default)]
    pub system: Option<String>,
    #[serde(default)]
    pub max_iterations: Option<u32>,
    #[serde(default)]
    pub memory: Option<ContextMemory>,
    /// The model's replies, in order: OpenAI assistant messages.
    pub model: Vec<Value>,
    #[serde(default)]
    pub expect: Option<Expect>,
}

/// What a scenario must produce.
#[derive(Debug, Clone, Default, Read)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// Every tool called, in order (the built-in `plan` is not a tool call).
    #[serde(default)]
    pub tools: Option<Vec<String>>,
    #[serde(default)]
    pub iterations: Option<u32>,
    /// The outcome's type, e.g. `goal_complete`.
    #[serde(default)]
    pub outcome: Option<String>,
    /// Rows that must exist afterwards: each expected row must match some row of its
    /// table on every column it names.
    #[serde(default)]
    pub world: Map<String, Value>,
    /// Rows that must not exist afterwards, matched the same way.
    #[serde(default)]
    pub absent: Map<String, Value>,
}

/// What a scenario did.
#[derive(Debug, Clone, Serialize)]
pub struct Replay {
    /// What the run started from: the scenario's trigger with the agent's stats read
    /// from the world when it fired.
    pub observation: Observation,
    /// The instructions the model read first, with the situation the observation
    /// describes.
    pub system: String,
    pub events: Vec<Event>,
    pub outcome: Outcome,
    pub iterations: u32,
    pub tools: Vec<String>,
    /// What the model read, in order, including the loop's replans and reminders.
    pub transcript: Vec<Message>,
    /// Every non-empty table afterwards, rows in key order.
    pub world: Map<String, Value>,
}

/// Why a scenario could not be played.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("the scenario file is invalid: {0}")]
    Invalid(String),
    #[error("model reply {index} is not an assistant message: {error}")]
    Reply { index: usize, error: LlmError },
    #[error("the world could not be built: {0}")]
    World(#[from] StoreError),
}

impl Scenario {
    pub fn from_json(text: &str) -> Result<Self, ScenarioError> {
        let scenario: Self = crate::base::json::from_text(text)
            .map_err(|e| ScenarioError::Invalid(e.to_string()))?;
        if scenario.agent_id().is_none() {
            return Err(ScenarioError::Invalid(
                "observation.actor.id must be the agent's user id (an integer)".into(),
            ));
        }
        Ok(scenario)
    }

    fn agent_id(&self) -> Option<i64> {
        self.observation.actor.id.as_ref().and_then(Value::as_i64)
    }

    /// The scripted model that gives this scenario's replies.
    fn model(&self) -> Result<ScriptedModel, ScenarioError> {
        let model = ScriptedModel::new();
        for (index, message) in self.model.iter().enumerate() {
            model.push(Ok(
                reply(message).map_err(|error| ScenarioError::Reply { index, error })?
            ));
        }
        Ok(model)
    }
}

/// An assistant message read as the wire client reads a completion.
fn reply(message: &Value) -> Result<ChatResponse, LlmError> {
    let calls = message.get("tool_calls").and_then(Value::as_array);
    let finish = if calls.is_some_and(|c| !c.is_empty()) {
        "tool_calls"
    } else {
        "stop"
    };
    let completion =
        json!({"choices": [{"index": 0, "message": message, "finish_reason": finish}]});
    parse_completion(completion.to_string().as_bytes())
}

/// Plays `scenario` to its end.
pub async fn play(scenario: &Scenario) -> Result<Replay, ScenarioError> {
    let me = scenario.agent_id().unwrap_or_default();
    let clock = FixedClock(Instant {
        epoch_ms: SCENARIO_TIME_MS,
        utc_offset_minutes: 0,
    });
    let store = LocalStore::new(world::schemas()?).with_clock(Rc::new(clock));
    let store = Rc::new(world::functions::install(store));
    store.seed(&Value::Object(scenario.world.clone()).to_string())?;
    world::functions::play_as(&store, me)?;
    let store: Rc<dyn Store> = store;
    let mut tools = ToolRegistry::new();
    world::register_tools(&mut tools, Rc::clone(&store), me);
    // The seed's NPCs act on what other players say with no one to ask: a replay plays
    // such an agent, so its operator's choice is made here, for every action.
    tools.set_action_approval(crate::tool::Approval::Auto);
    tools.with_ledger(Ledger::new(Rc::clone(&store), me.to_string()));
    let model = scenario.model()?;
    let seams = Seams {
        llm: &model,
        tools: &tools,
        clock: &clock,
        host: None,
        checkpoint: None,
        relay: None,
    };
    let system = scenario.system.clone().unwrap_or_else(|| {
        "You are a character in a living game world. Act in character, and act on the \
         world only through your tools."
            .into()
    });
    // The agent's stats as its row holds them when the trigger fires, as the session
    // reads them before a world trigger.
    let mut observation = scenario.observation.clone();
    world::perceive(&*store, &mut observation).await?;
    let mut run = AgentRun::new(system, Vec::new(), observation.clone(), tools.catalogue())
        .with_id(scenario.name.clone())
        .with_planning()
        .with_goal_check()
        .with_memory(scenario.memory.clone().unwrap_or_default());
    if let Some(cap) = scenario.max_iterations {
        run = run.with_max_iterations(cap);
    }
    let mut events = Vec::new();
    let outcome = match drive(&mut run, &seams, &mut |e| events.push(e)).await {
        Stop::Done(outcome) => outcome,
        Stop::AwaitingApproval(call) => Outcome::Failed {
            error: format!("`{}` waits for an approval no one can give here", call.name),
        },
    };
    let system = model
        .requests()
        .first()
        .map(|request| request.system.to_string())
        .unwrap_or_default();
    Ok(Replay {
        observation,
        system,
        tools: run.history().iter().map(|r| r.tool.to_string()).collect(),
        transcript: run.messages().to_vec(),
        events,
        outcome,
        iterations: run.iterations(),
        world: dump(&*store).await?,
    })
}

/// Every non-empty table, rows ordered by primary key.
async fn dump(store: &dyn Store) -> Result<Map<String, Value>, StoreError> {
    let mut world = Map::new();
    for schema in world::schemas()? {
        let mut select = Select::from(&schema.name);
        for column in &schema.primary_key {
            select = select.order(column, true);
        }
        let rows = store.select(&select).await?;
        if !rows.is_empty() {
            world.insert(schema.name, rows.into_iter().map(Value::Object).collect());
        }
    }
    Ok(world)
}

impl Replay {
    /// How the report differs from `expect`; empty when it matches.
    pub fn mismatches(&self, expect: &Expect) -> Vec<String> {
        let mut found = Vec::new();
        if let Some(tools) = expect.tools.as_ref().filter(|t| **t != self.tools) {
            found.push(format!("tools: expected {tools:?}, got {:?}", self.tools));
        }
        if let Some(iterations) = expect.iterations.filter(|i| *i != self.iterations) {
            found.push(format!(
                "iterations: expected {iterations}, got {}",
                self.iterations
            ));
        }
        if let Some(outcome) = &expect.outcome {
            let got = serde_json::to_value(&self.outcome).unwrap_or_default();
            if got.get("type").and_then(Value::as_str) != Some(outcome) {
                found.push(format!("outcome: expected {outcome}, got {got}"));
            }
        }
        for (table, wanted) in &expect.world {
            for row in wanted.as_array().into_iter().flatten() {
                if !self.has_row(table, row) {
                    found.push(format!("{table}: no row matches {row}"));
                }
            }
        }
        for (table, unwanted) in &expect.absent {
            for row in unwanted.as_array().into_iter().flatten() {
                if self.has_row(table, row) {
                    found.push(format!(
                        "{table}: a row matches {row}, which should be absent"
                    ));
                }
            }
        }
        found
    }

    fn has_row(&self, table: &str, wanted: &Value) -> bool {
        let Some(wanted) = wanted.as_object() else {
            return false;
        };
        let rows = self.world.get(table).and_then(Value::as_array);
        rows.into_iter().flatten().any(|row| {
            wanted
                .iter()
                .all(|(column, value)| row.get(column) == Some(value))
        })
    }
}
