//! The world's rules for the local store: the Rust twin of the action functions in
//! `migrations/0006_actions.sql`, `0008_player_rules.sql` and `0009_world_triggers.sql`, registered as the local store's `rpc` functions so
//! offline play gives the answers Supabase gives. Each function acts as the signed-in
//! user's world user (`users.auth_id` = the store's `sub`), checks the same rules with
//! the same words, changes the rows, and records its result under the user's ledger
//! key; the local store undoes every write of a function that fails.
//!
//! The store conformance suite runs the tools over both and compares the answers; a
//! change to a rule is made in both files.

mod agents;
mod community;
mod market;

pub use agents::ledger_owner;

use std::rc::Rc;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::actions::{BattleArgs, BattleRef};
use crate::store::{Filtered, Insert, LocalStore, Patch, Row, Select, StoreError, local::Function};
use community::{
    abstain_from_vote, create_post, create_proposal, join_community, leave_community,
    reply_to_message, send_message, vote_on_proposal,
};
use market::{buy_item, consume_item, do_work};

type Outcome = Result<Value, StoreError>;

/// The acting user and their store, for one call.
struct Actor<'a> {
    store: &'a LocalStore,
    me: Row,
}

impl Actor<'_> {
    fn id(&self) -> i64 {
        int(&self.me, "id")
    }
}

/// A rule as an rpc function takes it, acting as the signed-in user or (`Some`) an
/// agent they own.
type Rule = Rc<dyn Fn(&LocalStore, &Row, Option<i64>) -> Outcome>;

/// The world's actions by name: what the tools call by rpc, and what `act_as` runs.
fn rules() -> Vec<(&'static str, Rule)> {
    vec![
        ("send_message", rule_of("send_message", send_message)),
        (
            "reply_to_message",
            rule_of("reply_to_message", reply_to_message),
        ),
        ("create_post", rule_of("create_post", create_post)),
        ("join_battle", rule_of("join_battle", join_battle)),
        ("ignore_battle", rule_of("ignore_battle", ignore_battle)),
        ("buy_item", rule_of("buy_item", buy_item)),
        ("consume_item", rule_of("consume_item", consume_item)),
        ("do_work", rule_of("do_work", do_work)),
        ("join_community", rule_of("join_community", join_community)),
        (
            "leave_community",
            rule_of("leave_community", leave_community),
        ),
        (
            "vote_on_proposal",
            rule_of("vote_on_proposal", vote_on_proposal),
        ),
        (
            "abstain_from_vote",
            rule_of("abstain_from_vote", abstain_from_vote),
        ),
        (
            "create_proposal",
            rule_of("create_proposal", create_proposal),
        ),
    ]
}

/// The world's action functions, added to `store` (the names the tools call by rpc).
pub fn install(store: LocalStore) -> LocalStore {
    let rules = rules();
    let mut store = store
        .with_function("enter_world", Rc::new(enter_world))
        .with_function("act_as", agents::act_as(rules.clone()))
        .with_function("claim_agents", Rc::new(agents::claim_agents))
        .with_function("set_standing_orders", Rc::new(agents::set_standing_orders));
    for (name, rule) in rules {
        let direct: Function =
            Rc::new(move |store: &LocalStore, args: &Row| rule(store, args, None));
        store = store.with_function(name, direct);
    }
    store
}

