//! The agent loop end to end, natively: the driver over the real run, registry, ledger
//! and local store, with a scripted model. One test per rule a user relies on.
#![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

use std::cell::Cell;
use std::rc::Rc;

use familiar::base::clock::{FrozenClock, ManualClock};
use familiar::llm::message::{Role, ToolCall};
use familiar::llm::scripted::ScriptedModel;
use familiar::run::driver::{Seams, Stop, drive};
use familiar::run::event::Event;
use familiar::run::{AgentRun, NextStep, Observation, Outcome};
use familiar::store::{LocalStore, Store};
use familiar::tool::ledger::Ledger;
use familiar::tool::{Approval, NoArgs, ToolKind, ToolRegistry};
use futures::executor::block_on;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[path = "agent_loop/actions.rs"]
mod actions;
#[path = "agent_loop/approvals.rs"]
mod approvals;
#[path = "agent_loop/reflection.rs"]
mod reflection;
#[path = "agent_loop/stopping.rs"]
mod stopping;
#[path = "agent_loop/tools.rs"]
mod tools;

#[derive(Deserialize, JsonSchema)]
struct CountArgs {
    by: i64,
}

/// A world of one counter: `read` (data), `bump` (action, unasked), `fail` (data that errors),
/// `hang` (data that never answers, 5 s timeout).
/// When a bench's clock starts: a real date, so a stamp of 0 would mean unknown.
const START_MS: i64 = 1_795_338_000_000;

struct Bench {
    tools: ToolRegistry,
    applied: Rc<Cell<i64>>,
    clock: ManualClock,
}

fn bench() -> Bench {
    let applied = Rc::new(Cell::new(0));
    let mut tools = ToolRegistry::new();
    let counter = Rc::clone(&applied);
    tools.register_fn(
        "read",
        ToolKind::Data,
        "Reads the counter.",
        move |_: NoArgs, _| {
            let value = counter.get();
            async move { Ok::<_, String>(json!({ "counter": value })) }
        },
    );
    let counter = Rc::clone(&applied);
    tools.register_fn(
        "bump",
        ToolKind::Action,
        "Adds to the counter.",
        move |a: CountArgs, _| {
            counter.set(counter.get() + a.by);
            let value = counter.get();
            async move { Ok::<_, String>(json!({ "counter": value })) }
        },
    );
    tools.register_fn(
        "fail",
        ToolKind::Data,
        "Always fails.",
        |_: NoArgs, _| async { Err::<Value, _>("the well is dry") },
    );
    tools.register_fn(
        "hang",
        ToolKind::Data,
        "Never answers.",
        |_: NoArgs, _| async { futures::future::pending::<Result<Value, String>>().await },
    );
    tools.set_timeout("hang", 5_000);
    // The loop's mechanics, not its approvals, are under test here: `bump` runs
    // unasked even after a look-up (actions ask once untrusted by default).
    tools.set_approval("bump", Approval::Auto);
    let store: Rc<dyn Store> = Rc::new(LocalStore::new(familiar::world::schemas().unwrap()));
    tools.with_ledger(Ledger::new(store, "1"));
    Bench {
        tools,
        applied,
        clock: ManualClock::starting_at(START_MS),
    }
}

impl Bench {
    /// When the bench's clock started.
    fn started_ms(&self) -> i64 {
        START_MS
    }
}

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

impl Bench {
    fn run(&self, input: &str) -> AgentRun {
        AgentRun::new(
            "test",
            Vec::new(),
            Observation::chat(input),
            self.tools.catalogue(),
        )
        .with_id("test-run")
    }

    fn drive(&self, run: &mut AgentRun, model: &ScriptedModel) -> (Stop, Vec<Event>) {
        let seams = Seams {
            llm: model,
            tools: &self.tools,
            clock: &self.clock,
            host: None,
            checkpoint: None,
            relay: None,
        };
        let mut events = Vec::new();
        let stop = block_on(drive(run, &seams, &mut |e| events.push(e)));
        (stop, events)
    }
}

/// The results the model was shown, in order.
fn tool_messages(run: &AgentRun) -> Vec<Value> {
    run.messages()
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| serde_json::from_str(&m.content).unwrap())
        .collect()
}

#[test]
fn results_or_replies_that_come_out_of_turn_change_nothing() {
    let bench = bench();
    let model = ScriptedModel::new();
    model.push_text("done");
    let mut run = bench.run("hi");
    bench.drive(&mut run, &model);
    let before = run.clone();
    run.tools_returned(vec![familiar::run::ToolResult {
        call_id: "c9".into(),
        result: Ok(json!(1)),
        duration_ms: 0,
        at_ms: 0,
        usage: Default::default(),
    }]);
    run.approve("c9");
    run.deny("c9", "no");
    assert_eq!(run, before);
    assert_eq!(
        run.next_step(),
        NextStep::Done(Outcome::Answered {
            text: "done".into()
        })
    );
}
