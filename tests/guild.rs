//! The guild council of seed 001, natively: its rules in the local store (the twin of
//! migrations/0010_guild_council.sql), a ten-tick game with a scripted model (a
//! malformed batch refused and never stored), ticks retried and run at once (applied
//! once), two tabs sharing one saved guild, clamping, the natural pressures, and the
//! offline council.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::cell::RefCell;
use std::rc::Rc;

use common::guild::guild_suite;
use familiar::base::clock::{FixedClock, Instant};
use familiar::guild::{
    Council, Exclusive, Game, GameError, LOCAL_OWNER, Proposal, Status, Unlocked, council,
};
use familiar::llm::scripted::ScriptedModel;
use familiar::store::{LocalStore, Persist, Select, Store, StoreError};
use futures::executor::block_on;
use futures::future::LocalBoxFuture;
use serde_json::{Value, json};

fn store() -> Rc<LocalStore> {
    Rc::new(
        familiar::guild::local(
            Rc::new(FixedClock(Instant {
                epoch_ms: 0,
                utc_offset_minutes: 0,
            })),
            None,
        )
        .unwrap(),
    )
}

fn game(store: &Rc<LocalStore>, council: Council) -> Game {
    Game::new(store.clone() as Rc<dyn Store>, Rc::new(Unlocked), council)
}

fn resources(value: &Value) -> [i64; 4] {
    ["gold", "food", "morale", "influence"].map(|r| value[r].as_i64().unwrap())
}

#[test]
fn the_rules_refuse_in_plain_words_apply_once_clamp_and_press() {
    let store = store();
    let log = block_on(guild_suite(store.clone() as Rc<dyn Store>));
    let error = |step: &str| log.step(step)["error"].as_str().unwrap().to_owned();
    assert_eq!(error("tick before founding"), "open your guild first");
    let opened = &log.step("open the guild")["ok"];
    assert_eq!(
        resources(opened),
        [100, 80, 55, 10],
        "the seed's starting guild"
    );
    assert_eq!(opened["tick"], json!(0));
    assert_eq!(
        log.step("open again: the same guild"),
        log.step("open the guild")
    );
    assert_eq!(
        error("four drafts"),
        "the council drafts 1 to 3 proposals at a time"
    );
    assert_eq!(
        error("no drafts"),
        "the council drafts 1 to 3 proposals at a time"
    );
    assert_eq!(error("an unknown resource"), "there is no resource mana");
    assert_eq!(
        error("a fractional change"),
        "the change to gold must be a whole number from -1000 to 1000"
    );
    assert_eq!(error("an empty title"), "the title is empty");
    assert_eq!(
        error("a title too long"),
        "the title is 121 characters; at most 120"
    );
    assert_eq!(error("no description"), "the description is empty");
    assert_eq!(log.step("nothing stored"), &json!({"ok": []}));
    let two = &log.step("two drafts")["ok"];
    assert_eq!(
        two[0]["predicted_delta"],
        json!({"food": 30, "gold": -10}),
        "30.0 is 30"
    );
    assert_eq!(two[0]["status"], json!("pending"));
    assert_eq!(
        error("a sixth and seventh"),
        "at most 6 proposals wait at once; 5 are waiting"
    );
    assert_eq!(error("scry with a bad delta"), "there is no resource luck");
    assert_eq!(error("scry with no risk"), "the risk note is empty");
    let scried = &log.step("scry the hunt")["ok"];
    assert_eq!(scried["risk_note"], json!("Wolves in the marsh."));
    assert_eq!(scried["predicted_delta"], json!({"food": 22, "gold": -10}));
    assert_eq!(
        error("accept the feast after all"),
        "proposal #2 is already rejected"
    );
    assert_eq!(
        error("scry the rejected feast"),
        "proposal #2 is already rejected"
    );
    assert_eq!(error("no such proposal"), "there is no proposal 999999999");
    assert_eq!(
        error("tick ahead of the guild"),
        "the guild is at tick 0, not 1"
    );

    // Tick 1: the hunt as scried (+22 food, -10 gold), the grain (+1000 food, clamped
    // at 999) and the festival (+200 influence, clamped at 100; -25 gold); then the
    // pressures: -5 gold, -10 food, -2 influence.
    let first = &log.step("tick 1")["ok"];
    assert_eq!(resources(first), [60, 989, 55, 98]);
    assert_eq!(first["applied"], json!(["#1", "#3", "#4"]));
    assert_eq!(first["fresh"], json!(true));
    assert_eq!(first["pressures"]["hungry"], json!(false));
    let retried = &log.step("tick 1 retried")["ok"];
    assert_eq!(
        resources(retried),
        resources(first),
        "the retry applied nothing"
    );
    assert_eq!(retried["fresh"], json!(false));
    assert_eq!(
        resources(&log.step("the guild after tick 1")["ok"]),
        [60, 989, 55, 98]
    );
    assert_eq!(
        error("accept an applied proposal"),
        "proposal #1 is already applied"
    );

    // Tick 2: the ruin empties treasury and stores (clamped at 0, not refused); the
    // guild goes hungry (-10 morale) and unpaid (-5).
    let ruined = &log.step("tick 2")["ok"];
    assert_eq!(resources(ruined), [0, 0, 40, 96]);
    assert_eq!(
        ruined["pressures"],
        json!({"gold": -5, "food": -10, "influence": -2, "morale": -15, "hungry": true, "unpaid": true})
    );
    let starving = &log.step("tick 3, nothing accepted")["ok"];
    assert_eq!(resources(starving), [0, 0, 25, 94]);
    assert_eq!(starving["applied"], json!([]));
    assert_eq!(
        log.step("tick 1 asked for again")["ok"]["fresh"],
        json!(false)
    );
    assert_eq!(
        resources(&log.step("tick 1 asked for again")["ok"]),
        [60, 989, 55, 98]
    );

    let proposals = log.step("the proposals at the end")["ok"]
        .as_array()
        .unwrap()
        .clone();
    let statuses: Vec<(&str, Option<i64>)> = proposals
        .iter()
        .map(|p| (p["status"].as_str().unwrap(), p["applied_tick"].as_i64()))
        .collect();
    assert_eq!(
        statuses,
        [
            ("applied", Some(1)),
            ("rejected", None),
            ("applied", Some(1)),
            ("applied", Some(1)),
            ("pending", None),
            ("applied", Some(2)),
        ]
    );
    let history = log.step("the history")["ok"].as_array().unwrap().clone();
    let ticks: Vec<i64> = history
        .iter()
        .map(|h| h["tick"].as_i64().unwrap())
        .collect();
    assert_eq!(
        ticks,
        [0, 1, 2, 3],
        "one record a tick, none for the repeats"
    );
}

