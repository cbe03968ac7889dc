//! Seed 004's compositions through the session, natively: the composite gathers its
//! sub-agents' tools into its own list and routes each call to the owner; a
//! sub-agent's action goes through the same approval gate and host bridge as the main
//! agent's own, its steps tagged with its name (what the widget nests under it); each
//! agent perceives through its own environment, recorded in the turn's observe step;
//! the routes are listed as `{value, label}` with the way back to the main agent; and
//! a saved conversation keeps all of it across a reload.
#![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

use std::cell::RefCell;
use std::rc::Rc;

use familiar::app::{
    Config, Decision, Environment, HostTool, Options, Perceived, Session, Storage, VolatileStorage,
};
use familiar::base::clock::FrozenClock;
use familiar::compose::agent::Agent;
use familiar::compose::composite::composite;
use familiar::compose::delegate::Delegate;
use familiar::llm::ToolSpec;
use familiar::llm::rules::RulesModel;
use familiar::run::event::Event;
use familiar::run::interaction::{Interaction, Step};
use familiar::tool::{Approval, NoArgs, ToolKind, ToolRegistry};
use futures::executor::LocalPool;
use futures::future::LocalBoxFuture;
use futures::task::LocalSpawnExt;
use serde_json::{Value, json};

const RULES: &str = r#"{
    "fallback": "I am the guide.",
    "rules": [
        {"keywords": ["stock"], "tool": "stock", "answer": "{swords} swords in stock."},
        {"keywords": ["buy"], "tool": "buy_item", "arguments": {"item": "sword"},
         "answer": "Bought: {bought}."}
    ]
}"#;

struct Shop {
    session: Session,
    storage: Rc<VolatileStorage>,
    /// The shop's own `stock` calls, counted where the shop runs them.
    stock_calls: Rc<RefCell<u32>>,
    /// What the host's `buy_item` was called with.
    bought: Rc<RefCell<Vec<Value>>>,
}

fn rules() -> Rc<RulesModel> {
    Rc::new(RulesModel::from_json(RULES).unwrap())
}

/// `guide`, a composite over `shop`, whose tools are its page tool `stock` and the
/// host's `buy_item` (an action that always asks); `@shop` reaches the shop itself.
fn shop(storage: Rc<VolatileStorage>) -> Shop {
    let stock_calls = Rc::new(RefCell::new(0));
    let counted = Rc::clone(&stock_calls);
    let mut own = ToolRegistry::new();
    own.register_fn(
        "stock",
        ToolKind::Data,
        "What is in stock.",
        move |_: NoArgs, _| {
            *counted.borrow_mut() += 1;
            async { Ok::<_, String>(json!({"swords": 2})) }
        },
    );
    own.set_author("stock", familiar::tool::Author::Own);
    let shop = Rc::new(Agent::new(
        "shop",
        "Runs the shop",
        "You sell.",
        rules(),
        Rc::new(own),
    ));
    let guide = Agent::new(
        "guide",
        "",
        "You guide.",
        rules(),
        Rc::new(ToolRegistry::new()),
    );
    let names = vec!["stock".to_owned(), "buy_item".to_owned()];
    let guide = composite(guide, ToolRegistry::new(), &[(Rc::clone(&shop), names)]).unwrap();
    let delegate = Delegate::new(Rc::new(guide)).with_agent(shop);
    let config = Config {
        namespace: "c".into(),
        play: None,
        options: Options::default(),
        clock: Rc::new(FrozenClock::at(1_000)),
        storage: Rc::clone(&storage) as Rc<dyn Storage>,
        random: Rc::new(|| 0.5),
    };
    let session = Session::new(config, delegate);
    let bought = Rc::new(RefCell::new(Vec::new()));
    let calls = Rc::clone(&bought);
    let buy = HostTool {
        spec: ToolSpec {
            name: "buy_item".into(),
            description: "Buys an item.".into(),
            parameters: json!({"type": "object", "properties": {"item": {"type": "string"}}}),
        },
        kind: ToolKind::Action,
        approval: Approval::Ask,
        timeout_ms: 600_000,
        author: None,
        consequential: Vec::new(),
    };
    session
        .host_tools()
        .register(
            buy,
            Rc::new(move |_: &str, args| -> LocalBoxFuture<'static, _> {
                calls.borrow_mut().push(args.clone());
                Box::pin(async { Ok(json!({"bought": "a sword"})) })
            }),
        )
        .unwrap();
    Shop {
        session,
        storage,
        stock_calls,
        bought,
    }
}

fn send(pool: &mut LocalPool, session: &Session, text: &str) -> Rc<RefCell<Option<String>>> {
    let slot = Rc::new(RefCell::new(None));
    let out = Rc::clone(&slot);
    let (session, text) = (session.clone(), text.to_owned());
    pool.spawner()
        .spawn_local(async move {
            let outcome = session.send(&text).await.unwrap();
            *out.borrow_mut() = Some(outcome.text().to_owned());
        })
        .unwrap();
    pool.run_until_stalled();
    slot
}

