//! Compositions made of the same parts: an agent as another agent's tool, the
//! delegate router, and the supervisor — each with scripted models, natively.
#![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

use std::rc::Rc;

use familiar::base::clock::{FixedClock, Instant};
use familiar::compose::agent::{Agent, register_as_tool};
use familiar::compose::delegate::{Delegate, Routed};
use familiar::compose::supervisor::{Level, Progress, Status, Supervisor};
use familiar::llm::message::{Role, ToolCall};
use familiar::llm::rules::RulesModel;
use familiar::llm::scripted::ScriptedModel;
use familiar::llm::{ChatResponse, Usage};
use familiar::run::driver::{Seams, Stop, drive};
use familiar::run::{Observation, Outcome};
use familiar::tool::{NoArgs, ToolKind, ToolRegistry};
use futures::executor::block_on;

const CLOCK: FixedClock = FixedClock(Instant {
    epoch_ms: 1_795_338_000_000,
    utc_offset_minutes: 0,
});

fn agent(name: &str, model: &Rc<ScriptedModel>, tools: ToolRegistry) -> Rc<Agent> {
    Rc::new(Agent::new(
        name,
        format!("The {name} agent."),
        format!("You are the {name} agent."),
        Rc::clone(model) as Rc<dyn familiar::llm::Llm>,
        Rc::new(tools),
    ))
}

fn scripted(texts: &[&str]) -> Rc<ScriptedModel> {
    let model = Rc::new(ScriptedModel::new());
    for text in texts {
        model.push_text(*text);
    }
    model
}

fn answer(stop: &Stop) -> &str {
    match stop {
        Stop::Done(outcome) => outcome.text(),
        Stop::AwaitingApproval(call) => panic!("paused for {call:?}"),
    }
}

/// A coordinator with `sub` as its data tool, whose model asks `sub` for `request`
/// and then says `answer`.
fn coordinating(sub: Rc<Agent>, request: &str, answer: &str) -> (Rc<Agent>, Rc<ScriptedModel>) {
    let name = sub.name.clone();
    let mut tools = ToolRegistry::new();
    register_as_tool(&mut tools, sub, Rc::new(CLOCK), ToolKind::Data);
    let model = Rc::new(ScriptedModel::new());
    model
        .push_tool_calls(vec![ToolCall {
            id: "c1".into(),
            name: name.into(),
            arguments: serde_json::json!({ "request": request }).to_string().into(),
        }])
        .push_text(answer);
    (agent("coordinator", &model, tools), model)
}

fn first_input(model: &ScriptedModel) -> String {
    model.requests()[0].messages.last().unwrap().content.clone()
}

#[test]
fn the_delegate_routes_commands_mentions_and_plain_text() {
    let chat = scripted(&["Hello there!", "Sorry, I do not know /teleport."]);
    let search = scripted(&["Found three tutorials."]);
    let page = scripted(&["The page is about ale.", "It has two sections."]);
    let mut delegate = Delegate::new(agent("chat", &chat, ToolRegistry::new()))
        .with_agent(agent("search", &search, ToolRegistry::new()))
        .with_agent(agent("page", &page, ToolRegistry::new()))
        .with_command("search", "search");
    let mut say = |text: &str| block_on(delegate.chat("r", text, &CLOCK, &mut |_| {}));

    let (routed, stop) = say("hi");
    assert_eq!((routed, answer(&stop)), (Routed::ChitChat, "Hello there!"));

    let (routed, stop) = say("/search python tutorials");
    assert_eq!(routed, Routed::Command("search".into()));
    assert_eq!(answer(&stop), "Found three tutorials.");
    assert_eq!(first_input(&search), "python tutorials");

    let (routed, stop) = say("@page summarize this page");
    assert_eq!(routed, Routed::Agent("page".into()));
    assert_eq!(answer(&stop), "The page is about ale.");
    assert_eq!(first_input(&page), "summarize this page");

    // After `@page`, plain text stays with the page agent.
    let (routed, _) = say("and how long is it?");
    assert_eq!(routed, Routed::Current("page".into()));
    assert_eq!(page.requests().len(), 2);

    // An unknown command falls back to chit-chat with the whole message.
    let (routed, _) = say("/teleport home");
    assert_eq!(routed, Routed::ChitChat);
    assert_eq!(
        chat.requests()[1].messages.last().unwrap().content,
        "/teleport home"
    );
    assert_eq!(search.remaining() + page.remaining() + chat.remaining(), 0);
}

