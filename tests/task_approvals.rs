//! Approvals people keep using: "Allow for this task" lets the rest of a run's page
//! actions on the same site run without a card each (each still shown as an `allowed`
//! event and recorded in the turn's steps), a standing permission per site covers the
//! harmless kinds (scroll, highlight; not hover, whose pointer handlers may act), and
//! an action that submits, buys, deletes, sends, signs out or acts in another site's
//! frame always asks, whatever was granted.
#![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

use std::cell::RefCell;
use std::rc::Rc;

use familiar::app::{
    AppError, Config, Decision, Options, PendingApproval, Session, Storage, Update, VolatileStorage,
};
use familiar::base::clock::FrozenClock;
use familiar::compose::agent::Agent;
use familiar::compose::delegate::Delegate;
use familiar::llm::message::ToolCall;
use familiar::llm::scripted::ScriptedModel;
use familiar::run::Outcome;
use familiar::run::event::{Decided, Event, Grant};
use familiar::run::interaction::Step;
use familiar::tool::ToolRegistry;
use familiar::tool::page::{self, Control, Form, PageDom, Snapshot};
use futures::executor::LocalPool;
use futures::task::LocalSpawnExt;

#[path = "common/fake_page.rs"]
mod fake_page;
use fake_page::{FakePage, control};

fn button(id: u32, name: &str) -> Control {
    control(id, "button", name)
}

/// A shop's cart page: four harmless buttons, "Place order" (5) and an order form (9)
/// whose button (6) posts it.
fn cart(location: &str) -> Snapshot {
    let mut pay = button(6, "Continue");
    pay.form = Some(9);
    Snapshot {
        title: "Cart".into(),
        location: location.into(),
        controls: vec![
            button(1, "Next"),
            button(2, "Show details"),
            button(3, "Add gift note"),
            button(4, "Expand"),
            button(5, "Place order"),
            pay,
        ],
        forms: vec![Form {
            id: 9,
            name: "Payment".into(),
            action: "/pay".into(),
            method: "post".into(),
            visible: true,
        }],
        ..Snapshot::default()
    }
}

struct Shop {
    session: Session,
    model: Rc<ScriptedModel>,
    page: Rc<FakePage>,
    /// The `allowed` events the session told its listeners, as (tool, grant, words).
    allowed: Rc<RefCell<Vec<(String, Grant, String)>>>,
}

fn shop() -> Shop {
    let page = Rc::new(FakePage::new(cart("https://shop.example/cart")));
    let mut tools = ToolRegistry::new();
    page::register(&mut tools, Rc::clone(&page) as Rc<dyn PageDom>);
    let model = Rc::new(ScriptedModel::new());
    let agent = Agent::new(
        "assistant",
        "Helps",
        "You help.",
        model.clone(),
        Rc::new(tools),
    );
    let config = Config {
        namespace: "t".into(),
        play: None,
        options: Options::default(),
        clock: Rc::new(FrozenClock::at(1_000)),
        storage: Rc::new(VolatileStorage::default()) as Rc<dyn Storage>,
        random: Rc::new(|| 0.5),
    };
    let session = Session::new(config, Delegate::new(Rc::new(agent)));
    let allowed = Rc::new(RefCell::new(Vec::new()));
    let seen = Rc::clone(&allowed);
    session.on(move |update| {
        if let Update::Event {
            event:
                Event::Allowed {
                    call,
                    description,
                    by,
                    ..
                },
            ..
        } = update
        {
            let words = description.clone().unwrap_or_default();
            seen.borrow_mut().push((call.name.to_string(), *by, words));
        }
    });
    Shop {
        session,
        model,
        page,
        allowed,
    }
}

