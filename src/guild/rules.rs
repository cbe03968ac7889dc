//! The guild council's rules for the local store: the Rust twin of the functions in
//! `migrations/0010_guild_council.sql` (open, propose, scry, decide, tick; scry's rule
//! that a forecast is never rosier than the proposal is `0013_abuse_limits.sql`),
//! registered as the local store's `rpc` functions with the same checks in the same
//! words. Each acts for the signed-in owner (the store's `sub`). The conformance suite
//! plays both and compares; a change to a rule is made in both files.

use std::rc::Rc;

use serde_json::{Map, Value, json};

use super::{RESOURCES, Resource};
use crate::store::{Filtered, Insert, LocalStore, Patch, Row, Select, StoreError};

type Outcome = Result<Value, StoreError>;

/// The most proposals waiting for a decree at once.
pub const MAX_PENDING: usize = 6;
/// The most proposals one draft may hold.
pub const MAX_DRAFTS: usize = 3;
/// The largest change a delta may name for one resource, either way.
pub const MAX_CHANGE: i64 = 1000;

/// The council's functions, added to `store`.
pub fn install(store: LocalStore) -> LocalStore {
    store
        .with_function("guild_open", Rc::new(open))
        .with_function("guild_propose", Rc::new(propose))
        .with_function("guild_scry", Rc::new(scry))
        .with_function("guild_decide", Rc::new(decide))
        .with_function("guild_tick", Rc::new(tick))
}

fn rule(reason: String) -> StoreError {
    StoreError::Rule(reason)
}

fn owner(store: &LocalStore) -> Result<String, StoreError> {
    store
        .signed_in()
        .ok_or_else(|| StoreError::PermissionDenied("sign in first".into()))
}

fn first(store: &LocalStore, select: Select) -> Result<Option<Row>, StoreError> {
    Ok(store.run_select(&select.limit(1))?.pop())
}

fn int(row: &Row, column: &str) -> i64 {
    row.get(column).and_then(Value::as_i64).unwrap_or(0)
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

fn patch(table: &str, set: Map<String, Value>) -> Patch {
    Patch {
        table: table.into(),
        set,
        filters: Vec::new(),
        returning: true,
    }
}

/// A row as the functions answer it: without its creation stamp.
fn answer(mut row: Row) -> Value {
    row.remove("created_at");
    Value::Object(row)
}

/// The caller's guild, or a refusal.
fn acting_guild(store: &LocalStore) -> Result<Row, StoreError> {
    let me = owner(store)?;
    first(store, Select::from("guilds").eq("owner", me.as_str()))?
        .ok_or_else(|| rule("open your guild first".into()))
}

/// Trimmed text of 1 to `max` characters (the database's `checked_text`).
fn checked_text(value: Option<&Value>, what: &str, max: usize) -> Result<String, StoreError> {
    let text = match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.trim().to_owned(),
        Some(other) => other.to_string(),
    };
    match text.chars().count() {
        0 => Err(rule(format!("the {what} is empty"))),
        n if n > max => Err(rule(format!("the {what} is {n} characters; at most {max}"))),
        _ => Ok(text),
    }
}

/// A delta: an object of whole numbers from -1000 to 1000 for known resources, the
/// numbers made integers (the database's `checked_delta`).
pub fn checked_delta(delta: Option<&Value>) -> Result<Value, StoreError> {
    let Some(Value::Object(delta)) = delta else {
        return Err(rule(
            "the predicted delta must be an object of resources".into(),
        ));
    };
    let mut checked = Map::new();
    for (key, value) in delta {
        if Resource::named(key).is_none() {
            return Err(rule(format!("there is no resource {key}")));
        }
        let whole = value
            .as_f64()
            .filter(|n| n.fract() == 0.0 && n.abs() <= MAX_CHANGE as f64);
        let Some(whole) = whole else {
            return Err(rule(format!(
                "the change to {key} must be a whole number from -{MAX_CHANGE} to {MAX_CHANGE}"
            )));
        };
        checked.insert(key.clone(), json!(whole as i64));
    }
    Ok(Value::Object(checked))
}