#[test]
fn a_sub_agent_serves_as_a_tool_of_its_coordinator() {
    let mut librarian_tools = ToolRegistry::new();
    librarian_tools.register_fn(
        "shelf",
        ToolKind::Data,
        "Lists the shelf.",
        |_: NoArgs, _| async { Ok::<_, String>(vec!["Lore of the Road", "Ale and You"]) },
    );
    let librarian_model = Rc::new(ScriptedModel::new());
    librarian_model
        .push_tool_calls(vec![ToolCall {
            id: "l1".into(),
            name: "shelf".into(),
            arguments: "{}".into(),
        }])
        .push_text("Two books: Lore of the Road, Ale and You.");
    let librarian = agent("librarian", &librarian_model, librarian_tools);

    let (coordinator, coordinator_model) = coordinating(
        librarian,
        "What books are on the shelf?",
        "The librarian says there are two books.",
    );

    let stop = block_on(coordinator.chat("r", "Any books?", &CLOCK, &mut |_| {}));
    assert_eq!(answer(&stop), "The librarian says there are two books.");
    assert_eq!(
        first_input(&librarian_model),
        "What books are on the shelf?"
    );
    let offered = &coordinator_model.requests()[0].tools;
    assert_eq!(offered[0].name, "librarian");
    assert_eq!(offered[0].parameters["required"][0], "request");
    let result = coordinator_model.requests()[1]
        .messages
        .iter()
        .find(|m| m.role == Role::Tool)
        .unwrap()
        .content
        .clone();
    assert_eq!(result, r#""Two books: Lore of the Road, Ale and You.""#);
}

#[test]
fn a_sub_agent_used_as_a_data_tool_cannot_act() {
    let burned = Rc::new(std::cell::Cell::new(false));
    let flag = Rc::clone(&burned);
    let mut arsonist_tools = ToolRegistry::new();
    arsonist_tools.register_fn(
        "burn",
        ToolKind::Action,
        "Burns the library.",
        move |_: NoArgs, _| {
            flag.set(true);
            async { Ok::<_, String>("burnt") }
        },
    );
    let arsonist_model = Rc::new(ScriptedModel::new());
    arsonist_model
        .push_tool_calls(vec![ToolCall {
            id: "b1".into(),
            name: "burn".into(),
            arguments: "{}".into(),
        }])
        .push_text("I could not burn anything.");
    let arsonist = agent("arsonist", &arsonist_model, arsonist_tools);
    let (coordinator, _) =
        coordinating(arsonist, "Tell me about the library.", "Nothing happened.");
    block_on(coordinator.chat("r", "Look around", &CLOCK, &mut |_| {}));
    assert!(!burned.get(), "a look-up ran an action");
    // Not offered, and refused when called anyway.
    assert!(
        arsonist_model.requests()[0]
            .tools
            .iter()
            .all(|t| t.name != "burn")
    );
}

/// A reply that said `text` (or called `calls`) and counted `tokens`.
fn counted(text: &str, calls: Vec<ToolCall>, tokens: (u32, u32)) -> ChatResponse {
    ChatResponse {
        usage: Some(Usage {
            prompt_tokens: tokens.0,
            completion_tokens: tokens.1,
        }),
        ..ChatResponse::from_calls(text.into(), calls)
    }
}

#[test]
fn what_a_sub_agent_used_comes_back_with_its_call_and_counts_in_the_callers_run_once() {
    let sub_model = Rc::new(ScriptedModel::new());
    sub_model.push(Ok(counted("Two books.", Vec::new(), (40, 4))));
    let librarian = agent("librarian", &sub_model, ToolRegistry::new());
    let mut tools = ToolRegistry::new();
    register_as_tool(&mut tools, librarian, Rc::new(CLOCK), ToolKind::Data);
    let model = Rc::new(ScriptedModel::new());
    let ask = ToolCall {
        id: "c1".into(),
        name: "librarian".into(),
        arguments: r#"{"request": "books?"}"#.into(),
    };
    model
        .push(Ok(counted("", vec![ask], (100, 10))))
        .push(Ok(counted("Two.", Vec::new(), (200, 20))));
    let coordinator = agent("coordinator", &model, tools);
    let mut run = coordinator.run(Observation::chat("Any books?"), Vec::new());
    let seams = Seams {
        llm: &*coordinator.llm,
        tools: &coordinator.tools,
        clock: &CLOCK,
        host: None,
        checkpoint: None,
        relay: None,
    };
    let mut returned = Vec::new();
    let stop = block_on(drive(&mut run, &seams, &mut |e| returned.push(e)));
    assert_eq!(answer(&stop), "Two.");
    let used = run.usage();
    assert_eq!(
        (used.calls, used.prompt_tokens, used.completion_tokens),
        (3, 340, 34),
        "its own two calls and the librarian's one"
    );
}

fn supervisor(
    decisions: &[&str],
    executor_answers: &[&str],
) -> (Supervisor, Rc<ScriptedModel>, Rc<ScriptedModel>) {
    let brain = scripted(decisions);
    let hands = scripted(executor_answers);
    let supervisor = Supervisor {
        llm: Rc::clone(&brain) as Rc<dyn familiar::llm::Llm>,
        executor: agent("executor", &hands, ToolRegistry::new()),
        max_rounds: 2,
    };
    (supervisor, brain, hands)
}

#[test]
fn a_simple_request_is_planned_as_one_task_executed_and_decided_as_the_seeds_trace_shows() {
    let (supervisor, brain, hands) = supervisor(
        &[
            r#"{"level": "SIMPLE", "reason": "one greeting"}"#,
            r#"{"tasks": ["Have Elena greet the player"]}"#,
            r#"{"done": true, "summary": "Elena greets the player"}"#,
        ],
        &["Elena greets you."],
    );
    let mut notices = Vec::new();
    let report = block_on(supervisor.handle(
        "s",
        "Have Elena greet the player",
        &CLOCK,
        &mut |n| notices.push(n),
    ))
    .unwrap();
    assert_eq!(report.complexity.level, Level::Simple);
    assert_eq!(report.plan, ["Have Elena greet the player"]);
    assert_eq!(report.judgement.unwrap().summary, "Elena greets the player");
    assert_eq!(
        report.outcome,
        Outcome::Answered {
            text: "Elena greets you.".into()
        }
    );
    let asked = brain.requests();
    assert_eq!(asked.len(), 3, "analysed, planned and decided");
    assert!(
        asked[1].system.contains("judged SIMPLE"),
        "{}",
        asked[1].system
    );
    assert!(
        asked[2].messages[0]
            .content
            .contains("Tool results:\n(no tool was called)"),
        "{}",
        asked[2].messages[0].content
    );
    assert!(first_input(&hands).starts_with("Have Elena greet the player\n\nThe whole plan:\n1. "));
    let statuses: Vec<_> = notices
        .iter()
        .filter_map(|n| match n {
            Progress::Status(s) => Some(s.clone()),
            Progress::Executor(_) => None,
        })
        .collect();
    assert_eq!(
        statuses,
        [
            Status::Analysing,
            Status::Assessed {
                level: Level::Simple,
                reason: "one greeting".into()
            },
            Status::Planning,
            Status::Planned {
                tasks: vec!["Have Elena greet the player".into()]
            },
            Status::Executing {
                round: 1,
                max_rounds: 2,
                tasks: 1
            },
            Status::Deciding { round: 1 },
            Status::Decided {
                done: true,
                summary: "Elena greets the player".into()
            }
        ]
    );
}

#[test]
fn the_rules_model_analyses_plans_and_decides_a_request_offline_from_its_tool_results() {
    let rules = RulesModel::from_json(
        r#"{"fallback": "I can tell the time and remember.",
            "rules": [{"keywords": ["time"], "tool": "current_time", "answer": "It is {time}."},
                      {"keywords": ["remember"], "tool": "remember", "answer": "Noted."}]}"#,
    )
    .unwrap();
    let rules: Rc<dyn familiar::llm::Llm> = Rc::new(rules);
    let mut tools = ToolRegistry::new();
    tools.register_fn(
        "current_time",
        ToolKind::Data,
        "The time.",
        |_: NoArgs, _| async { Ok::<_, String>(serde_json::json!({"time": "09:05"})) },
    );
    tools.register_fn(
        "remember",
        ToolKind::Action,
        "Remembers.",
        |_: NoArgs, _| async { Err::<serde_json::Value, _>("the memory is full".to_owned()) },
    );
    tools.set_approval("remember", familiar::tool::Approval::Auto);
    let executor = Rc::new(Agent::new(
        "executor",
        "Carries out the plan.",
        "You carry out the plan.",
        Rc::clone(&rules),
        Rc::new(tools),
    ));
    let supervisor = Supervisor {
        llm: rules,
        executor,
        max_rounds: 1,
    };
    let report = block_on(supervisor.handle(
        "s",
        "Tell me the time, then remember that the ale is cold",
        &CLOCK,
        &mut |_| {},
    ))
    .unwrap();
    assert_eq!(report.complexity.level, Level::Complex);
    assert_eq!(
        report.plan,
        ["Tell me the time", "Remember that the ale is cold"]
    );
    // The memory's failure is what the decider read, so the work is not done.
    let judgement = report.judgement.unwrap();
    assert!(!judgement.done);
    assert_eq!(
        judgement.summary,
        "still to fix: remember failed (`remember` failed: the memory is full)"
    );
}

