//! The actor's current state in the seed's observation (seed 000, OBSERVE: "load
//! minimal actor state — who am I right now?"): beside its identity, its morale,
//! energy, health and gold as its world user's row holds them when the trigger fires.
//! A trigger made earlier (a schedule) fires later, so the session reads them then,
//! with [`perceive`]; tests and replays that know the stats build the observation with
//! them through [`super::triggers::WorldEvent::observe_with`]. Everything else the
//! agent looks up through its data tools.

use crate::base::json::Read;
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::run::Observation;
use crate::store::{Filtered, Select, Store, StoreError};

/// An agent's stats, as its `users` row holds them (0-100, gold from 0).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Read)]
pub struct Stats {
    #[serde(default)]
    pub morale: i64,
    #[serde(default)]
    pub energy: i64,
    #[serde(default)]
    pub health: i64,
    #[serde(default)]
    pub gold: i64,
}

/// The keys the stats take in the actor's state, beside `identity`.
const KEYS: [&str; 4] = ["morale", "energy", "health", "gold"];

impl Stats {
    /// World user `user`'s stats now; `None` when there is no such user.
    pub async fn read(store: &dyn Store, user: i64) -> Result<Option<Self>, StoreError> {
        let select = Select::from("users")
            .columns("morale,energy,health,gold")
            .eq("id", user)
            .maybe_single();
        let Some(row) = store.select(&select).await?.pop() else {
            return Ok(None);
        };
        crate::base::json::from_value(Value::Object(row))
            .map(Some)
            .map_err(|e| StoreError::Invalid(format!("the stats of user {user}: {e}")))
    }

    /// Puts the stats into an actor's state (replacing any it carried).
    pub fn put(&self, state: &mut Map<String, Value>) {
        let values = [self.morale, self.energy, self.health, self.gold];
        for (key, value) in KEYS.into_iter().zip(values) {
            state.insert(key.into(), json!(value));
        }
    }
}

/// The world user an observation's actor is, when its id names one (a number, or a
/// number written as text, as a host page may give it).
fn actor_user(observation: &Observation) -> Option<i64> {
    match observation.actor.id.as_ref()? {
        Value::Number(id) => id.as_i64(),
        Value::String(id) => id.trim().parse().ok(),
        _ => None,
    }
}

/// Reads the acting agent's current stats into `observation.actor.state` (morale,
/// energy, health and gold, beside its identity), when its `actor.id` is a world user:
/// the stats it has when the trigger fires, not when the trigger was made. Answers the
/// stats put, or `None` when the actor is no world user (the observation is left as
/// it was). On a store error the observation is left as it was and the error
/// returned, for the caller to say; the run can go on without the stats (the agent
/// can still call `get_my_stats`).
pub async fn perceive(
    store: &dyn Store,
    observation: &mut Observation,
) -> Result<Option<Stats>, StoreError> {
    let Some(user) = actor_user(observation) else {
        return Ok(None);
    };
    let stats = Stats::read(store, user).await?;
    if let Some(stats) = &stats {
        stats.put(&mut observation.actor.state);
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use std::rc::Rc;

    use futures::executor::block_on;

    use super::*;
    use crate::base::clock::{FixedClock, Instant};
    use crate::store::LocalStore;
    use crate::world::triggers::{WorldEvent, agents};

    fn world() -> LocalStore {
        let clock = Rc::new(FixedClock(Instant {
            epoch_ms: 1_795_338_000_000,
            utc_offset_minutes: 0,
        }));
        crate::world::local(clock, None).unwrap()
    }

    #[test]
    fn a_world_agents_observation_carries_its_stats_as_they_are_when_it_fires() {
        let store = world();
        let dotty = &agents()[0];
        let mut market = WorldEvent::MarketCheck.observe(dotty);
        // The row changes between the trigger's making and its firing.
        let later = crate::store::Patch {
            table: "users".into(),
            set: serde_json::from_value(json!({"energy": 12})).unwrap(),
            filters: Vec::new(),
            returning: true,
        }
        .eq("id", 1);
        store.run_update(&later).unwrap();
        let stats = block_on(perceive(&store, &mut market)).unwrap();
        let want = Stats {
            morale: 70,
            energy: 12,
            health: 100,
            gold: 40,
        };
        assert_eq!(stats, Some(want));
        let state = &market.actor.state;
        assert_eq!(
            (
                &state["energy"],
                &state["morale"],
                &state["health"],
                &state["gold"]
            ),
            (&json!(12), &json!(70), &json!(100), &json!(40))
        );
        assert_eq!(state["identity"], json!(dotty.identity), "identity kept");
        let situation = market.situation().unwrap();
        assert!(situation.contains("\"energy\":12"), "{situation}");
    }

    #[test]
    fn an_actor_that_is_no_world_user_is_left_as_it_was() {
        let store = world();
        let mut chat = Observation::chat("hello");
        assert_eq!(block_on(perceive(&store, &mut chat)).unwrap(), None);
        assert_eq!(chat, Observation::chat("hello"));
        let mut stranger = WorldEvent::MarketCheck.observe(&agents()[0]);
        stranger.actor.id = Some(json!(999));
        let before = stranger.clone();
        assert_eq!(block_on(perceive(&store, &mut stranger)).unwrap(), None);
        assert_eq!(stranger, before);
        let mut text_id = WorldEvent::MarketCheck.observe(&agents()[0]);
        text_id.actor.id = Some(json!("4"));
        let mira = block_on(perceive(&store, &mut text_id)).unwrap().unwrap();
        assert_eq!((mira.energy, mira.gold), (45, 0));
    }

    #[test]
    fn a_store_error_leaves_the_observation_as_it_was_and_is_returned() {
        // A store with no `users` table answers every read with an error.
        let store = LocalStore::new(Vec::new());
        let mut market = WorldEvent::MarketCheck.observe(&agents()[0]);
        let before = market.clone();
        let error = block_on(perceive(&store, &mut market));
        assert!(error.is_err(), "{error:?}");
        assert_eq!(market, before);
    }

    #[test]
    fn an_observation_built_with_stats_equals_one_perceived() {
        let store = world();
        let dotty = &agents()[0];
        let mut perceived = WorldEvent::BattleStarted { battle_id: 1 }.observe(dotty);
        let stats = block_on(perceive(&store, &mut perceived)).unwrap().unwrap();
        let built = WorldEvent::BattleStarted { battle_id: 1 }.observe_with(dotty, &stats);
        assert_eq!(built, perceived);
    }
}