fn last_turn(session: &Session) -> Interaction {
    session.conversation().interactions.last().unwrap().clone()
}

/// Each tool step of a turn as `(tool, its agent)`, approvals as `approve tool`.
fn tool_steps(turn: &Interaction) -> Vec<(String, Option<String>)> {
    turn.steps
        .iter()
        .filter_map(|step| match step {
            Step::ToolCall { call, .. } => Some((call.name.to_string(), step.agent())),
            Step::Approval { call, .. } => Some((format!("approve {}", call.name), step.agent())),
            _ => None,
        })
        .map(|(name, agent)| (name, agent.map(str::to_owned)))
        .collect()
}

#[test]
fn the_composite_offers_its_sub_agents_tools_and_routes_each_call_to_the_owner() {
    let shop = shop(Rc::new(VolatileStorage::new()));
    let mut pool = LocalPool::new();
    let answer = send(&mut pool, &shop.session, "what is in stock?");
    assert_eq!(answer.borrow().as_deref(), Some("2 swords in stock."));
    assert_eq!(
        *shop.stock_calls.borrow(),
        1,
        "the shop's own tool ran, once"
    );
    let turn = last_turn(&shop.session);
    assert_eq!(turn.agent, "guide", "the composite answered");
    assert_eq!(
        tool_steps(&turn),
        [("stock".to_owned(), Some("shop".to_owned()))]
    );
}

#[test]
fn a_sub_agents_action_asks_through_the_same_gate_and_runs_in_the_host_once_approved() {
    let shop = shop(Rc::new(VolatileStorage::new()));
    let events = Rc::new(RefCell::new(Vec::new()));
    let seen = Rc::clone(&events);
    shop.session.on(move |update| {
        if let familiar::app::Update::Event { event, .. } = update {
            seen.borrow_mut().push(event.clone());
        }
    });
    let mut pool = LocalPool::new();
    let answer = send(&mut pool, &shop.session, "buy me a sword");
    assert_eq!(*answer.borrow(), None, "paused for a person");
    assert!(shop.bought.borrow().is_empty(), "nothing bought unasked");
    let pending = shop.session.pending();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].call.name.as_ref(), "buy_item");
    assert!(events.borrow().iter().any(|e| matches!(
        e,
        Event::ApprovalNeeded { call, agent: Some(agent), .. }
            if call.name.as_ref() == "buy_item" && agent == "shop"
    )));
    shop.session
        .decide(&pending[0].key(), Decision::Approve)
        .unwrap();
    pool.run_until_stalled();
    assert_eq!(answer.borrow().as_deref(), Some("Bought: a sword."));
    assert_eq!(*shop.bought.borrow(), [json!({"item": "sword"})]);
    let shop_steps = vec![
        ("approve buy_item".to_owned(), Some("shop".to_owned())),
        ("buy_item".to_owned(), Some("shop".to_owned())),
    ];
    assert_eq!(tool_steps(&last_turn(&shop.session)), shop_steps);
}

#[test]
fn a_grant_given_on_a_sub_agents_card_covers_its_next_call_and_is_shown_under_it() {
    let shop = shop(Rc::new(VolatileStorage::new()));
    let mut pool = LocalPool::new();
    send(&mut pool, &shop.session, "buy me a sword");
    let key = shop.session.pending()[0].key();
    shop.session.decide(&key, Decision::ApproveAlways).unwrap();
    pool.run_until_stalled();
    let again = send(&mut pool, &shop.session, "buy another");
    assert_eq!(
        again.borrow().as_deref(),
        Some("Bought: a sword."),
        "no card"
    );
    assert_eq!(shop.bought.borrow().len(), 2);
    let turn = last_turn(&shop.session);
    let allowed = turn.steps.iter().find_map(|step| match step {
        Step::Approval { decision, .. } => Some((decision.clone(), step.agent())),
        _ => None,
    });
    assert_eq!(
        allowed,
        Some((
            Some(familiar::run::event::Decided::Allowed {
                by: familiar::run::event::Grant::Always
            }),
            Some("shop")
        ))
    );
}

#[test]
fn a_declined_sub_agent_action_never_reaches_the_host() {
    let shop = shop(Rc::new(VolatileStorage::new()));
    let mut pool = LocalPool::new();
    let answer = send(&mut pool, &shop.session, "buy me a sword");
    let pending = shop.session.pending();
    let deny = Decision::Deny {
        reason: "not today".into(),
    };
    shop.session.decide(&pending[0].key(), deny).unwrap();
    pool.run_until_stalled();
    assert!(answer.borrow().is_some());
    assert!(shop.bought.borrow().is_empty(), "the host never ran it");
}