/// A job and an item that would make gold from nothing, in the words of the database's
/// `gold_loop()` (`migrations/0008_player_rules.sql`, with the proof): a job that pays
/// for no energy, or one that pays more per energy than an item on sale costs per
/// energy it restores. `None` when every cycle of work, buy and eat nets no gold.
///
/// A report, enforced by neither store: seed 000's own economy (mining 50 gold for 20
/// energy, food 10 gold for 50 energy) is such a cycle, and its agents restore their
/// energy by that very chain, so the database lifted 0008's guard
/// (`migrations/0014_seed_economy.sql`, which says what bounds it instead) and the
/// local store never refuses a job or an item on its account.
pub fn gold_loop(store: &LocalStore) -> Result<Option<String>, StoreError> {
    let mut jobs = store.run_select(&Select::from("jobs").order("name", true))?;
    jobs.retain(|job| int(job, "pay") > 0);
    if let Some(job) = jobs.iter().find(|job| int(job, "energy_cost") == 0) {
        return Ok(Some(format!(
            "{} pays {} gold for no energy",
            text_of(job, "name"),
            int(job, "pay")
        )));
    }
    let on_sale = Select::from("market_items")
        .eq("available", true)
        .order("name", true);
    let foods: Vec<(Row, i64)> = store
        .run_select(&on_sale)?
        .into_iter()
        .filter_map(|item| {
            let energy = item.get("effects")?.get("energy")?.as_i64()?;
            (energy > 0).then_some((item, energy))
        })
        .collect();
    for job in &jobs {
        let (pay, cost) = (int(job, "pay"), int(job, "energy_cost"));
        for (item, energy) in &foods {
            let price = int(item, "price");
            if i128::from(price) * i128::from(cost) < i128::from(pay) * i128::from(*energy) {
                return Ok(Some(format!(
                    "{} pays {pay} gold for {cost} energy, and {} restores {energy} energy for \
                     {price} gold: work, buy and eat would make gold",
                    text_of(job, "name"),
                    text_of(item, "name"),
                )));
            }
        }
    }
    Ok(None)
}

fn text_of(row: &Row, column: &str) -> String {
    row.get(column)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// Plays as world user `id` in the local store: links that user to a local sign-in
/// (`sub` = the id as text, which is also the ledger's owner) and signs in as it.
pub fn play_as(store: &LocalStore, id: i64) -> Result<(), StoreError> {
    let sub = id.to_string();
    let link = Patch {
        table: "users".into(),
        set: one_value("auth_id", json!(sub)),
        filters: Vec::new(),
        returning: true,
    }
    .eq("id", id);
    if store.run_update(&link)?.is_empty() {
        return Err(StoreError::Invalid(format!("there is no user {id}")));
    }
    store.sign_in_as(Some(sub));
    Ok(())
}

/// Wraps a rule as an rpc function: the ledger first (a key already recorded answers
/// with its result and changes nothing), then the acting user (the signed-in one, or
/// the agent they own), the typed arguments, the rule, and the ledger record. Only
/// reading the arguments and calling the rule depend on the rule's types; the rest is
/// [`begin`] and [`Ledger::end`], compiled once for every rule rather than once each.
fn rule_of<A, F>(tool: &'static str, rule: F) -> Rule
where
    A: DeserializeOwned + 'static,
    F: Fn(&Actor, A) -> Outcome + 'static,
{
    Rc::new(move |store: &LocalStore, args: &Row, agent: Option<i64>| {
        let (me, ledger, args) = match begin(store, args, agent)? {
            Begun::Recorded(result) => return Ok(result),
            Begun::Ready { me, ledger, args } => (me, ledger, args),
        };
        let args: A = crate::base::json::from_value(Value::Object(args)).map_err(unfit)?;
        let result = rule(&Actor { store, me }, args)?;
        ledger.end(store, tool, result)
    })
}

/// A call once its ledger is checked.
enum Begun {
    /// The key was recorded: its result, and nothing to do.
    Recorded(Value),
    /// To run as `me`, with the arguments left once the key is taken out.
    Ready { me: Row, ledger: Ledger, args: Row },
}

/// Where a call's result is recorded, if it came with a key.
struct Ledger {
    owner: String,
    key: Option<String>,
}

#[inline(never)]
fn begin(store: &LocalStore, args: &Row, agent: Option<i64>) -> Result<Begun, StoreError> {
    let mut args = args.clone();
    // A blank key is no key, as in the database (0016).
    let key = args.remove("key").and_then(|k| {
        k.as_str()
            .filter(|k| !k.trim().is_empty())
            .map(str::to_owned)
    });
    let sub = store.signed_in().ok_or_else(not_entered)?;
    let player =
        first(store, Select::from("users").eq("auth_id", sub.as_str()))?.ok_or_else(not_entered)?;
    // The agent's own ledger inside `act_as` (ownership checked first, as the
    // database's `ledger_owner()` does), else the signed-in user's.
    let (me, owner) = match agent {
        None => (player, sub),
        Some(agent) => (agents::owned(store, &player, agent)?, ledger_owner(agent)),
    };
    if let Some(key) = &key
        && let Some(result) = recorded(store, &owner, key)?
    {
        return Ok(Begun::Recorded(result));
    }
    Ok(Begun::Ready {
        me,
        ledger: Ledger { owner, key },
        args,
    })
}

impl Ledger {
    #[inline(never)]
    fn end(self, store: &LocalStore, tool: &str, result: Value) -> Outcome {
        if let Some(key) = self.key {
            record(store, &self.owner, &key, tool, &result)?;
        }
        Ok(result)
    }
}

#[inline(never)]
fn unfit(error: crate::base::json::ReadError) -> StoreError {
    StoreError::Invalid(format!("the arguments do not fit ({error})"))
}

fn not_entered() -> StoreError {
    StoreError::PermissionDenied("sign in and enter the world first".into())
}

fn rule(reason: String) -> StoreError {
    StoreError::Rule(reason)
}

fn recorded(store: &LocalStore, sub: &str, key: &str) -> Result<Option<Value>, StoreError> {
    let select = Select::from("applied_actions")
        .eq("user_id", sub)
        .eq("key", key);
    Ok(first(store, select)?.and_then(|mut row| row.remove("result")))
}

/// The most characters of a ledger key (the database's `applied_actions` cap).
const MAX_KEY_CHARS: usize = 256;

fn record(
    store: &LocalStore,
    sub: &str,
    key: &str,
    tool: &str,
    result: &Value,
) -> Result<(), StoreError> {
    let size = key.chars().count();
    if size > MAX_KEY_CHARS {
        return Err(rule(format!(
            "the key is {size} characters; at most {MAX_KEY_CHARS}"
        )));
    }
    let mut row = Row::new();
    row.insert("user_id".into(), json!(sub));
    row.insert("key".into(), json!(key));
    row.insert("tool".into(), json!(tool));
    row.insert("result".into(), result.clone());
    insert(store, "applied_actions", row).map(drop)
}

fn first(store: &LocalStore, select: Select) -> Result<Option<Row>, StoreError> {
    Ok(store.run_select(&select.limit(1))?.pop())
}

fn insert(store: &LocalStore, table: &str, row: Row) -> Result<Row, StoreError> {
    let insert = Insert {
        table: table.into(),
        rows: vec![row],
        on_conflict: None,
        client_key: None,
        returning: true,
    };
    store
        .run_insert(&insert)?
        .pop()
        .ok_or_else(|| StoreError::Server(format!("the new {table} row was not returned")))
}

fn update(store: &LocalStore, update: Patch) -> Result<usize, StoreError> {
    Ok(store.run_update(&update)?.len())
}

fn set(table: &str, pairs: Vec<(&str, Value)>) -> Patch {
    let mut set = Row::new();
    set.extend(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)));
    Patch {
        table: table.into(),
        set,
        filters: Vec::new(),
        returning: true,
    }
}

