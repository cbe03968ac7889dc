//! The page's own world (the JSON seed) and its three agents behind one session, as the
//! World view plays it.

use familiar::world::triggers::WorldEvent;

use super::*;

/// The page's own world (the JSON seed), its three agents behind one session, played
/// by the seeded player who owns them: what the World view does, natively.
#[test]
fn in_the_pages_world_the_owner_s_agents_act_as_themselves_through_one_session() {
    use std::cell::RefCell;
    use std::rc::Rc;

    use familiar::app::{Config, Options, Session, Storage, Update, VolatileStorage};
    use familiar::base::clock::{FixedClock, Instant};
    use familiar::compose::delegate::Delegate;
    use familiar::run::event::{Event, Thought};
    use familiar::store::{Filtered, Select, Store};
    use familiar::world::residents::resident;
    use familiar::world::triggers::agents;

    let clock = Rc::new(FixedClock(Instant {
        epoch_ms: 1_795_338_000_000,
        utc_offset_minutes: 0,
    }));
    let store: Rc<dyn Store> = Rc::new(familiar::world::local(clock.clone(), None).unwrap());
    let roster = agents();
    let mut delegate = Delegate::new(Rc::new(resident(&roster[0], &store, None)));
    for who in &roster[1..] {
        delegate = delegate.with_agent(Rc::new(resident(who, &store, None)));
    }
    let config = Config {
        namespace: "page".into(),
        play: None,
        options: Options {
            planning_on_events: true,
            ..Options::default()
        },
        clock,
        storage: Rc::new(VolatileStorage::new()) as Rc<dyn Storage>,
        random: Rc::new(|| 0.5),
    };
    let session = Session::new(config, delegate);
    // The owner approves each action their agents ask for (once a run has read
    // another party's text), and the test keeps what was asked.
    let asked = Rc::new(RefCell::new(Vec::new()));
    let log = Rc::clone(&asked);
    session.set_approver(Some(Rc::new(
        move |pending: &familiar::app::PendingApproval| {
            log.borrow_mut()
                .push((pending.agent.clone(), pending.call.name.clone()));
            Box::pin(async { familiar::app::Decision::Approve })
        },
    )));
    let tools = Rc::new(RefCell::new(Vec::new()));
    let sink = Rc::clone(&tools);
    session.on(move |update| {
        if let Update::Event {
            turn,
            event: Event::Thought(Thought::ToolReturn { tool, .. }),
            ..
        } = update
            && !tool.starts_with("get_")
            && tool != "plan"
        {
            sink.borrow_mut().push((*turn, tool.clone()));
        }
    });
    let user = |id: i64| {
        let select = Select::from("users").eq("id", id);
        futures::executor::block_on(store.select(&select)).unwrap()[0].clone()
    };
    let mira = roster.iter().find(|a| a.name == "Mira").unwrap();
    let market = WorldEvent::MarketCheck.observe(mira);
    futures::executor::block_on(session.trigger(market)).unwrap();
    let (energy, gold) = (user(4)["energy"].clone(), user(4)["gold"].clone());
    // Mining: 45 energy less 20, 50 gold; the seed's food: 10 gold, 50 energy. The
    // chain restores energy (with the page's bread it left her at 26).
    assert_eq!(
        (energy, gold),
        (json!(75), json!(40)),
        "more energy than her 45"
    );
    assert_eq!(user(3)["gold"], json!(25), "the owner's rows are untouched");
    for who in &roster {
        let battle = WorldEvent::BattleStarted { battle_id: 1 }.observe(who);
        futures::executor::block_on(session.trigger(battle)).unwrap();
    }
    let actions: Vec<String> = tools.borrow().iter().map(|(_, t)| t.to_string()).collect();
    assert_eq!(
        actions,
        [
            "buy_item",
            "do_work",
            "buy_item",
            "consume_item",
            "join_battle",
            "join_battle",
            "ignore_battle"
        ]
    );
    assert_eq!(user(1)["energy"], json!(0), "Dotty fought with all she had");
    assert_eq!(user(4)["energy"], json!(75), "Mira stayed out");
    // Loyal to the Lantern Guild (85), Dotty votes for its proposal.
    let proposal = WorldEvent::Proposal {
        proposal_id: 1,
        title: "Buy a second lantern for the north gate".into(),
    };
    futures::executor::block_on(session.trigger(proposal.observe(&roster[0]))).unwrap();
    assert_eq!(tools.borrow().last().unwrap().1, "vote_on_proposal");
    let votes =
        futures::executor::block_on(store.select(&Select::from("votes").eq("user_id", 1))).unwrap();
    assert_eq!(votes[0]["in_favour"], json!(true));
    // The market check read only Mira's own rows and ran unasked; once the battle's
    // look-ups had read names players wrote, each action waited for the owner.
    let asked: Vec<(String, String)> = asked
        .borrow()
        .iter()
        .map(|(a, t)| (a.clone(), t.to_string()))
        .collect();
    let pair = |agent: &str, tool: &str| (agent.to_owned(), tool.to_owned());
    assert_eq!(
        asked,
        [
            pair("Dotty", "join_battle"),
            pair("Brannoc", "join_battle"),
            pair("Mira", "ignore_battle"),
            pair("Dotty", "vote_on_proposal"),
        ]
    );
}

