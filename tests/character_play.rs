//! A character played by the session controller, natively: stale transactions expire
//! when a front end opens the character or loads the page (no next message needed),
//! and each expiry is told to the listeners; a turn tells the ones it found expired;
//! a character file's problems read with their paths.
#![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use familiar::app::{
    Config, Options, Play, Session, Storage, Update, VolatileStorage, load_character,
};
use familiar::base::clock::{Clock, Instant};
use familiar::compose::agent::Agent;
use familiar::compose::delegate::Delegate;
use familiar::llm::rules::RulesModel;
use familiar::store::{LocalStore, Store};
use familiar::tool::ToolRegistry;
use familiar::workflow::{Character, TransactionStatus};
use futures::executor::{LocalPool, block_on};
use futures::future::LocalBoxFuture;
use futures::task::LocalSpawnExt;

const DOTTY: &str = include_str!("../public/characters/dotty.json");
const START_MS: i64 = 1_795_338_000_000;

/// A clock set by the test; its timers never fire, so no time budget races a turn.
#[derive(Clone)]
struct SetClock(Rc<Cell<i64>>);

impl SetClock {
    fn minutes_later(&self, minutes: i64) {
        self.0.set(self.0.get() + minutes * 60_000);
    }
}

impl Clock for SetClock {
    fn now(&self) -> Instant {
        Instant {
            epoch_ms: self.0.get(),
            utc_offset_minutes: 0,
        }
    }

    fn sleep(&self, _: u64) -> LocalBoxFuture<'static, ()> {
        Box::pin(futures::future::pending())
    }
}

/// A page playing Dotty over a world store that outlives it, as a page reload would.
struct Page {
    session: Session,
    updates: Rc<RefCell<Vec<Update>>>,
}

/// A session over `play`, telling its updates to the returned log.
fn session(play: Option<Play>, clock: &SetClock) -> Page {
    let config = Config {
        namespace: "t".into(),
        play,
        options: Options::default(),
        clock: Rc::new(clock.clone()),
        storage: Rc::new(VolatileStorage::new()) as Rc<dyn Storage>,
        random: Rc::new(|| 0.5),
    };
    let rules = Rc::new(RulesModel::from_json(r#"{"fallback": "", "rules": []}"#).unwrap());
    let familiar = Agent::new("familiar", "", "", rules, Rc::new(ToolRegistry::new()));
    let session = Session::new(config, Delegate::new(Rc::new(familiar)));
    let updates = Rc::new(RefCell::new(Vec::new()));
    let log = Rc::clone(&updates);
    session.on(move |u| log.borrow_mut().push(u.clone()));
    Page { session, updates }
}

fn open_page(world: &Rc<LocalStore>, clock: &SetClock) -> Page {
    let play = Play {
        character: Rc::new(Character::from_json(DOTTY).unwrap()),
        world: Rc::clone(world) as Rc<dyn Store>,
        llm: None,
        player: "player".into(),
    };
    session(Some(play), clock)
}

impl Page {
    fn send(&self, text: &str) -> String {
        let mut pool = LocalPool::new();
        let slot = Rc::new(RefCell::new(None));
        let (out, session, text) = (Rc::clone(&slot), self.session.clone(), text.to_owned());
        pool.spawner()
            .spawn_local(async move { *out.borrow_mut() = Some(session.send(&text).await) })
            .unwrap();
        pool.run_until_stalled();
        let outcome = slot.borrow_mut().take().unwrap().unwrap();
        outcome.text().to_owned()
    }

    fn expired_told(&self) -> Vec<String> {
        self.updates
            .borrow()
            .iter()
            .filter_map(|u| match u {
                Update::TransactionExpired { transaction } => {
                    assert_eq!(u.name(), "transaction_expired");
                    Some(transaction.transaction_type.clone())
                }
                _ => None,
            })
            .collect()
    }
}

fn world() -> Rc<LocalStore> {
    Rc::new(LocalStore::new(familiar::world::schemas().unwrap()))
}

#[test]
fn a_stale_order_expires_when_the_page_loads_again_without_a_message() {
    let (world, clock) = (world(), SetClock(Rc::new(Cell::new(START_MS))));
    let first = open_page(&world, &clock);
    assert_eq!(
        first.send("I'll have a whiskey"),
        "One whiskey coming up, love — that'll be 5 coins."
    );
    clock.minutes_later(1);
    first.send("a bowl of stew");
    let pending = block_on(first.session.transactions()).unwrap();
    assert_eq!(pending.len(), 2, "a drink and a dish, side by side");

    // The tab is closed; sixteen minutes later the page loads again.
    clock.minutes_later(16);
    let again = open_page(&world, &clock);
    let expired = block_on(again.session.expire_stale()).unwrap();
    assert_eq!(expired.len(), 1);
    assert_eq!(
        (expired[0].transaction_type.as_str(), expired[0].status),
        ("drink_order", TransactionStatus::Expired)
    );
    assert_eq!(again.expired_told(), ["drink_order"]);
    let pending = block_on(again.session.transactions()).unwrap();
    let left: Vec<&str> = pending
        .iter()
        .map(|t| t.transaction_type.as_str())
        .collect();
    assert_eq!(left, ["food_order"], "the stew has 30 minutes");
    assert_eq!(again.expired_told(), ["drink_order"], "told once");
}

#[test]
fn reading_the_transactions_expires_the_stale_ones_first() {
    let (world, clock) = (world(), SetClock(Rc::new(Cell::new(START_MS))));
    let page = open_page(&world, &clock);
    page.send("I'll have a cider");
    clock.minutes_later(15);
    assert_eq!(
        block_on(page.session.transactions()).unwrap().len(),
        1,
        "15 minutes is not past 15"
    );
    clock.minutes_later(1);
    assert_eq!(block_on(page.session.transactions()).unwrap(), []);
    assert_eq!(page.expired_told(), ["drink_order"]);
}

#[test]
fn a_turn_tells_the_transactions_it_found_expired() {
    let (world, clock) = (world(), SetClock(Rc::new(Cell::new(START_MS))));
    let page = open_page(&world, &clock);
    page.send("I'll have wine");
    clock.minutes_later(20);
    let answer = page.send("I'll have a beer");
    assert_eq!(
        answer,
        "That wine you ordered went flat, love, so I tipped it out. One beer coming up, love — that'll be 3 coins."
    );
    assert_eq!(page.expired_told(), ["drink_order"]);
}

#[test]
fn a_session_playing_no_character_has_no_transactions() {
    let clock = SetClock(Rc::new(Cell::new(START_MS)));
    let page = session(None, &clock);
    assert_eq!(block_on(page.session.expire_stale()).unwrap(), []);
    assert_eq!(block_on(page.session.transactions()).unwrap(), []);
}

#[test]
fn a_character_files_problems_read_with_their_paths() {
    let message = load_character(
        r#"{"identity": {"name": "X"}, "workflows": {"w": {"enabled": true, "states": [
            {"name": "a", "triggers": {"intent_pattern": []}}]}}}"#,
        "https://example.org/x.json",
    )
    .unwrap_err();
    assert_eq!(
        message,
        "the character file https://example.org/x.json has problems:\n  \
         workflows.w.states[0].triggers.intent_pattern: unknown field `intent_pattern`, \
         expected one of `intent_patterns`, `keywords`, `llm_classification`"
    );
    let loaded = load_character(DOTTY, "dotty.json").unwrap();
    assert_eq!(loaded.identity.name, "Dotty");
}