fn one_value(column: &str, value: Value) -> Row {
    let mut row = Row::new();
    row.insert(column.into(), value);
    row
}

fn int(row: &Row, column: &str) -> i64 {
    row.get(column).and_then(Value::as_i64).unwrap_or(0)
}

/// Trimmed text of 1 to `max` characters.
fn text(value: &str, what: &str, max: usize) -> Result<String, StoreError> {
    let value = value.trim();
    match value.chars().count() {
        0 => Err(rule(format!("the {what} is empty"))),
        n if n > max => Err(rule(format!("the {what} is {n} characters; at most {max}"))),
        _ => Ok(value.to_owned()),
    }
}

/// A whole number from 1 to `max`.
fn amount(value: i64, what: &str, max: i64) -> Result<i64, StoreError> {
    if (1..=max).contains(&value) {
        Ok(value)
    } else {
        Err(rule(format!("{what} must be 1 to {max}, not {value}")))
    }
}

fn clamp_stat(value: i64) -> i64 {
    value.clamp(0, 100)
}

fn exists(store: &LocalStore, select: Select) -> Result<bool, StoreError> {
    Ok(first(store, select)?.is_some())
}

fn is_member(actor: &Actor, community: i64) -> Result<bool, StoreError> {
    let membership = Select::from("user_communities")
        .eq("user_id", actor.id())
        .eq("community_id", community);
    exists(actor.store, membership)
}