/// A person's message to a resident is observed as the world's triggers are (seed
/// 000's observe node): stamped, with the resident as its actor and its stats as they
/// are when the message arrives, read by the session's environment. Here Mira, asked
/// after her market check, carries the energy it left her.
#[test]
fn a_message_to_a_resident_is_stamped_and_carries_its_stats() {
    use std::rc::Rc;

    use familiar::app::{Config, Options, Perceived, Session, Storage, VolatileStorage};
    use familiar::base::clock::{FixedClock, Instant};
    use familiar::compose::delegate::Delegate;
    use familiar::llm::scripted::ScriptedModel;
    use familiar::store::{Filtered, Patch, Store};
    use familiar::world::residents::resident;
    use familiar::world::triggers::agents;

    let clock = Rc::new(FixedClock(Instant {
        epoch_ms: 1_795_338_000_000,
        utc_offset_minutes: 0,
    }));
    let local = familiar::world::local(clock.clone(), None).unwrap();
    let later = Patch {
        table: "users".into(),
        set: json!({"energy": 75, "gold": 40})
            .as_object()
            .unwrap()
            .clone(),
        filters: Vec::new(),
        returning: false,
    }
    .eq("id", 4);
    local.run_update(&later).unwrap();
    let store: Rc<dyn Store> = Rc::new(local);
    let model = Rc::new(ScriptedModel::new());
    model.push_text("Fed and rested.");
    let mira = agents().into_iter().find(|a| a.name == "Mira").unwrap();
    let llm: Rc<dyn familiar::llm::Llm> = model.clone();
    let delegate = Delegate::new(Rc::new(resident(&mira, &store, Some(llm))));
    let config = Config {
        namespace: "page".into(),
        play: None,
        options: Options::default(),
        clock,
        storage: Rc::new(VolatileStorage::new()) as Rc<dyn Storage>,
        random: Rc::new(|| 0.5),
    };
    let session = Session::new(config, delegate);
    let world = Rc::clone(&store);
    session.set_environment(Some(Rc::new(move |observation| {
        let (world, mut observation) = (Rc::clone(&world), observation.clone());
        Box::pin(async move {
            familiar::world::perceive(&*world, &mut observation)
                .await
                .unwrap();
            Perceived {
                actor: observation.actor.state,
                ..Perceived::default()
            }
        })
    })));
    futures::executor::block_on(session.send("How are you?")).unwrap();
    let system = model.requests()[0].system.to_string();
    assert!(
        system.contains("SITUATION: message.received (chat) at 2026-11-22T09:00:00"),
        "{system}"
    );
    for stat in [r#""energy":75"#, r#""gold":40"#, r#""id":4"#] {
        assert!(system.contains(stat), "{stat} in {system}");
    }
}

/// The World view's "Join my community" (seed 000's example 2): the player's
/// invitation, sent and fired at each resident, is weighed by who sent it. Brannoc,
/// the player's rival, refuses it as an enemy's; Mira, who has no standing with the
/// player (the seed's zeros), declines politely.
#[test]
fn the_world_views_invitation_is_weighed_by_who_sent_it() {
    use std::rc::Rc;

    use familiar::app::{Config, Decision, Options, Session, Storage, VolatileStorage};
    use familiar::base::clock::{FixedClock, Instant};
    use familiar::compose::delegate::Delegate;
    use familiar::store::{Filtered, Row, Rpc, Select, Store};
    use familiar::world::residents::resident;
    use familiar::world::triggers::{INVITE, agents};

    let clock = Rc::new(FixedClock(Instant {
        epoch_ms: 1_795_338_000_000,
        utc_offset_minutes: 0,
    }));
    let store: Rc<dyn Store> = Rc::new(familiar::world::local(clock.clone(), None).unwrap());
    let roster = agents();
    let mut delegate = Delegate::new(Rc::new(resident(&roster[0], &store, None)));
    for who in &roster[1..] {
        delegate = delegate.with_agent(Rc::new(resident(who, &store, None)));
    }
    let config = Config {
        namespace: "page".into(),
        play: None,
        options: Options::default(),
        clock,
        storage: Rc::new(VolatileStorage::new()) as Rc<dyn Storage>,
        random: Rc::new(|| 0.5),
    };
    let session = Session::new(config, delegate);
    session.set_approver(Some(Rc::new(|_: &familiar::app::PendingApproval| {
        Box::pin(async { Decision::Approve })
    })));
    for (name, answer) in [
        ("Brannoc", "Get lost, traitor. I don't join enemies."),
        ("Mira", "Thank you, but I stay where I am."),
    ] {
        let who = roster.iter().find(|a| a.name == name).unwrap();
        let mut args = Row::new();
        args.insert("user_id".into(), json!(who.id));
        args.insert("content".into(), json!(INVITE));
        let send = Rpc {
            function: "send_message".into(),
            args,
        };
        let sent = futures::executor::block_on(store.rpc(&send)).unwrap();
        let invite = WorldEvent::Message {
            from: sent["sender_id"].as_i64().unwrap(),
            message_id: sent["id"].as_i64().unwrap(),
            text: INVITE.into(),
        };
        futures::executor::block_on(session.trigger(invite.observe(who))).unwrap();
        let replies = Select::from("messages")
            .eq("sender_id", who.id)
            .eq("receiver_id", 3);
        let replies = futures::executor::block_on(store.select(&replies)).unwrap();
        let said: Vec<&Value> = replies.iter().map(|m| &m["content"]).collect();
        assert_eq!(said, [&json!(answer)], "{name}");
    }
}