#[test]
fn a_complex_request_is_planned_executed_with_the_whole_plan_and_decided() {
    let (supervisor, brain, hands) = supervisor(
        &[
            // The analyst's first answer is not JSON; it is re-asked once.
            "This looks COMPLEX to me.",
            r#"{"level": "COMPLEX", "reason": "a scene with branches"}"#,
            r#"{"tasks": ["Create Elena", "Write her greeting", "Add a choice hub"]}"#,
            r#"{"done": false, "summary": "the hub is missing"}"#,
            r#"{"done": true, "summary": "scene built"}"#,
        ],
        &["Created Elena and her greeting.", "Added the hub."],
    );
    let mut notices = Vec::new();
    let report = block_on(supervisor.handle(
        "s",
        "Build a scene where Elena greets the player and offers two choices",
        &CLOCK,
        &mut |n| notices.push(n),
    ))
    .unwrap();
    assert_eq!(report.complexity.level, Level::Complex);
    assert_eq!(report.plan.len(), 3);
    assert_eq!(report.rounds, 2);
    assert!(report.judgement.unwrap().done);
    let brief = first_input(&hands);
    assert!(
        brief.contains("1. Create Elena\n2. Write her greeting\n3. Add a choice hub"),
        "the executor gets the whole plan: {brief}"
    );
    let second = hands.requests()[1].messages.last().unwrap().content.clone();
    assert!(
        second.contains("Still to do: the hub is missing"),
        "{second}"
    );
    assert_eq!(brain.remaining(), 0);
    assert!(
        notices
            .iter()
            .any(|n| matches!(n, Progress::Status(s) if s.to_string() == "Plan of 3 tasks"))
    );
    assert!(notices.iter().any(|n| matches!(n, Progress::Executor(_))));
}

#[test]
fn a_supervisor_refuses_a_plan_that_stays_invalid() {
    let (supervisor, _, hands) = supervisor(
        &[
            r#"{"level": "COMPLEX"}"#,
            r#"{"tasks": []}"#,
            r#"{"tasks": []}"#,
            r#"{"tasks": []}"#,
        ],
        &[],
    );
    let error =
        block_on(supervisor.handle("s", "Do many things", &CLOCK, &mut |_| {})).unwrap_err();
    assert!(
        error.to_string().contains("the plan has no tasks"),
        "{error}"
    );
    assert!(hands.requests().is_empty(), "nothing was executed");
}