/// The signed-in user's world user, created on first call (25 gold, fresh stats).
fn enter_world(store: &LocalStore, args: &Row) -> Outcome {
    let sub = store
        .signed_in()
        .ok_or_else(|| StoreError::PermissionDenied("sign in first".into()))?;
    if let Some(me) = first(store, Select::from("users").eq("auth_id", sub.as_str()))? {
        return Ok(Value::Object(me));
    }
    let wish = args
        .get("username")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .unwrap_or("player");
    let mut name: String = wish.chars().take(40).collect();
    if exists(store, Select::from("users").eq("username", name.as_str()))? {
        name = format!("{name}-{}", sub.chars().take(6).collect::<String>());
    }
    let mut user = Row::new();
    user.insert("username".into(), json!(name));
    user.insert("auth_id".into(), json!(sub));
    user.insert("gold".into(), json!(25));
    insert(store, "users", user).map(Value::Object)
}

fn join_battle(actor: &Actor, args: BattleArgs) -> Outcome {
    let amount = amount(args.energy, "energy", 100)?;
    let battle = first(
        actor.store,
        Select::from("battles").eq("id", args.battle_id),
    )?
    .ok_or_else(|| rule(format!("there is no battle {}", args.battle_id)))?;
    if battle.get("status") != Some(&json!("active")) {
        return Err(rule(format!("battle {} is over", args.battle_id)));
    }
    let sides = [int(&battle, "community1_id"), int(&battle, "community2_id")];
    let memberships = Select::from("user_communities")
        .eq("user_id", actor.id())
        .order("is_primary", false)
        .order("community_id", true);
    let side = actor
        .store
        .run_select(&memberships)?
        .iter()
        .find_map(|m| {
            let community = int(m, "community_id");
            sides.iter().position(|c| *c == community)
        })
        .map(|at| at as i64 + 1)
        .ok_or_else(|| {
            rule(format!(
                "you belong to neither side of battle {}",
                args.battle_id
            ))
        })?;
    let me = actor.id();
    let fought = Select::from("battle_participants")
        .eq("battle_id", args.battle_id)
        .eq("user_id", me);
    let fought = first(actor.store, fought)?;
    // A fighter keeps their side, whatever community they move to.
    if let Some(earlier) = &fought
        && int(earlier, "side") != side
    {
        return Err(rule(format!(
            "you fight for side {} of battle {}; you cannot change sides",
            int(earlier, "side"),
            args.battle_id
        )));
    }
    let energy = int(&actor.me, "energy");
    if energy < amount {
        return Err(rule(format!(
            "Insufficient energy. Need {amount}, have {energy}"
        )));
    }
    update(
        actor.store,
        set("users", vec![("energy", json!(energy - amount))]).eq("id", me),
    )?;
    match fought {
        Some(earlier) => {
            let damage = int(&earlier, "damage_dealt") + amount;
            let more = set("battle_participants", vec![("damage_dealt", json!(damage))])
                .eq("battle_id", args.battle_id)
                .eq("user_id", me);
            update(actor.store, more)?;
        }
        None => {
            let mut joined = Row::new();
            joined.insert("battle_id".into(), json!(args.battle_id));
            joined.insert("user_id".into(), json!(me));
            joined.insert("side".into(), json!(side));
            joined.insert("damage_dealt".into(), json!(amount));
            insert(actor.store, "battle_participants", joined)?;
        }
    }
    let column = format!("community{side}_damage");
    let total = int(&battle, &column) + amount;
    update(
        actor.store,
        set("battles", vec![(column.as_str(), json!(total))]).eq("id", args.battle_id),
    )?;
    Ok(json!({
        "battle_id": args.battle_id, "side": side, "damage": amount,
        "energy_left": energy - amount,
    }))
}

/// The agent chooses not to fight (`migrations/0009_world_triggers.sql`): no row
/// changes; the ledger keeps the choice.
fn ignore_battle(actor: &Actor, args: BattleRef) -> Outcome {
    let battle = first(
        actor.store,
        Select::from("battles").eq("id", args.battle_id),
    )?
    .ok_or_else(|| rule(format!("there is no battle {}", args.battle_id)))?;
    Ok(json!({
        "battle_id": int(&battle, "id"), "ignored": true,
        "energy": int(&actor.me, "energy"),
    }))
}
