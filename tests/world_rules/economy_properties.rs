//! The economy as properties (native only: proptest does not build for wasm32): any
//! actions keep a resident's stats in their bounds and make gold only by work, and a
//! resident that works, buys the seed's food and eats sustains itself.

use proptest::prelude::*;

use super::*;

/// One action of a resident, as the properties below draw them.
#[derive(Debug, Clone)]
enum Act {
    Work(usize),
    Buy(usize, i64),
    Eat(usize, i64),
    Fight(i64),
}

fn act() -> impl Strategy<Value = Act> {
    prop_oneof![
        (0..3usize).prop_map(Act::Work),
        (0..5usize, 1..=20i64).prop_map(|(i, n)| Act::Buy(i, n)),
        (0..5usize, 1..=20i64).prop_map(|(i, n)| Act::Eat(i, n)),
        (1..=40i64).prop_map(Act::Fight),
    ]
}

/// (gold, energy, health, morale) of user `id`.
fn stats(store: &LocalStore, id: i64) -> [i64; 4] {
    let me = user(store, id);
    ["gold", "energy", "health", "morale"].map(|stat| int(&me, stat))
}

/// What `id` holds: (item, quantity), by item.
fn held(store: &LocalStore, id: i64) -> Vec<(String, i64)> {
    rows(
        store,
        Select::from("inventory")
            .eq("user_id", id)
            .order("item_name", true),
    )
    .iter()
    .map(|slot| {
        (
            slot["item_name"].as_str().unwrap().to_owned(),
            int(slot, "quantity"),
        )
    })
    .collect()
}

/// Example 3's agent, played with `gold` and `energy`: the seed's world, food on sale.
fn resident(gold: i64, energy: i64) -> Rc<LocalStore> {
    let store = world();
    familiar::world::functions::play_as(&store, 3).unwrap();
    set_purse(&store, 3, gold, energy);
    store
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// The shipped economy, the seed's food in it: whatever a resident does, refusals
    /// included, its stats stay within 0-100 and its gold at 0 or more; gold grows only
    /// by work, by the job's pay, and energy only by eating; a refused action changes
    /// nothing.
    #[test]
    fn with_the_seeds_food_any_actions_keep_stats_in_0_to_100_and_gold_made_only_by_work(
        gold in 0..=300i64,
        energy in 0..=100i64,
        acts in proptest::collection::vec(act(), 1..60),
    ) {
        let store = resident(gold, energy);
        let (jobs, _) = economy(&store);
        let items: Vec<String> = rows(&store, Select::from("market_items").order("id", true))
            .iter()
            .map(|i| i["name"].as_str().unwrap().to_owned())
            .collect();
        prop_assert!(items.contains(&"food".to_owned()), "the seed's food is sold: {items:?}");
        for act in acts {
            let before = (stats(&store, 3), held(&store, 3));
            let (result, pay) = match &act {
                Act::Work(j) => {
                    let (job, pay, _) = &jobs[*j % jobs.len()];
                    (call(&store, "do_work", json!({"job": job})), *pay)
                }
                Act::Buy(i, n) => {
                    let args = json!({"item_name": items[*i % items.len()], "quantity": n});
                    (call(&store, "buy_item", args), 0)
                }
                Act::Eat(i, n) => {
                    let args = json!({"item_name": items[*i % items.len()], "quantity": n});
                    (call(&store, "consume_item", args), 0)
                }
                Act::Fight(n) => (call(&store, "join_battle", json!({"battle_id": 1, "energy": n})), 0),
            };
            let after = (stats(&store, 3), held(&store, 3));
            let [gold, energy, health, morale] = after.0;
            prop_assert!(gold >= 0, "{act:?}: gold {gold}");
            for (stat, value) in [("energy", energy), ("health", health), ("morale", morale)] {
                prop_assert!((0..=100).contains(&value), "{act:?}: {stat} {value}");
            }
            prop_assert!(after.1.iter().all(|(_, n)| *n >= 0), "{act:?}: {:?}", after.1);
            let gained = gold - before.0[0];
            let energized = energy - before.0[1];
            match (&act, result.is_ok()) {
                (_, false) => prop_assert_eq!(&after, &before, "{:?} refused changes nothing", act),
                (Act::Work(_), true) => prop_assert_eq!(gained, pay, "{:?} pays its job's pay", act),
                (Act::Eat(..), true) => {
                    prop_assert_eq!(gained, 0);
                    prop_assert!(energized >= 0, "{:?}: eating took energy", act);
                }
                (_, true) => {
                    prop_assert!(gained <= 0, "{:?} made {} gold", act, gained);
                    prop_assert!(energized <= 0, "{:?} gave {} energy", act, energized);
                }
            }
        }
    }

    /// A resident that works, buys the seed's food and eats sustains itself: from any
    /// purse that pays for a meal or a job, a round of the market check's chain (the
    /// best job it has the energy for, then food when its energy is below 50) never
    /// runs out, and from the second round on each ends with at least 50 energy and more
    /// gold than it began with; a round of mining, buying and eating ends 30 energy up
    /// (mining's 20 spent, the food's 50 back).
    #[test]
    fn a_resident_that_works_buys_food_and_eats_sustains_itself(
        gold in 0..=200i64,
        energy in 0..=100i64,
        rounds in 2..40usize,
    ) {
        prop_assume!(gold >= 10 || energy >= 10);
        let store = resident(gold, energy);
        let food = json!({"item_name": "food", "quantity": 1});
        for round in 0..rounds {
            let [gold, energy, ..] = stats(&store, 3);
            let job = [("mining", 20), ("farming", 10)]
                .into_iter()
                .find(|(_, cost)| energy >= *cost)
                .map(|(job, _)| job);
            if let Some(job) = job {
                call(&store, "do_work", json!({"job": job})).unwrap();
            }
            let worked = stats(&store, 3)[1];
            let ate = worked < LOW;
            if ate {
                call(&store, "buy_item", food.clone()).unwrap();
                call(&store, "consume_item", food.clone()).unwrap();
            }
            let [gold_after, energy_after, ..] = stats(&store, 3);
            prop_assert!(job.is_some() || ate, "round {round} did something");
            if round > 0 {
                prop_assert!(energy_after >= LOW, "round {round}: energy {energy_after}");
                prop_assert!(gold_after > gold, "round {round}: gold {gold} → {gold_after}");
            }
            if job == Some("mining") && ate {
                prop_assert_eq!(energy_after, energy + 30, "round {}: mined, bought, ate", round);
            }
        }
    }
}

/// Below this much energy the market check eats (`world::policy`'s `LOW`).
const LOW: i64 = 50;
