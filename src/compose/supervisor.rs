//! The supervisor preset (seed 003): complexity analysis → planner → executor, given
//! the whole plan → decider, with a typed status notice at each stage. Every request
//! is planned and decided, as the seed's trace shows: a SIMPLE one gets a plan of one
//! task (the planner is told so), a COMPLEX one several. The analysis,
//! plan and judgement are typed JSON contracts asked through `llm::contract::ask`, so
//! invalid model output is re-asked and then refused, never guessed at. The stages
//! are a sans-IO state machine ([`Supervision`]) that a driver steps: [`Supervisor`]
//! here, or the session controller, which runs the executor like any turn's run.

use crate::base::json::Read;
use std::rc::Rc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::base::clock::Clock;
use crate::base::json::Contract;
use crate::compose::agent::Agent;
use crate::llm::contract::{ContractError, DEFAULT_REASKS, ask};
use crate::llm::message::Message;
use crate::llm::{ChatRequest, Llm};
use crate::run::driver::Stop;
use crate::run::event::{Event, Thought};
use crate::run::{Observation, Outcome};

/// How hard a request is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum Level {
    /// One agent turn will do.
    Simple,
    /// Needs a plan of several tasks.
    Complex,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema, Read)]
pub struct Complexity {
    pub level: Level,
    #[serde(default)]
    pub reason: String,
}

impl Contract for Complexity {}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema, Read)]
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

#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema, Read)]
pub struct Judgement {
    /// Whether every task is done.
    pub done: bool,
    /// What is left, when not done; a one-line summary otherwise.
    #[serde(default)]
    pub summary: String,
}

impl Contract for Judgement {}

const MAX_TASKS: usize = 12;
/// The most tool results the decider reads (the latest), and the most characters of
/// each.
const MAX_RESULTS: usize = 40;
const RESULT_CHARS: usize = 300;

/// One tool result as the decider reads it: `- tool: succeeded: {json}`, `- tool:
/// failed: why`, or `- tool: declined: why` (a person's decision, not a failure).
pub fn result_line(tool: &str, result: &Result<serde_json::Value, String>) -> String {
    let (how, what) = match result {
        Ok(value) => match value.get("declined") {
            Some(why) => (
                "declined",
                why.as_str().map_or_else(|| why.to_string(), str::to_owned),
            ),
            None => ("succeeded", value.to_string()),
        },
        Err(error) => ("failed", error.clone()),
    };
    let cut: String = what.chars().take(RESULT_CHARS).collect();
    let ellipsis = if cut.len() < what.len() { "…" } else { "" };
    format!("- {tool}: {how}: {cut}{ellipsis}")
}

/// A stage of the supervisor, as the person waiting sees it: typed, so a front end
/// can draw the plan and where it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "stage", rename_all = "snake_case")]
pub enum Status {
    /// Deciding whether the request needs a plan.
    Analysing,
    /// The request was judged simple or complex.
    Assessed { level: Level, reason: String },
    /// Breaking the request into tasks.
    Planning,
    /// The plan the executor is given whole.
    Planned { tasks: Vec<String> },
    /// Executor round `round` of at most `max_rounds` began (or went on after a
    /// reload), on a plan of `tasks` tasks.
    Executing {
        round: u32,
        max_rounds: u32,
        tasks: usize,
    },
    /// Checking the executor's report against the plan.
    Deciding { round: u32 },
    /// The decider's word on the round.
    Decided { done: bool, summary: String },
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Analysing => write!(f, "Analysing the request"),
            Self::Assessed { level, .. } => write!(f, "The request is {level:?}"),
            Self::Planning => write!(f, "Planning"),
            Self::Planned { tasks } => write!(f, "Plan of {} tasks", tasks.len()),
            Self::Executing {
                round, max_rounds, ..
            } => write!(f, "Executing, round {round} of at most {max_rounds}"),
            Self::Deciding { .. } => write!(f, "Checking the result"),
            Self::Decided { done: true, .. } => write!(f, "Done"),
            Self::Decided { done: false, .. } => write!(f, "Not done yet"),
        }
    }
}

/// What the supervisor reports as it goes.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    /// A stage began or ended: for the person waiting.
    Status(Status),
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
    /// The decider's last word (none when the executor never finished a round).
    pub judgement: Option<Judgement>,
    /// Executor runs.
    pub rounds: u32,
}

const ANALYST: &str = "Decide whether the request can be done in one step (SIMPLE) or needs \
    a plan of several tasks (COMPLEX). Reply with JSON: {\"level\": \"SIMPLE\" | \
    \"COMPLEX\", \"reason\": \"...\"}.";
const PLANNER: &str = "Break the request into a short ordered list of tasks. Reply with \
    JSON: {\"tasks\": [\"...\"]}.";
const PLANNER_SIMPLE: &str = "The request was judged SIMPLE: reply with a plan of exactly \
    one task, the request as one sentence. Reply with JSON: {\"tasks\": [\"...\"]}.";
const DECIDER: &str = "Given the request, the plan, the results of the executor's tool \
    calls and its report, decide whether every task is done. Reply with JSON: {\"done\": true | false, \"summary\": \
    \"...\"}.";

