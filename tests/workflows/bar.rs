//! A character talking to one user over a fresh local store, at a manual clock: each
//! message goes through `before` and `after` as the controller sends it.

use std::rc::Rc;

use familiar::base::clock::{Clock, ManualClock};
use familiar::llm::Llm;
use familiar::store::{LocalStore, Store};
use familiar::workflow::{Character, Prepared, Transaction};
use futures::executor::block_on;

pub const DOTTY: &str = include_str!("../../public/characters/dotty.json");
pub const BRANNOC: &str = include_str!("../../public/characters/brannoc.json");
/// The seed's CDL workflow schema example, verbatim.
pub const SEED_SCHEMA: &str = include_str!("../fixtures/characters/seed_002_schema.json");
/// The seed's `characters/examples/dotty.json`, verbatim.
pub const SEED_DOTTY: &str = include_str!("../fixtures/characters/seed_002_dotty.json");
/// A whole CDL file with sections the workflows do not read, and two workflows.
pub const MARIGOLD: &str = include_str!("../fixtures/characters/marigold.json");

pub struct Bar {
    pub character: Character,
    pub store: Rc<LocalStore>,
    pub clock: ManualClock,
}

impl Bar {
    pub fn new(file: &str) -> Self {
        Self {
            character: Character::from_json(file).unwrap(),
            store: Rc::new(LocalStore::new(familiar::world::schemas().unwrap())),
            clock: ManualClock::starting_at(1_795_338_000_000),
        }
    }

    /// One message, a second after the last: before, (the model would answer
    /// here), after.
    pub fn say(&self, message: &str) -> (Prepared, Option<Transaction>) {
        self.say_with(message, None)
    }

    pub fn say_with(
        &self,
        message: &str,
        llm: Option<&dyn Llm>,
    ) -> (Prepared, Option<Transaction>) {
        block_on(self.clock.sleep(1_000));
        let store: &dyn Store = &*self.store;
        let prepared = block_on(
            self.character
                .before(store, &self.clock, llm, "user-1", message),
        )
        .unwrap();
        let recorded = block_on(
            self.character
                .after(store, &self.clock, "user-1", &prepared),
        )
        .unwrap();
        (prepared, recorded)
    }

    /// What the character says to `message` with no model.
    pub fn reply(&self, message: &str) -> String {
        let (prepared, _) = self.say(message);
        self.character.offline_reply(&prepared).unwrap_or_default()
    }

    /// The newest pending transaction.
    pub fn pending(&self) -> Option<Transaction> {
        self.all_pending().into_iter().next()
    }

    /// Every pending transaction, one per workflow type, newest first.
    pub fn all_pending(&self) -> Vec<Transaction> {
        let store: &dyn Store = &*self.store;
        block_on(self.character.transactions(store).all_pending("user-1")).unwrap()
    }

    pub fn wait_minutes(&self, minutes: u64) {
        block_on(self.clock.sleep(minutes * 60_000));
    }
}