/// The caller's guild, founded at tick 0 on the first call.
fn open(store: &LocalStore, _: &Row) -> Outcome {
    let me = owner(store)?;
    if let Some(guild) = first(store, Select::from("guilds").eq("owner", me.as_str()))? {
        return Ok(answer(guild));
    }
    let mut row = Row::new();
    row.insert("owner".into(), json!(me));
    let guild = insert(store, "guilds", row)?;
    let mut history = Row::new();
    history.insert("owner".into(), json!(me));
    history.insert("tick".into(), json!(0));
    for resource in RESOURCES {
        let name = resource.name();
        history.insert(name.into(), json!(int(&guild, name)));
    }
    insert(store, "guild_history", history)?;
    Ok(answer(guild))
}

fn propose(store: &LocalStore, args: &Row) -> Outcome {
    let guild = acting_guild(store)?;
    let me = owner(store)?;
    let drafts = match args.get("proposals") {
        Some(Value::Array(items)) if (1..=MAX_DRAFTS).contains(&items.len()) => items,
        _ => {
            return Err(rule(format!(
                "the council drafts 1 to {MAX_DRAFTS} proposals at a time"
            )));
        }
    };
    let pending = Select::from("guild_proposals")
        .eq("owner", me.as_str())
        .eq("status", "pending");
    let waiting = store.run_select(&pending)?.len();
    if waiting + drafts.len() > MAX_PENDING {
        return Err(rule(format!(
            "at most {MAX_PENDING} proposals wait at once; {waiting} are waiting"
        )));
    }
    let mut made = Vec::new();
    for draft in drafts {
        let mut row = Row::new();
        row.insert("owner".into(), json!(me));
        row.insert("tick".into(), json!(int(&guild, "tick")));
        let title = checked_text(draft.get("title"), "title", 120)?;
        row.insert("title".into(), json!(title));
        let description = checked_text(draft.get("description"), "description", 1000)?;
        row.insert("description".into(), json!(description));
        let delta = draft.get("predicted_delta").unwrap_or(&Value::Null);
        let delta = if delta.is_null() {
            json!({})
        } else {
            delta.clone()
        };
        row.insert("predicted_delta".into(), checked_delta(Some(&delta))?);
        made.push(answer(insert(store, "guild_proposals", row)?));
    }
    Ok(Value::Array(made))
}

/// The caller's proposal `id`, if it is still pending.
fn pending_proposal(store: &LocalStore, id: i64) -> Result<Row, StoreError> {
    let me = owner(store)?;
    let select = Select::from("guild_proposals")
        .eq("id", id)
        .eq("owner", me.as_str());
    let proposal =
        first(store, select)?.ok_or_else(|| rule(format!("there is no proposal {id}")))?;
    match proposal.get("status").and_then(Value::as_str) {
        Some("pending") => Ok(proposal),
        status => Err(rule(format!(
            "proposal {id} is already {}",
            status.unwrap_or_default()
        ))),
    }
}

fn proposal_id(args: &Row) -> Result<i64, StoreError> {
    args.get("proposal_id")
        .and_then(Value::as_i64)
        .ok_or_else(|| StoreError::Invalid("proposal_id must be a whole number".into()))
}

/// Proposal `id` with `set` applied, as the functions answer it.
fn change_proposal(store: &LocalStore, id: i64, set: Map<String, Value>) -> Outcome {
    let changed = store.run_update(&patch("guild_proposals", set).eq("id", id))?;
    changed
        .into_iter()
        .next()
        .map(answer)
        .ok_or_else(|| rule(format!("there is no proposal {id}")))
}

/// The first way `forecast` is rosier than `draft` (both checked deltas): a gain above
/// the draft's, a cost below it, or a gain the draft did not hope for (the database's
/// `rosier_forecast`, `migrations/0013_abuse_limits.sql`). `None` when it is not.
fn rosier_forecast(draft: &Value, forecast: &Value) -> Option<String> {
    // In the database's order, so both name the same resource first.
    ["food", "gold", "influence", "morale"]
        .into_iter()
        .find_map(|name| {
            let hoped = draft.get(name).and_then(Value::as_i64).unwrap_or(0);
            let said = forecast.get(name).and_then(Value::as_i64).unwrap_or(0);
            (said > hoped).then(|| match hoped {
                1.. => format!(
                    "the forecast gains {said} {name}, more than the {hoped} the council hoped for"
                ),
                ..0 => format!(
                    "the forecast costs {} {name}, less than the {} the council counted",
                    -said, -hoped
                ),
                0 => format!("the forecast gains {said} {name}, which the council never proposed"),
            })
        })
}