#[test]
fn no_one_signed_in_has_no_guild() {
    let store = store();
    store.sign_in_as(None);
    let refused = block_on(game(&store, Council::offline()).board()).unwrap_err();
    assert_eq!(
        refused,
        GameError::Store(StoreError::PermissionDenied("sign in first".into()))
    );
    assert_eq!(refused.to_string(), "not allowed: sign in first");
    assert!(
        store
            .run_select(&Select::from("guilds"))
            .unwrap()
            .is_empty()
    );
}

fn batch(tick: i64) -> String {
    let drafts = json!([
        {"title": format!("Hunt {tick}"), "description": "Send the hunters out.",
         "predicted_delta": {"food": 20, "gold": -5}},
        {"title": format!("Feast {tick}"), "description": "Open the stores.",
         "predicted_delta": {"morale": 10, "food": -15}},
    ]);
    // Alternately bare and in a fenced block with prose: the contract extracts both.
    if tick % 2 == 0 {
        drafts.to_string()
    } else {
        format!("Here are the council's ideas:\n```json\n{drafts:#}\n```")
    }
}

fn pending(game: &Game) -> Vec<Proposal> {
    let board = block_on(game.board()).unwrap();
    board
        .proposals
        .into_iter()
        .filter(|p| p.status == Status::Pending)
        .collect()
}

