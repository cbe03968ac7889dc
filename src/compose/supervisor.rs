//! The supervisor preset (seed 003): complexity analysis → planner → executor, given
//! the whole plan → decider, with a status notice at each stage. The analysis, plan
//! and judgement are typed JSON contracts asked through `llm::contract::ask`, so invalid model
//! output is re-asked and then refused, never guessed at.

use std::rc::Rc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::base::clock::Clock;
use crate::base::json::Contract;
use crate::compose::agent::Agent;
use crate::llm::contract::{ContractError, DEFAULT_REASKS, ask};
use crate::llm::message::Message;
use crate::llm::{ChatRequest, Llm};
use crate::run::Outcome;
use crate::run::driver::Stop;
use crate::run::event::Event;

/// How hard a request is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum Level {
    /// One agent turn will do.
    Simple,
    /// Needs a plan of several tasks.
    Complex,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Complexity {
    pub level: Level,
    #[serde(default)]
    pub reason: String,
}

impl Contract for Complexity {}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TaskPlan {
    /// The tasks, in order, each one sentence.
    pub tasks: Vec<String>,
}

impl Contract for TaskPlan {
    fn validate(&self) -> Result<(), String> {
        match self.tasks.len() {
            0 => Err("the plan has no tasks".into()),
            n if n > MAX_TASKS => Err(format!("the plan has {n} tasks; at most {MAX_TASKS}")),
            _ if self.tasks.iter().any(|t| t.trim().is_empty()) => Err("a task is empty".into()),
            _ => Ok(()),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Judgement {
    /// Whether every task is done.
    pub done: bool,
    /// What is left, when not done; a one-line summary otherwise.
    #[serde(default)]
    pub summary: String,
}

impl Contract for Judgement {}

const MAX_TASKS: usize = 12;

/// What the supervisor reports as it goes.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    /// A stage began: for the person waiting.
    Status(String),
    /// An event of the executor's run.
    Executor(Event),
}

/// How a request was handled.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub complexity: Complexity,
    pub plan: Vec<String>,
    /// The executor's last outcome.
    pub outcome: Outcome,
    /// The decider's last word (none for simple requests).
    pub judgement: Option<Judgement>,
    /// Executor runs.
    pub rounds: u32,
}

pub struct Supervisor {
    /// The model that analyses, plans and decides.
    pub llm: Rc<dyn Llm>,
    pub executor: Rc<Agent>,
    /// Executor runs on a complex request, at most.
    pub max_rounds: u32,
}

const ANALYST: &str = "Decide whether the request can be done in one step (SIMPLE) or needs \
    a plan of several tasks (COMPLEX). Reply with JSON: {\"level\": \"SIMPLE\" | \
    \"COMPLEX\", \"reason\": \"...\"}.";
const PLANNER: &str = "Break the request into a short ordered list of tasks. Reply with \
    JSON: {\"tasks\": [\"...\"]}.";
const DECIDER: &str = "Given the request, the plan and the executor's report, decide \
    whether every task is done. Reply with JSON: {\"done\": true | false, \"summary\": \
    \"...\"}.";

impl Supervisor {
    async fn ask<T: Contract>(&self, system: &str, user: String) -> Result<T, ContractError> {
        let request = ChatRequest {
            system: system.into(),
            messages: vec![Message::user(user)].into(),
            temperature: Some(0.0),
            ..ChatRequest::default()
        };
        ask::<T>(&*self.llm, request, DEFAULT_REASKS, &mut |_| {}).await
    }

    /// Handles one request end to end.
    pub async fn handle(
        &self,
        run_id: &str,
        input: &str,
        clock: &dyn Clock,
        notify: &mut dyn FnMut(Progress),
    ) -> Result<Report, ContractError> {
        notify(Progress::Status("Analysing the request".into()));
        let complexity: Complexity = self.ask(ANALYST, input.to_owned()).await?;
        if complexity.level == Level::Simple {
            notify(Progress::Status("Working on it".into()));
            let outcome = self
                .execute(&format!("{run_id}-1"), input, clock, notify)
                .await;
            return Ok(Report {
                complexity,
                plan: Vec::new(),
                outcome,
                judgement: None,
                rounds: 1,
            });
        }
        notify(Progress::Status("Planning".into()));
        let plan: TaskPlan = self.ask(PLANNER, input.to_owned()).await?;
        let numbered: Vec<String> = (1..)
            .zip(&plan.tasks)
            .map(|(n, task)| format!("{n}. {task}"))
            .collect();
        let numbered = numbered.join("\n");
        notify(Progress::Status(format!(
            "Plan of {} tasks",
            plan.tasks.len()
        )));
        let mut brief = format!("{input}\n\nThe whole plan:\n{numbered}\nCarry out every task.");
        let mut rounds = 0;
        loop {
            rounds += 1;
            notify(Progress::Status(format!("Executing, round {rounds}")));
            let run_id = format!("{run_id}-{rounds}");
            let outcome = self.execute(&run_id, &brief, clock, notify).await;
            notify(Progress::Status("Checking the result".into()));
            let question = format!(
                "Request: {input}\nPlan:\n{numbered}\nExecutor's report: {}",
                outcome.text()
            );
            let judgement: Judgement = self.ask(DECIDER, question).await?;
            if judgement.done || rounds >= self.max_rounds.max(1) {
                return Ok(Report {
                    complexity,
                    plan: plan.tasks,
                    outcome,
                    judgement: Some(judgement),
                    rounds,
                });
            }
            brief = format!(
                "{input}\n\nThe whole plan:\n{numbered}\nStill to do: {}",
                judgement.summary
            );
        }
    }

    async fn execute(
        &self,
        run_id: &str,
        brief: &str,
        clock: &dyn Clock,
        notify: &mut dyn FnMut(Progress),
    ) -> Outcome {
        let stop = self
            .executor
            .chat(run_id, brief, clock, &mut |e| notify(Progress::Executor(e)))
            .await;
        match stop {
            Stop::Done(outcome) => outcome,
            Stop::AwaitingApproval(call) => Outcome::Failed {
                error: format!(
                    "the executor waits for approval of `{}`; the supervisor cannot pause for it",
                    call.name
                ),
            },
        }
    }
}