/// The oracle's forecast, never rosier than the proposal as it stands (the draft, or
/// an earlier forecast): the page cannot make the oracle promise what the council
/// never proposed.
fn scry(store: &LocalStore, args: &Row) -> Outcome {
    acting_guild(store)?;
    let id = proposal_id(args)?;
    let proposal = pending_proposal(store, id)?;
    let forecast = checked_delta(args.get("predicted_delta"))?;
    let note = checked_text(args.get("risk_note"), "risk note", 300)?;
    let draft = proposal.get("predicted_delta").unwrap_or(&Value::Null);
    if let Some(rosier) = rosier_forecast(draft, &forecast) {
        return Err(rule(format!(
            "{rosier}; a forecast is never rosier than the proposal"
        )));
    }
    let mut set = Map::new();
    set.insert("predicted_delta".into(), forecast);
    set.insert("risk_note".into(), json!(note));
    change_proposal(store, id, set)
}

fn decide(store: &LocalStore, args: &Row) -> Outcome {
    acting_guild(store)?;
    let id = proposal_id(args)?;
    pending_proposal(store, id)?;
    let accept = args.get("accept").and_then(Value::as_bool).unwrap_or(false);
    let mut set = Map::new();
    let status = if accept { "accepted" } else { "rejected" };
    set.insert("status".into(), json!(status));
    change_proposal(store, id, set)
}

/// One history row as the tick's answer.
fn history_answer(mut row: Row, fresh: bool) -> Value {
    row.remove("owner");
    row.insert("fresh".into(), json!(fresh));
    answer(row)
}

/// What the natural pressures did in one tick.
struct Pressures {
    hungry: bool,
    unpaid: bool,
}

impl Pressures {
    /// Morale lost to hunger and unpaid wages.
    fn sapped(&self) -> i64 {
        i64::from(self.hungry) * 10 + i64::from(self.unpaid) * 5
    }

    fn as_json(&self) -> Value {
        json!({
            "gold": -5, "food": -10, "influence": -2, "morale": -self.sapped(),
            "hungry": self.hungry, "unpaid": self.unpaid,
        })
    }
}