/// A question the supervisor puts to its model, with the user text it asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Question {
    Complexity(String),
    Plan { level: Level, text: String },
    Decision { round: u32, text: String },
}

/// The model's typed answer to a [`Question`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    Complexity(Complexity),
    Plan(TaskPlan),
    Decision(Judgement),
}

impl Question {
    /// What the person is told while it is asked.
    pub fn status(&self) -> Status {
        match self {
            Self::Complexity(_) => Status::Analysing,
            Self::Plan { .. } => Status::Planning,
            Self::Decision { round, .. } => Status::Deciding { round: *round },
        }
    }

    /// Asks `llm` under the question's JSON contract: invalid output is re-asked,
    /// then refused.
    pub async fn ask(&self, llm: &dyn Llm) -> Result<Answer, ContractError> {
        let (system, text) = match self {
            Self::Complexity(text) => (ANALYST, text),
            Self::Plan {
                level: Level::Simple,
                text,
            } => (PLANNER_SIMPLE, text),
            Self::Plan { text, .. } => (PLANNER, text),
            Self::Decision { text, .. } => (DECIDER, text),
        };
        let request = ChatRequest {
            system: system.into(),
            messages: vec![Message::user(text.clone())].into(),
            temperature: Some(0.0),
            ..ChatRequest::default()
        };
        let sink = &mut |_| {};
        Ok(match self {
            Self::Complexity(_) => {
                Answer::Complexity(ask(llm, request, DEFAULT_REASKS, sink).await?)
            }
            Self::Plan { .. } => Answer::Plan(ask(llm, request, DEFAULT_REASKS, sink).await?),
            Self::Decision { .. } => {
                Answer::Decision(ask(llm, request, DEFAULT_REASKS, sink).await?)
            }
        })
    }
}

/// What the supervision needs next.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    Ask(Question),
    /// Run the executor on `brief` as round `round` (begun already when it is the
    /// current round: a reload cut it off).
    Execute {
        round: u32,
        brief: String,
    },
    Done(Report),
}

/// The supervisor's state for one request: sans-IO and serializable, so it is saved
/// beside the executor's run and a reload goes on where it was. Rounds already
/// judged are never run again.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub struct Supervision {
    pub input: String,
    pub max_rounds: u32,
    pub complexity: Option<Complexity>,
    pub plan: Option<Vec<String>>,
    /// Executor rounds begun.
    pub round: u32,
    /// What the executor is told in the current (or next) round.
    pub brief: String,
    /// The current round's outcome, once it ended.
    pub outcome: Option<Outcome>,
    /// The decider's word on the current round.
    pub judgement: Option<Judgement>,
    /// The executor's tool results so far, one line each ([`result_line`]).
    #[serde(default)]
    pub results: Vec<String>,
    /// The request as its turn perceived it (the host's environment, the actor's
    /// state): each executor round starts from it, its words replaced by the brief.
    #[serde(default)]
    pub observation: Option<Observation>,
}

impl Supervision {
    pub fn new(input: &str, max_rounds: u32) -> Self {
        Self {
            input: input.to_owned(),
            max_rounds: max_rounds.max(1),
            complexity: None,
            plan: None,
            round: 0,
            brief: input.to_owned(),
            outcome: None,
            judgement: None,
            results: Vec::new(),
            observation: None,
        }
    }

    /// Each executor round starts from `observation` (the request as its turn
    /// perceived it) instead of a plain chat message.
    pub fn observing(mut self, observation: Observation) -> Self {
        self.observation = Some(observation);
        self
    }

    /// What an executor round told `brief` starts from.
    pub fn observation_for(&self, brief: String) -> Observation {
        match &self.observation {
            Some(observation) => {
                let mut observation = observation.clone();
                observation.subject.content = brief;
                observation
            }
            None => Observation::chat(brief),
        }
    }

    fn numbered(&self) -> String {
        let tasks = self.plan.as_deref().unwrap_or_default();
        let numbered: Vec<String> = (1..)
            .zip(tasks)
            .map(|(n, task)| format!("{n}. {task}"))
            .collect();
        numbered.join("\n")
    }

    /// What is needed next; asking it twice changes nothing.
    pub fn next(&self) -> Next {
        let Some(complexity) = &self.complexity else {
            return Next::Ask(Question::Complexity(self.input.clone()));
        };
        let execute = |round| Next::Execute {
            round,
            brief: self.brief.clone(),
        };
        if self.plan.is_none() {
            return Next::Ask(Question::Plan {
                level: complexity.level,
                text: self.input.clone(),
            });
        }
        match (&self.outcome, &self.judgement) {
            _ if self.round == 0 => execute(1),
            (None, _) => execute(self.round),
            (Some(outcome), None) => Next::Ask(Question::Decision {
                round: self.round,
                text: self.decision_text(outcome),
            }),
            (Some(_), Some(j)) if j.done || self.round >= self.max_rounds => self.done(),
            (Some(_), Some(_)) => execute(self.round + 1),
        }
    }

