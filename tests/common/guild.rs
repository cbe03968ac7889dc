//! One suite of the guild council's rules for any store, signed in as a player with no
//! guild yet: founding, drafts refused and stored, forecasts, decrees, ticks applied
//! once, clamping and the natural pressures. Run over the local store natively, and
//! over both stores in the browser, where the two logs must be equal.

use std::rc::Rc;

use familiar::store::{Row, Rpc, Select, Store};
use serde_json::{Value, json};

/// Columns that differ between stores for the same story: stamps and the owner.
const VARYING: [&str; 2] = ["created_at", "owner"];

/// `value` with the varying columns left out and proposal ids named by their order of
/// creation (`#1`, `#2`…), in numbers and in words alike.
fn steady(value: Value, ids: &[i64]) -> Value {
    let name = |id: i64| {
        ids.iter()
            .position(|known| *known == id)
            .map_or(json!(id), |at| json!(format!("#{}", at + 1)))
    };
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(k, _)| !VARYING.contains(&k.as_str()))
                .map(|(k, v)| match (k.as_str(), v) {
                    ("id", Value::Number(n)) => (k, name(n.as_i64().unwrap_or_default())),
                    ("applied", Value::Array(items)) => {
                        let named = items
                            .into_iter()
                            .map(|i| name(i.as_i64().unwrap_or_default()))
                            .collect();
                        (k, Value::Array(named))
                    }
                    (_, v) => (k, steady(v, ids)),
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(|v| steady(v, ids)).collect()),
        other => other,
    }
}

fn words(error: String, ids: &[i64]) -> String {
    ids.iter().enumerate().fold(error, |text, (at, id)| {
        text.replace(
            &format!("proposal {id} "),
            &format!("proposal #{} ", at + 1),
        )
    })
}

/// The log of one suite: each step's name and outcome.
pub struct Log {
    pub steps: Vec<(String, Value)>,
    /// Proposal ids in order of creation.
    pub ids: Vec<i64>,
}

impl Log {
    fn push<E: std::fmt::Display>(&mut self, name: &str, result: Result<Value, E>) -> Value {
        if let Ok(Value::Array(made)) = &result {
            for row in made {
                if let (Some(id), Some(_)) =
                    (row.get("id").and_then(Value::as_i64), row.get("title"))
                    && !self.ids.contains(&id)
                {
                    self.ids.push(id);
                }
            }
        }
        let outcome = match &result {
            Ok(value) => json!({ "ok": steady(value.clone(), &self.ids) }),
            Err(error) => json!({ "error": words(error.to_string(), &self.ids) }),
        };
        self.steps.push((name.to_owned(), outcome));
        result.unwrap_or(Value::Null)
    }

    /// The id of the `n`th proposal made (1-based); 0 when there is none.
    pub fn id(&self, n: usize) -> i64 {
        self.ids.get(n - 1).copied().unwrap_or_default()
    }

    /// The outcome of step `name` (null if there is no such step).
    pub fn step(&self, name: &str) -> &Value {
        self.steps
            .iter()
            .find(|(n, _)| n == name)
            .map_or(&Value::Null, |(_, outcome)| outcome)
    }
}

fn rpc(function: &str, args: Value) -> Rpc {
    let args: Row = serde_json::from_value(args).unwrap_or_default();
    Rpc {
        function: function.into(),
        args,
    }
}

fn draft(title: &str, delta: Value) -> Value {
    json!({"title": title, "description": format!("{title}, as planned."), "predicted_delta": delta})
}