fn environment(text: &'static str) -> Environment {
    Rc::new(move |_| {
        Box::pin(async move {
            Perceived {
                text: text.into(),
                ..Perceived::default()
            }
        })
    })
}

/// The environment each of `turns` recorded in its observe step.
fn perceived(session: &Session) -> Vec<Option<String>> {
    let turns = session.conversation().interactions;
    let observed = turns.iter().map(|turn| {
        turn.steps.iter().find_map(|step| match step {
            Step::Observe { environment, .. } => Some(environment.as_ref().map(|e| e.text.clone())),
            _ => None,
        })
    });
    observed.map(Option::flatten).collect()
}

#[test]
fn each_agent_perceives_through_its_own_environment_recorded_in_the_observe_step() {
    let shop = shop(Rc::new(VolatileStorage::new()));
    shop.session
        .set_environment(Some(environment("the town square at noon")));
    shop.session.set_agent_environment(
        "shop",
        Some(environment("the shop: two swords on the wall")),
    );
    let mut pool = LocalPool::new();
    send(&mut pool, &shop.session, "hello");
    send(&mut pool, &shop.session, "@shop hello");
    shop.session.set_agent_environment("shop", None);
    send(&mut pool, &shop.session, "@shop again");
    assert_eq!(
        perceived(&shop.session),
        [
            Some("the town square at noon".to_owned()),
            Some("the shop: two swords on the wall".to_owned()),
            Some("the town square at noon".to_owned()),
        ],
        "the guide's, the shop's own, then the session's again once the shop's is taken back"
    );
    let agents: Vec<String> = shop
        .session
        .conversation()
        .interactions
        .iter()
        .map(|t| t.agent.clone())
        .collect();
    assert_eq!(agents, ["guide", "shop", "shop"]);
}

#[test]
fn the_commands_are_listed_as_value_and_label_with_the_way_back_last() {
    let shop = shop(Rc::new(VolatileStorage::new()));
    let listed: Vec<(String, String)> = shop
        .session
        .commands()
        .into_iter()
        .map(|c| (c.value, c.label))
        .collect();
    assert_eq!(
        listed,
        [
            ("@shop".to_owned(), "Runs the shop".to_owned()),
            (
                "@guide".to_owned(),
                "Back to @guide, the main agent".to_owned()
            ),
        ]
    );
    let mut pool = LocalPool::new();
    send(&mut pool, &shop.session, "@shop");
    let back = send(&mut pool, &shop.session, &listed[1].0);
    assert_eq!(
        back.borrow().as_deref(),
        Some("You are now talking to @guide.")
    );
    send(&mut pool, &shop.session, "hi");
    assert_eq!(
        last_turn(&shop.session).agent,
        "guide",
        "back with the main agent"
    );
}

#[test]
fn a_reload_keeps_the_nested_steps_and_what_was_perceived() {
    let storage = Rc::new(VolatileStorage::new());
    let first = shop(Rc::clone(&storage));
    first
        .session
        .set_environment(Some(environment("the town square at noon")));
    let mut pool = LocalPool::new();
    send(&mut pool, &first.session, "what is in stock?");
    let before = first.session.conversation();
    let again = shop(Rc::clone(&first.storage));
    again.session.restore();
    let after = again.session.conversation();
    assert_eq!(after.interactions, before.interactions);
    assert_eq!(
        tool_steps(&after.interactions[0]),
        [("stock".to_owned(), Some("shop".to_owned()))]
    );
    assert_eq!(
        perceived(&again.session),
        [Some("the town square at noon".to_owned())]
    );
}

#[test]
fn a_turn_saved_before_compositions_tagged_steps_reads_as_the_main_agents_own() {
    let saved = json!({
        "id": 1, "input": "what time is it?", "status": "Completed", "draft": "",
        "steps": [
            {"type": "observe", "trigger": {"kind": "chat", "event": "message.received"}},
            {"type": "tool_call", "call": {"id": "c1", "name": "clock", "arguments": "{}"},
             "kind": "data", "result": {"ok": {"time": "noon"}}, "duration_ms": 1},
            {"type": "approval", "call": {"id": "c2", "name": "bump", "arguments": "{}"},
             "decision": {"decision": "approved"}}
        ]
    });
    let turn: Interaction = familiar::base::json::from_value(saved).unwrap();
    assert!(turn.steps.iter().all(|s| s.agent().is_none()));
    assert!(matches!(
        &turn.steps[0],
        Step::Observe {
            environment: None,
            ..
        }
    ));
    let written = serde_json::to_value(&turn).unwrap();
    let again: Interaction = familiar::base::json::from_value(written.clone()).unwrap();
    assert_eq!(again, turn);
    assert!(
        !written.to_string().contains("\"agent\":null"),
        "an untagged step is written as before: {written}"
    );
}