    /// What the decider reads: the request, the plan, each tool result of the
    /// executor's rounds so far, how its last round ended and what it reported.
    fn decision_text(&self, outcome: &Outcome) -> String {
        let results = if self.results.is_empty() {
            "(no tool was called)".to_owned()
        } else {
            self.results.join("\n")
        };
        let ended = match outcome {
            Outcome::Answered { .. } => "answered",
            Outcome::GoalComplete { .. } => "goal complete",
            Outcome::CapReached { .. } => "stopped at its step cap",
            Outcome::Aborted { .. } => "aborted",
            Outcome::BudgetReached { .. } => "stopped by a budget",
            Outcome::Failed { .. } => "failed",
        };
        format!(
            "Request: {}\nPlan:\n{}\nTool results:\n{results}\nExecutor's outcome: \
             {ended}\nExecutor's report: {}",
            self.input,
            self.numbered(),
            outcome.text()
        )
    }

    fn done(&self) -> Next {
        Next::Done(Report {
            complexity: self.complexity.clone().unwrap_or(Complexity {
                level: Level::Simple,
                reason: String::new(),
            }),
            plan: self.plan.clone().unwrap_or_default(),
            outcome: self.outcome.clone().unwrap_or(Outcome::Failed {
                error: "the executor never ran".into(),
            }),
            judgement: self.judgement.clone(),
            rounds: self.round,
        })
    }

    /// Takes the model's answer; the status to tell.
    pub fn answered(&mut self, answer: Answer) -> Status {
        match answer {
            Answer::Complexity(complexity) => {
                let status = Status::Assessed {
                    level: complexity.level,
                    reason: complexity.reason.clone(),
                };
                self.complexity = Some(complexity);
                status
            }
            Answer::Plan(plan) => {
                self.plan = Some(plan.tasks.clone());
                self.brief = format!(
                    "{}\n\nThe whole plan:\n{}\nCarry out every task.",
                    self.input,
                    self.numbered()
                );
                Status::Planned { tasks: plan.tasks }
            }
            Answer::Decision(judgement) => {
                if !judgement.done {
                    self.brief = format!(
                        "{}\n\nThe whole plan:\n{}\nStill to do: {}",
                        self.input,
                        self.numbered(),
                        judgement.summary
                    );
                }
                let status = Status::Decided {
                    done: judgement.done,
                    summary: judgement.summary.clone(),
                };
                self.judgement = Some(judgement);
                status
            }
        }
    }

    /// Round `round` begins (nothing changes when it has begun already); the status
    /// to tell.
    pub fn begin(&mut self, round: u32) -> Status {
        if round > self.round {
            self.round = round;
            self.outcome = None;
            self.judgement = None;
        }
        Status::Executing {
            round: self.round,
            max_rounds: self.max_rounds,
            tasks: self.plan.as_ref().map_or(0, Vec::len),
        }
    }

    /// The current round's executor ended with `outcome`; `results`: every tool
    /// result of the executor's rounds so far (lines of [`result_line`]), of which
    /// the decider reads the latest.
    pub fn executed(&mut self, outcome: Outcome, mut results: Vec<String>) {
        let old = results.len().saturating_sub(MAX_RESULTS);
        results.drain(..old);
        self.results = results;
        self.outcome = Some(outcome);
    }
}

/// The supervisor on its own, with no controller: its executor runs with the agent's
/// tools but no host page and no checkpoint, and cannot pause for a person (an
/// approval fails the round). The session controller (`app`) drives a
/// [`Supervision`] itself, with all of those.
pub struct Supervisor {
    /// The model that analyses, plans and decides.
    pub llm: Rc<dyn Llm>,
    pub executor: Rc<Agent>,
    /// Executor runs on a complex request, at most.
    pub max_rounds: u32,
}

impl Supervisor {
    /// Handles one request end to end.
    pub async fn handle(
        &self,
        run_id: &str,
        input: &str,
        clock: &dyn Clock,
        notify: &mut dyn FnMut(Progress),
    ) -> Result<Report, ContractError> {
        let mut supervision = Supervision::new(input, self.max_rounds);
        let mut results = Vec::new();
        loop {
            match supervision.next() {
                Next::Ask(question) => {
                    notify(Progress::Status(question.status()));
                    let answer = question.ask(&*self.llm).await?;
                    notify(Progress::Status(supervision.answered(answer)));
                }
                Next::Execute { round, brief } => {
                    notify(Progress::Status(supervision.begin(round)));
                    let run_id = format!("{run_id}-{round}");
                    let mut told = |progress: Progress| {
                        if let Progress::Executor(Event::Thought(Thought::ToolReturn {
                            tool,
                            result,
                            ..
                        })) = &progress
                        {
                            results.push(result_line(tool, result));
                        }
                        notify(progress);
                    };
                    let outcome = self.execute(&run_id, &brief, clock, &mut told).await;
                    supervision.executed(outcome, results.clone());
                }
                Next::Done(report) => return Ok(report),
            }
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
                    "the executor waits for approval of `{}`; only a session can pause for \
                     it (`supervisor: true` in createAgent)",
                    call.name
                ),
            },
        }
    }
}