/// Plays the suite on `store`, signed in as a player without a guild.
pub async fn guild_suite(store: Rc<dyn Store>) -> Log {
    let mut log = Log {
        steps: Vec::new(),
        ids: Vec::new(),
    };
    let call = |function: &'static str, args: Value| {
        let store = Rc::clone(&store);
        async move { store.rpc(&rpc(function, args)).await }
    };
    let propose = |drafts: Value| call("guild_propose", json!({ "proposals": drafts }));
    let decide =
        |id: i64, accept: bool| call("guild_decide", json!({"proposal_id": id, "accept": accept}));
    let tick = |at: i64| call("guild_tick", json!({ "at_tick": at }));

    log.push("tick before founding", tick(0).await);
    log.push("open the guild", call("guild_open", json!({})).await);
    log.push(
        "open again: the same guild",
        call("guild_open", json!({})).await,
    );
    let four: Vec<Value> = (1..=4)
        .map(|n| draft(&format!("Plan {n}"), json!({})))
        .collect();
    log.push("four drafts", propose(json!(four)).await);
    log.push("no drafts", propose(json!([])).await);
    log.push("not an array", propose(json!({"title": "x"})).await);
    log.push(
        "an unknown resource",
        propose(json!([draft("Mana", json!({"mana": 3}))])).await,
    );
    log.push(
        "a fractional change",
        propose(json!([draft("Half", json!({"gold": 2.5}))])).await,
    );
    log.push(
        "a change too large",
        propose(json!([draft("Huge", json!({"gold": 1001}))])).await,
    );
    log.push(
        "an empty title",
        propose(json!([draft("  ", json!({}))])).await,
    );
    let long = "x".repeat(121);
    log.push(
        "a title too long",
        propose(json!([draft(&long, json!({}))])).await,
    );
    let no_description = json!([{"title": "Bare", "predicted_delta": {}}]);
    log.push("no description", propose(no_description).await);
    let by_id = Select::from("guild_proposals").order("id", true);
    let listed = store.select(&by_id).await.map(|rows| json!(rows));
    log.push("nothing stored", listed);
    let first = json!([
        draft("Hunt in the marsh", json!({"food": 30.0, "gold": -10})),
        draft("Hold a feast", json!({"morale": 15, "food": -20})),
    ]);
    log.push("two drafts", propose(first).await);
    let more = json!([
        draft("Buy grain", json!({"food": 1000})),
        draft(
            "Sponsor the festival",
            json!({"influence": 200, "gold": -25})
        ),
        draft("Tax the stalls", json!({"gold": 25})),
    ]);
    log.push("three more", propose(more).await);
    log.push(
        "a sixth and seventh",
        propose(json!([draft("A", json!({})), draft("B", json!({}))])).await,
    );
    let (hunt, feast, grain, festival) = (log.id(1), log.id(2), log.id(3), log.id(4));
    let scry = |id: i64, delta: Value, note: &str| {
        call(
            "guild_scry",
            json!({"proposal_id": id, "predicted_delta": delta, "risk_note": note}),
        )
    };
    log.push(
        "scry with a bad delta",
        scry(hunt, json!({"luck": 1}), "Wolves.").await,
    );
    log.push(
        "scry with no risk",
        scry(hunt, json!({"food": 20}), " ").await,
    );
    log.push(
        "scry the hunt",
        scry(
            hunt,
            json!({"food": 22, "gold": -10}),
            "Wolves in the marsh.",
        )
        .await,
    );
    log.push("accept the hunt", decide(hunt, true).await);
    log.push("reject the feast", decide(feast, false).await);
    log.push("accept the feast after all", decide(feast, true).await);
    log.push(
        "scry the rejected feast",
        scry(feast, json!({}), "Too late.").await,
    );
    log.push("accept the grain", decide(grain, true).await);
    log.push("accept the festival", decide(festival, true).await);
    log.push("no such proposal", decide(999_999_999, true).await);
    log.push("tick ahead of the guild", tick(1).await);
    log.push("tick 1", tick(0).await);
    log.push("tick 1 retried", tick(0).await);
    log.push(
        "the guild after tick 1",
        call("guild_open", json!({})).await,
    );
    log.push("accept an applied proposal", decide(hunt, true).await);
    // Ruin: everything spent at once; clamped at 0, then hunger and unpaid wages.
    let ruin = json!([draft("Ruin", json!({"gold": -1000, "food": -1000}))]);
    log.push("draft the ruin", propose(ruin).await);
    log.push("accept the ruin", decide(log.id(6), true).await);
    log.push("tick 2", tick(1).await);
    log.push("tick 3, nothing accepted", tick(2).await);
    log.push("tick 1 asked for again", tick(0).await);
    let listed = store.select(&by_id).await.map(|rows| json!(rows));
    log.push("the proposals at the end", listed);
    let history = Select::from("guild_history").order("tick", true);
    let history = store.select(&history).await.map(|rows| json!(rows));
    log.push("the history", history);
    log
}