impl Shop {
    /// The model's next reply: one call of `tool` on `element`.
    fn will(&self, id: &str, tool: &str, element: u32) -> &Self {
        self.model.push_tool_calls(vec![ToolCall {
            id: id.into(),
            name: tool.into(),
            arguments: format!(r#"{{"element": {element}}}"#).into(),
        }]);
        self
    }

    /// The model's next reply: one call of `tool` with `arguments`.
    fn will_call(&self, id: &str, tool: &str, arguments: serde_json::Value) -> &Self {
        self.model.push_tool_calls(vec![ToolCall {
            id: id.into(),
            name: tool.into(),
            arguments: arguments.to_string().into(),
        }]);
        self
    }

    fn then_answers(&self, text: &str) {
        self.model.push_text(text);
    }

    fn send(&self, pool: &mut LocalPool, text: &str) -> Slot {
        let slot: Slot = Rc::new(RefCell::new(None));
        let out = Rc::clone(&slot);
        let (session, text) = (self.session.clone(), text.to_owned());
        pool.spawner()
            .spawn_local(async move { *out.borrow_mut() = Some(session.send(&text).await) })
            .unwrap();
        pool.run_until_stalled();
        slot
    }

    /// The one call waiting for a person.
    fn asking(&self) -> PendingApproval {
        let pending = self.session.pending();
        assert_eq!(pending.len(), 1, "{pending:?}");
        pending[0].clone()
    }

    fn decide(&self, pool: &mut LocalPool, decision: Decision) {
        let key = self.asking().key();
        self.session.decide(&key, decision).unwrap();
        pool.run_until_stalled();
    }

    /// The elements clicked so far, in order.
    fn clicked(&self) -> Vec<u32> {
        let done = self.page.done.borrow();
        done.iter().map(|(element, _)| *element).collect()
    }

    /// The last turn's approval steps, as (tool, decision).
    fn approvals(&self) -> Vec<(String, Option<Decided>, Option<String>)> {
        let conversation = self.session.conversation();
        let turn = conversation.interactions.last().unwrap();
        turn.steps
            .iter()
            .filter_map(|step| match step {
                Step::Approval {
                    call,
                    description,
                    decision,
                    ..
                } => Some((call.name.to_string(), decision.clone(), description.clone())),
                _ => None,
            })
            .collect()
    }
}

type Slot = Rc<RefCell<Option<Result<Outcome, AppError>>>>;

fn answered(slot: &Slot) -> bool {
    matches!(slot.borrow().as_ref(), Some(Ok(Outcome::Answered { .. })))
}

#[test]
fn under_allow_for_this_task_three_more_clicks_run_without_a_card_and_each_is_shown_and_recorded() {
    let shop = shop();
    let mut pool = LocalPool::new();
    shop.will("c1", "click", 1)
        .will("c2", "click", 2)
        .will("c3", "click", 3)
        .will("c4", "click", 4)
        .then_answers("Done.");
    let turn = shop.send(&mut pool, "go through the cart and add a gift note");
    let card = shop.asking();
    assert_eq!(card.site.as_deref(), Some("https://shop.example"));
    assert_eq!(card.always_asks, None);
    assert_eq!(card.grants, [Grant::Task, Grant::Always]);
    shop.decide(&mut pool, Decision::ApproveForTask);
    assert!(
        answered(&turn),
        "no other card: {:?}",
        shop.session.pending()
    );
    assert_eq!(shop.clicked(), [1, 2, 3, 4]);
    let allowed = shop.allowed.borrow().clone();
    assert_eq!(allowed.len(), 3, "{allowed:?}");
    for ((tool, by, words), name) in allowed
        .iter()
        .zip(["Show details", "Add gift note", "Expand"])
    {
        assert_eq!((tool.as_str(), *by), ("click", Grant::Task));
        assert!(words.contains(name), "{words}");
    }
    let task = Some(Decided::Allowed { by: Grant::Task });
    let steps = shop.approvals();
    let decisions: Vec<_> = steps.iter().map(|(_, d, _)| d.clone()).collect();
    assert_eq!(
        decisions,
        [Some(Decided::Approved), task.clone(), task.clone(), task]
    );
    assert!(steps[3].2.as_deref().unwrap().contains("Expand"));
}

#[test]
fn a_click_on_place_order_still_asks_under_the_grant_and_offers_no_grant() {
    let shop = shop();
    let mut pool = LocalPool::new();
    shop.will("c1", "click", 1)
        .will("c2", "click", 2)
        .will("c3", "click", 5)
        .then_answers("I did not order.");
    let turn = shop.send(&mut pool, "order it");
    shop.decide(&mut pool, Decision::ApproveForTask);
    let card = shop.asking();
    assert_eq!(card.call.id, "c3");
    assert!(card.description.unwrap().contains("Place order"));
    assert_eq!(
        card.always_asks.as_deref(),
        Some("its name says \"place order\"")
    );
    assert!(card.grants.is_empty());
    assert_eq!(shop.clicked(), [1, 2], "Place order waits for the person");
    shop.decide(
        &mut pool,
        Decision::Deny {
            reason: "not yet".into(),
        },
    );
    assert!(answered(&turn));
    assert_eq!(shop.clicked(), [1, 2]);
}

#[test]
fn a_button_that_posts_a_form_asks_under_the_grant_and_a_task_answer_on_it_grants_nothing() {
    let shop = shop();
    let mut pool = LocalPool::new();
    shop.will("c1", "click", 6)
        .will("c2", "click", 1)
        .then_answers("Paid.");
    let turn = shop.send(&mut pool, "pay");
    let card = shop.asking();
    assert_eq!(
        card.always_asks.as_deref(),
        Some("it submits the form \"Payment\"")
    );
    // A host that answers "for this task" anyway gets a plain approval.
    shop.decide(&mut pool, Decision::ApproveForTask);
    assert_eq!(
        shop.asking().call.id,
        "c2",
        "Next asks: nothing was granted"
    );
    shop.decide(&mut pool, Decision::Approve);
    assert!(answered(&turn));
    assert_eq!(shop.clicked(), [6, 1]);
}

#[test]
fn the_grant_ends_with_the_run_and_the_next_message_asks_again() {
    let shop = shop();
    let mut pool = LocalPool::new();
    shop.will("c1", "click", 1).then_answers("Next.");
    let first = shop.send(&mut pool, "next");
    shop.decide(&mut pool, Decision::ApproveForTask);
    assert!(answered(&first));
    shop.will("c1", "click", 2).then_answers("Shown.");
    let second = shop.send(&mut pool, "show details");
    assert_eq!(shop.asking().call.name, "click", "a new message asks again");
    shop.decide(&mut pool, Decision::Approve);
    assert!(answered(&second));
    assert_eq!(shop.clicked(), [1, 2]);
    assert!(shop.allowed.borrow().is_empty());
}

#[test]
fn the_grant_holds_on_its_site_only() {
    let shop = shop();
    let mut pool = LocalPool::new();
    shop.will("c1", "click", 1)
        .will("c2", "click", 2)
        .then_answers("Done.");
    let turn = shop.send(&mut pool, "go on");
    *shop.page.page.borrow_mut() = cart("https://other.example/cart");
    shop.decide(&mut pool, Decision::ApproveForTask);
    // The grant was given for the site the card named: the page has moved on since.
    let card = shop.asking();
    assert_eq!(card.site.as_deref(), Some("https://other.example"));
    shop.decide(&mut pool, Decision::Approve);
    assert!(answered(&turn));
}

#[test]
fn a_standing_permission_covers_highlight_but_not_click() {
    let shop = shop();
    let mut pool = LocalPool::new();
    shop.session.allow_harmless("https://Shop.Example/", true);
    assert_eq!(shop.session.harmless_sites(), ["https://shop.example"]);
    shop.will("c1", "highlight", 1)
        .will("c2", "scroll_to", 2)
        .will("c3", "click", 1)
        .then_answers("Done.");
    let turn = shop.send(&mut pool, "show me next");
    assert_eq!(shop.asking().call.name, "click", "highlight and scroll ran");
    assert_eq!(shop.clicked(), [1, 2]);
    shop.decide(&mut pool, Decision::Approve);
    assert!(answered(&turn));
    let allowed = shop.allowed.borrow().clone();
    let by: Vec<_> = allowed.iter().map(|(t, g, _)| (t.as_str(), *g)).collect();
    assert_eq!(by, [("highlight", Grant::Site), ("scroll_to", Grant::Site)]);
    shop.session.allow_harmless("https://shop.example", false);
    assert!(shop.session.harmless_sites().is_empty());
}

#[test]
fn always_on_a_highlight_card_allows_the_harmless_kinds_on_that_site_from_then_on() {
    let shop = shop();
    let mut pool = LocalPool::new();
    shop.will("c1", "highlight", 1).then_answers("There.");
    let first = shop.send(&mut pool, "where is next");
    let card = shop.asking();
    assert_eq!(card.grants, [Grant::Task, Grant::Site, Grant::Always]);
    shop.decide(&mut pool, Decision::ApproveOnSite);
    assert!(answered(&first));
    assert_eq!(shop.session.harmless_sites(), ["https://shop.example"]);
    shop.will("c1", "scroll_to", 2)
        .will("c2", "hover", 2)
        .then_answers("Hovered.");
    let second = shop.send(&mut pool, "hover details");
    // Scrolling ran without a card in a later turn; a hover fires the page's pointer
    // handlers, which the standing permission does not cover.
    let card = shop.asking();
    assert_eq!(card.call.name, "hover");
    assert_eq!(card.grants, [Grant::Task, Grant::Always]);
    assert_eq!(shop.clicked(), [1, 2]);
    shop.decide(&mut pool, Decision::Approve);
    assert!(answered(&second));
    // "On this site" given on a click card grants nothing.
    shop.will("c1", "click", 1)
        .will("c2", "click", 2)
        .then_answers("Done.");
    let third = shop.send(&mut pool, "click through");
    shop.decide(&mut pool, Decision::ApproveOnSite);
    assert_eq!(shop.asking().call.id, "c2");
    shop.decide(&mut pool, Decision::Approve);
    assert!(answered(&third));
}

#[test]
fn always_for_the_click_tool_does_not_cover_a_click_that_always_asks() {
    let shop = shop();
    let mut pool = LocalPool::new();
    shop.will("c1", "click", 1)
        .will("c2", "click", 2)
        .will("c3", "click", 5)
        .then_answers("Stopped.");
    let turn = shop.send(&mut pool, "order");
    shop.decide(&mut pool, Decision::ApproveAlways);
    assert_eq!(
        shop.asking().call.id,
        "c3",
        "Show details ran, Place order asks"
    );
    assert_eq!(shop.allowed.borrow()[0].1, Grant::Always);
    shop.decide(
        &mut pool,
        Decision::Deny {
            reason: "no".into(),
        },
    );
    assert!(answered(&turn));
    assert_eq!(shop.clicked(), [1, 2]);
}

#[test]
fn an_approver_in_code_that_answers_task_is_asked_once_for_four_clicks() {
    let shop = shop();
    let mut pool = LocalPool::new();
    let asked = Rc::new(RefCell::new(0));
    let count = Rc::clone(&asked);
    shop.session
        .set_approver(Some(Rc::new(move |_: &PendingApproval| {
            *count.borrow_mut() += 1;
            Box::pin(async { Decision::ApproveForTask })
        })));
    for (id, element) in [("a", 1), ("b", 2), ("c", 3), ("d", 4)] {
        shop.will(id, "click", element);
    }
    shop.then_answers("Done.");
    let turn = shop.send(&mut pool, "go, and add a gift note");
    assert!(answered(&turn));
    assert_eq!(*asked.borrow(), 1);
    assert_eq!(shop.clicked(), [1, 2, 3, 4]);
}

#[test]
fn space_or_a_carriage_return_pressed_on_place_order_asks_under_the_grant() {
    let shop = shop();
    let mut pool = LocalPool::new();
    shop.will("c1", "click", 1)
        .will_call("c2", "press", serde_json::json!({"element": 5, "key": " "}))
        .will_call(
            "c3",
            "press",
            serde_json::json!({"element": 5, "key": "\r"}),
        )
        .then_answers("I did not order.");
    let turn = shop.send(&mut pool, "next, then order");
    shop.decide(&mut pool, Decision::ApproveForTask);
    for id in ["c2", "c3"] {
        let card = shop.asking();
        assert_eq!(card.call.id, id);
        assert!(card.always_asks.is_some(), "{card:?}");
        assert!(card.grants.is_empty());
        shop.decide(
            &mut pool,
            Decision::Deny {
                reason: "no".into(),
            },
        );
    }
    assert!(answered(&turn));
    assert_eq!(shop.clicked(), [1], "Place order was never pressed");
}

#[test]
fn a_click_inside_another_sites_frame_asks_under_the_grant_and_its_card_names_the_frame() {
    let shop = shop();
    let mut pool = LocalPool::new();
    let mut ad = button(7, "Continue");
    ad.frame = Some("https://ads.example".into());
    shop.page.page.borrow_mut().controls.push(ad);
    shop.will("c1", "click", 1)
        .will("c2", "click", 7)
        .then_answers("I left the ad alone.");
    let turn = shop.send(&mut pool, "next, then continue");
    shop.decide(&mut pool, Decision::ApproveForTask);
    let card = shop.asking();
    assert_eq!(card.call.id, "c2");
    assert_eq!(
        card.always_asks.as_deref(),
        Some("it is inside a frame of https://ads.example, another site")
    );
    assert_eq!(
        card.description.as_deref(),
        Some("Click the button \"Continue\" [7] inside a frame of https://ads.example")
    );
    assert!(card.grants.is_empty());
    shop.decide(
        &mut pool,
        Decision::Deny {
            reason: "no".into(),
        },
    );
    assert!(answered(&turn));
    assert_eq!(shop.clicked(), [1], "the ad's button was never clicked");
}