#[test]
fn a_ten_tick_game_with_a_scripted_model() {
    let store = store();
    let model = Rc::new(ScriptedModel::new());
    let game = game(&store, Council::with_model(model.clone()));
    for tick in 0..10_i64 {
        if tick == 3 {
            // A malformed batch: missing fields, an unknown resource, no JSON at all.
            model.push_text(r#"[{"title": "Feast"}]"#);
            model.push_text(
                r#"[{"title": "Feast", "description": "d", "predicted_delta": {"mana": 5}}]"#,
            );
            model.push_text("The council is undecided.");
            let asked = model.requests().len();
            let before = block_on(game.board()).unwrap().proposals;
            let refused = block_on(game.propose(None)).unwrap_err();
            let message = refused.to_string();
            assert!(
                message.starts_with("The council's proposals were unusable, so none were stored"),
                "{message}"
            );
            assert_eq!(
                block_on(game.board()).unwrap().proposals,
                before,
                "nothing stored"
            );
            let requests = model.requests();
            assert_eq!(requests.len() - asked, 3, "asked once, re-asked twice");
            let reask = requests
                .last()
                .unwrap()
                .messages
                .last()
                .unwrap()
                .content
                .clone();
            assert!(
                reask.contains("could not be used") && reask.contains("mana"),
                "{reask}"
            );
        }
        model.push_text(batch(tick));
        let made = block_on(game.propose(None)).unwrap();
        assert_eq!(made.len(), 2);
        let (hunt, feast) = (made[0].id, made[1].id);
        model.push_text(r#"{"predicted_delta": {"food": 15, "gold": -5}, "risk_note": "Wolves."}"#);
        let scried = block_on(game.scry(hunt)).unwrap();
        assert_eq!(scried.risk_note.as_deref(), Some("Wolves."));
        block_on(game.decide(hunt, true)).unwrap();
        block_on(game.decide(feast, false)).unwrap();
        assert!(pending(&game).is_empty());
        let record = block_on(game.tick(tick)).unwrap();
        assert_eq!(record.tick, tick + 1);
        assert_eq!(record.applied, [hunt]);
        assert_eq!(record.fresh, Some(true));
        let retried = block_on(game.tick(tick)).unwrap();
        assert_eq!(
            retried.resources, record.resources,
            "a retry changes nothing"
        );
        assert_eq!(retried.fresh, Some(false));
    }
    assert_eq!(model.remaining(), 0, "every scripted answer was used");
    let board = block_on(game.board()).unwrap();
    assert_eq!(board.guild.tick, 10);
    // Each tick: the hunt as scried (+15 food, -5 gold), then -10 food, -5 gold and -2
    // influence; influence stops at 0 (clamped) after tick 5; no hunger, wages paid.
    let r = board.guild.resources;
    assert_eq!([r.gold, r.food, r.morale, r.influence], [0, 130, 55, 0]);
    assert_eq!(board.history.len(), 11);
    let influence: Vec<i64> = board
        .history
        .iter()
        .map(|h| h.resources.influence)
        .collect();
    assert_eq!(influence, [10, 8, 6, 4, 2, 0, 0, 0, 0, 0, 0]);
    let applied: Vec<Option<i64>> = board
        .proposals
        .iter()
        .filter(|p| p.status == Status::Applied)
        .map(|p| p.applied_tick)
        .collect();
    assert_eq!(
        applied,
        (1..=10).map(Some).collect::<Vec<_>>(),
        "each hunt applied once"
    );
}

#[test]
fn an_unusable_forecast_changes_nothing() {
    let store = store();
    let model = Rc::new(ScriptedModel::new());
    let game = game(&store, Council::with_model(model.clone()));
    model.push_text(batch(0));
    let made = block_on(game.propose(None)).unwrap();
    for _ in 0..3 {
        model.push_text(r#"{"predicted_delta": {"food": 5}}"#);
    }
    let refused = block_on(game.scry(made[0].id)).unwrap_err();
    assert!(
        refused
            .to_string()
            .starts_with("The oracle's forecast was unusable, so nothing changed"),
        "{refused}"
    );
    assert_eq!(block_on(game.board()).unwrap().proposals, made);
}

#[test]
fn two_ticks_at_once_apply_once() {
    let store = store();
    let game = game(&store, Council::offline());
    let made = block_on(game.propose(None)).unwrap();
    block_on(game.decide(made[0].id, true)).unwrap();
    let (one, two) = block_on(futures::future::join(game.tick(0), game.tick(0)));
    let (one, two) = (one.unwrap(), two.unwrap());
    assert_eq!(one.resources, two.resources);
    let fresh: Vec<Option<bool>> = vec![one.fresh, two.fresh];
    assert_eq!(
        fresh.iter().filter(|f| **f == Some(true)).count(),
        1,
        "one applied"
    );
    let board = block_on(game.board()).unwrap();
    assert_eq!(board.guild.tick, 1);
    assert_eq!(board.history.len(), 2);
}

/// Browser storage shared by two tabs.
#[derive(Clone, Default)]
struct Shared(Rc<RefCell<Option<String>>>);

impl Persist for Shared {
    fn load(&self) -> Option<String> {
        self.0.borrow().clone()
    }

    fn save(&self, snapshot: &str) {
        *self.0.borrow_mut() = Some(snapshot.to_owned());
    }
}

/// The page's lock as the browser gives it to one tab: the section reads the saved
/// guild again before its work (what `web::lock` does under the Web Locks API).
struct Reloading(Rc<LocalStore>);

impl Exclusive for Reloading {
    fn exclusive<'a>(&'a self, work: LocalBoxFuture<'a, ()>) -> LocalBoxFuture<'a, ()> {
        Box::pin(async move {
            self.0.reload().unwrap();
            work.await;
        })
    }
}

fn tab(storage: &Shared, locked: bool) -> (Rc<LocalStore>, Game) {
    let clock = Rc::new(FixedClock(Instant {
        epoch_ms: 0,
        utc_offset_minutes: 0,
    }));
    let store = Rc::new(familiar::guild::local(clock, Some(Box::new(storage.clone()))).unwrap());
    let lock: Rc<dyn Exclusive> = if locked {
        Rc::new(Reloading(store.clone()))
    } else {
        Rc::new(Unlocked)
    };
    let game = Game::new(store.clone() as Rc<dyn Store>, lock, Council::offline());
    (store, game)
}

/// The ticks a new tab finds after a second tab, opened at tick 0, asks for tick 1
/// once the first tab has taken ticks 1 and 2.
fn ticks_after_a_late_second_tab(locked: bool) -> (Option<bool>, Vec<i64>) {
    let storage = Shared::default();
    let (_, first) = tab(&storage, locked);
    block_on(first.board()).unwrap();
    let (_, second) = tab(&storage, locked);
    let made = block_on(first.propose(None)).unwrap();
    block_on(first.decide(made[0].id, true)).unwrap();
    block_on(first.tick(0)).unwrap();
    block_on(first.tick(1)).unwrap();
    let late = block_on(second.tick(0)).unwrap();
    let (_, third) = tab(&storage, locked);
    let board = block_on(third.board()).unwrap();
    (late.fresh, board.history.iter().map(|h| h.tick).collect())
}

#[test]
fn two_tabs_sharing_the_saved_guild_tick_once_under_the_lock() {
    let (fresh, ticks) = ticks_after_a_late_second_tab(true);
    assert_eq!(fresh, Some(false), "the late tick answered tick 1's record");
    assert_eq!(ticks, [0, 1, 2], "and changed nothing");
    // Without the lock's reload, the late tab ticks its stale copy and saves it over
    // the first tab's work: the reason the page takes the lock.
    let (fresh, ticks) = ticks_after_a_late_second_tab(false);
    assert_eq!(fresh, Some(true));
    assert_eq!(ticks, [0, 1], "tick 2 and the accepted proposal were lost");
}

/// The page's lock as `web::lock` takes it: the section starts from the snapshot the
/// last one handed over (Cache Storage, in the browser), else the saved one, and hands
/// its own over before the lock is let go; without `handover`, it reads the saved one.
struct HandingOver {
    store: Rc<LocalStore>,
    handover: Option<Shared>,
}

impl Exclusive for HandingOver {
    fn exclusive<'a>(&'a self, work: LocalBoxFuture<'a, ()>) -> LocalBoxFuture<'a, ()> {
        Box::pin(async move {
            match self.handover.as_ref().and_then(Persist::load) {
                Some(snapshot) => self.store.adopt(&snapshot).unwrap(),
                None => self.store.reload().unwrap(),
            }
            work.await;
            if let Some(handover) = &self.handover {
                handover.save(&self.store.snapshot().unwrap());
            }
        })
    }
}

/// Two tabs at tick 0, each with a `localStorage` of its own that never sees the
/// other's writes (Chromium sends another renderer's changes on eventually, apart from
/// the lock's grant): the first takes tick 1, then the second asks for it. Its answer's `fresh`, and the
/// ticks each tab's saved copy then holds.
fn second_tab_asks_for_a_tick_the_first_took(
    handover: Option<Shared>,
) -> (Option<bool>, [usize; 2]) {
    let clock = Rc::new(FixedClock(Instant {
        epoch_ms: 0,
        utc_offset_minutes: 0,
    }));
    let tabs: Vec<(Shared, Game)> = (0..2)
        .map(|_| {
            let storage = Shared::default();
            let store = Rc::new(
                familiar::guild::local(clock.clone(), Some(Box::new(storage.clone()))).unwrap(),
            );
            let lock = HandingOver {
                store: store.clone(),
                handover: handover.clone(),
            };
            let game = Game::new(store as Rc<dyn Store>, Rc::new(lock), Council::offline());
            (storage, game)
        })
        .collect();
    let (first, second) = (&tabs[0].1, &tabs[1].1);
    block_on(first.board()).unwrap();
    block_on(second.board()).unwrap();
    block_on(first.tick(0)).unwrap();
    let late = block_on(second.tick(0)).unwrap();
    let ticks = |storage: &Shared| {
        let saved: Value = serde_json::from_str(&storage.load().unwrap()).unwrap();
        saved["guild_history"]["rows"].as_array().unwrap().len()
    };
    (late.fresh, [ticks(&tabs[0].0), ticks(&tabs[1].0)])
}

#[test]
fn a_tab_whose_storage_lags_is_handed_the_guild_with_the_lock_and_ticks_once() {
    // Handed over with the lock: the second tab is told tick 1 was taken, and both
    // saved copies hold ticks 0 and 1 (the second adopted the first's).
    let (fresh, ticks) = second_tab_asks_for_a_tick_the_first_took(Some(Shared::default()));
    assert_eq!(fresh, Some(false), "tick 1 had already been taken");
    assert_eq!(ticks, [2, 2]);
    // Read from its own lagging storage, it would apply tick 1 a second time.
    let (fresh, _) = second_tab_asks_for_a_tick_the_first_took(None);
    assert_eq!(fresh, Some(true), "the race the handover closes");
}

#[test]
fn the_offline_council_drafts_for_the_greatest_needs_and_forecasts_conservatively() {
    let store = store();
    let game = game(&store, Council::offline());
    let made = block_on(game.propose(None)).unwrap();
    // The seed guild's greatest needs: influence (10 of a comfortable 40), then gold
    // (100 of 200).
    let titles: Vec<&str> = made.iter().map(|p| p.title.as_str()).collect();
    assert_eq!(titles, ["Sponsor the festival", "Escort the salt caravan"]);
    let scried = block_on(game.scry(made[1].id)).unwrap();
    // +40 gold hoped, 30 forecast; the -5 morale cost kept whole.
    assert_eq!(
        json!(scried.predicted_delta),
        json!({"gold": 30, "morale": -5})
    );
    assert_eq!(
        scried.risk_note.as_deref(),
        Some("It costs 5 morale; the gains may fall short.")
    );
    // The same guild gets the same drafts: deterministic.
    let again = council::offline_drafts(&block_on(game.board()).unwrap().guild, None);
    assert_eq!(again.0.len(), 2);
    assert_eq!(again.0[0].title, "Sponsor the festival");
    assert_eq!(LOCAL_OWNER, block_on(game.board()).unwrap().guild.owner);
}

/// Seed 001's `{ guild?: string }`: the name a player gives reaches the model's prompt
/// (as a quoted name) and the offline council's drafts; a blank name is none, and one
/// past 60 characters is refused before anyone is asked, with nothing stored.
#[test]
fn a_guild_named_when_proposing_is_drafted_for_by_that_name() {
    let store = store();
    let model = Rc::new(ScriptedModel::new());
    let asked = game(&store, Council::with_model(model.clone()));
    assert!(!asked.offline(), "a council with a model asks it");
    model.push_text(batch(0));
    block_on(asked.propose(Some("  Iron Wolves "))).unwrap();
    model.push_text(batch(0));
    block_on(asked.propose(Some("   "))).unwrap();
    let prompts: Vec<String> = model
        .requests()
        .iter()
        .map(|r| r.messages.last().unwrap().content.clone())
        .collect();
    assert!(
        prompts[0].starts_with("The guild is called \"Iron Wolves\". The guild now: tick 0"),
        "{}",
        prompts[0]
    );
    assert!(
        prompts[1].starts_with("The guild now: tick 0"),
        "{}",
        prompts[1]
    );

    let before = block_on(asked.board()).unwrap().proposals;
    let long = "W".repeat(61);
    let refused = block_on(asked.propose(Some(&long))).unwrap_err();
    assert_eq!(refused, GameError::Name(61));
    assert_eq!(
        refused.to_string(),
        "a guild's name is 1 to 60 characters; this one is 61"
    );
    assert_eq!(model.requests().len(), 2, "the model was not asked");
    assert_eq!(
        block_on(asked.board()).unwrap().proposals,
        before,
        "nothing stored"
    );

    let offline = game(&store, Council::offline());
    assert!(
        offline.offline(),
        "no model: the council plays by its rules"
    );
    let made = block_on(offline.propose(Some("Iron Wolves"))).unwrap();
    assert!(!made.is_empty());
    for proposal in &made {
        assert!(
            proposal.description.starts_with("Iron Wolves: "),
            "{}",
            proposal.description
        );
    }
}