/// The tick after `at_tick`, applied once (see the database's `guild_tick`).
fn tick(store: &LocalStore, args: &Row) -> Outcome {
    let guild = acting_guild(store)?;
    let me = owner(store)?;
    let now = int(&guild, "tick");
    let at = args.get("at_tick").and_then(Value::as_i64);
    match at {
        Some(at) if at == now => {}
        Some(at) if (0..now).contains(&at) => {
            let select = Select::from("guild_history")
                .eq("owner", me.as_str())
                .eq("tick", at + 1);
            let record = first(store, select)?
                .ok_or_else(|| StoreError::Server(format!("tick {} has no record", at + 1)))?;
            return Ok(history_answer(record, false));
        }
        _ => {
            let at = at.map_or_else(|| "null".to_owned(), |n| n.to_string());
            return Err(rule(format!("the guild is at tick {now}, not {at}")));
        }
    }
    let accepted = Select::from("guild_proposals")
        .eq("owner", me.as_str())
        .eq("status", "accepted")
        .order("id", true);
    let accepted = store.run_select(&accepted)?;
    let mut next = Map::new();
    for resource in RESOURCES {
        let name = resource.name();
        let change: i64 = accepted
            .iter()
            .filter_map(|p| p.get("predicted_delta")?.get(name)?.as_i64())
            .sum();
        next.insert(
            name.into(),
            json!(resource.clamp(int(&guild, name) + change)),
        );
    }
    let level = |name: &str| next.get(name).and_then(Value::as_i64).unwrap_or(0);
    let pressures = Pressures {
        hungry: level("food") < 10,
        unpaid: level("gold") < 5,
    };
    let after = [
        (Resource::Gold, level("gold") - 5),
        (Resource::Food, level("food") - 10),
        (Resource::Morale, level("morale") - pressures.sapped()),
        (Resource::Influence, level("influence") - 2),
    ];
    for (resource, value) in after {
        next.insert(resource.name().into(), json!(resource.clamp(value)));
    }
    let ids: Vec<Value> = accepted.iter().map(|p| json!(int(p, "id"))).collect();
    let mut applied = Map::new();
    applied.insert("status".into(), json!("applied"));
    applied.insert("applied_tick".into(), json!(now + 1));
    let applied = patch("guild_proposals", applied)
        .eq("owner", me.as_str())
        .eq("status", "accepted");
    store.run_update(&applied)?;
    let mut guild_now = next.clone();
    guild_now.insert("tick".into(), json!(now + 1));
    store.run_update(&patch("guilds", guild_now).eq("owner", me.as_str()))?;
    let mut record = next;
    record.insert("owner".into(), json!(me));
    record.insert("tick".into(), json!(now + 1));
    record.insert("applied".into(), Value::Array(ids));
    record.insert("pressures".into(), pressures.as_json());
    let record = insert(store, "guild_history", record)?;
    Ok(history_answer(record, true))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::clock::{FixedClock, Instant};
    use crate::store::Rpc;

    fn call(store: &LocalStore, function: &str, args: Value) -> Outcome {
        let Value::Object(args) = args else {
            return Err(StoreError::Invalid("not an object".into()));
        };
        store.run_rpc(&Rpc {
            function: function.into(),
            args,
        })
    }

    #[test]
    fn a_page_cannot_forge_a_rosier_forecast_in_the_local_store() {
        let clock = FixedClock(Instant {
            epoch_ms: 0,
            utc_offset_minutes: 0,
        });
        let store = super::super::local(Rc::new(clock), None).unwrap();
        call(&store, "guild_open", json!({})).unwrap();
        let hunt = json!({"title": "Hunt", "description": "In the marsh.",
                          "predicted_delta": {"food": 30, "gold": -10}});
        let made = call(&store, "guild_propose", json!({ "proposals": [hunt] })).unwrap();
        let id = made[0]["id"].as_i64().unwrap();
        let forged = json!({"proposal_id": id, "predicted_delta": {"food": 1000, "gold": -10},
                            "risk_note": "Plenty."});
        assert_eq!(
            call(&store, "guild_scry", forged).unwrap_err().to_string(),
            "the forecast gains 1000 food, more than the 30 the council hoped for; \
             a forecast is never rosier than the proposal"
        );
        let fair = json!({"proposal_id": id, "predicted_delta": {"food": 22, "gold": -10},
                          "risk_note": "Wolves."});
        call(&store, "guild_scry", fair).unwrap();
        call(
            &store,
            "guild_decide",
            json!({"proposal_id": id, "accept": true}),
        )
        .unwrap();
        let ticked = call(&store, "guild_tick", json!({"at_tick": 0})).unwrap();
        assert_eq!(ticked["food"], json!(92), "80 + 22 forecast - 10 eaten");
    }

    fn refusal(draft: Value, forecast: Value) -> Option<String> {
        rosier_forecast(&draft, &forecast)
    }

    #[test]
    fn a_forecast_as_cautious_as_the_draft_or_more_is_taken() {
        let hunt = json!({"food": 30, "gold": -10});
        assert_eq!(refusal(hunt.clone(), hunt.clone()), None);
        assert_eq!(
            refusal(hunt.clone(), json!({"food": 22, "gold": -12, "morale": -1})),
            None
        );
        assert_eq!(refusal(json!({}), json!({"gold": -5})), None);
    }

    #[test]
    fn a_forecast_rosier_than_the_draft_is_named_in_the_databases_words() {
        let hunt = json!({"food": 30, "gold": -10});
        assert_eq!(
            refusal(hunt.clone(), json!({"food": 1000, "gold": -10})).as_deref(),
            Some("the forecast gains 1000 food, more than the 30 the council hoped for")
        );
        assert_eq!(
            refusal(hunt.clone(), json!({"food": 22})).as_deref(),
            Some("the forecast costs 0 gold, less than the 10 the council counted")
        );
        assert_eq!(
            refusal(hunt, json!({"food": 22, "gold": -10, "morale": 5})).as_deref(),
            Some("the forecast gains 5 morale, which the council never proposed")
        );
    }
}
