//! The market's rules: work for gold, buy an item, eat or use it (the Rust twin of
//! their functions in `migrations/0006_actions.sql`, the seed's food in
//! `0022_seed_food.sql`).

use serde_json::{Map, Value, json};

use super::{Actor, Outcome, amount, clamp_stat, first, insert, int, rule, set, update};
use crate::store::{Filtered, Patch, Row, Select};
use crate::world::actions::{ItemArgs, WorkArgs};

pub(super) fn buy_item(actor: &Actor, args: ItemArgs) -> Outcome {
    let quantity = amount(args.quantity, "quantity", 100)?;
    let on_sale = Select::from("market_items")
        .eq("name", args.item_name.as_str())
        .eq("available", true);
    let item = first(actor.store, on_sale)?
        .ok_or_else(|| rule(format!("Item {} not found in the market", args.item_name)))?;
    let cost = int(&item, "price") * quantity;
    let gold = int(&actor.me, "gold");
    if gold < cost {
        return Err(rule(format!("Insufficient gold. Need {cost}, have {gold}")));
    }
    let me = actor.id();
    update(
        actor.store,
        set("users", vec![("gold", json!(gold - cost))]).eq("id", me),
    )?;
    let held = Select::from("inventory")
        .eq("user_id", me)
        .eq("item_name", args.item_name.as_str());
    match first(actor.store, held)? {
        Some(slot) => {
            let total = int(&slot, "quantity") + quantity;
            let more = set("inventory", vec![("quantity", json!(total))])
                .eq("user_id", me)
                .eq("item_name", args.item_name.as_str());
            update(actor.store, more)?;
        }
        None => {
            let mut slot = Row::new();
            slot.insert("user_id".into(), json!(me));
            slot.insert("item_name".into(), json!(args.item_name));
            slot.insert("quantity".into(), json!(quantity));
            insert(actor.store, "inventory", slot)?;
        }
    }
    Ok(json!({
        "purchased": args.item_name, "quantity": quantity, "cost": cost,
        "gold_left": gold - cost,
    }))
}

pub(super) fn consume_item(actor: &Actor, args: ItemArgs) -> Outcome {
    let quantity = amount(args.quantity, "quantity", 100)?;
    let me = actor.id();
    let held = Select::from("inventory")
        .eq("user_id", me)
        .eq("item_name", args.item_name.as_str());
    let have = first(actor.store, held)?.map_or(0, |slot| int(&slot, "quantity"));
    if have < quantity {
        return Err(rule(format!(
            "Insufficient {} in inventory: need {quantity}, have {have}",
            args.item_name
        )));
    }
    let item = first(
        actor.store,
        Select::from("market_items").eq("name", args.item_name.as_str()),
    )?
    .ok_or_else(|| rule(format!("Item {} is unknown", args.item_name)))?;
    let effects = item.get("effects").cloned().unwrap_or(Value::Null);
    let mut now = Map::new();
    for stat in ["energy", "health", "morale"] {
        if let Some(change) = effects.get(stat).and_then(Value::as_i64) {
            let value = clamp_stat(int(&actor.me, stat) + change * quantity);
            now.insert(stat.into(), json!(value));
        }
    }
    if !now.is_empty() {
        let stats = Patch {
            table: "users".into(),
            set: now.clone(),
            filters: Vec::new(),
            returning: true,
        }
        .eq("id", me);
        update(actor.store, stats)?;
    }
    let less = set("inventory", vec![("quantity", json!(have - quantity))])
        .eq("user_id", me)
        .eq("item_name", args.item_name.as_str());
    update(actor.store, less)?;
    Ok(json!({
        "consumed": args.item_name, "quantity": quantity, "effects": effects, "now": now,
    }))
}

pub(super) fn do_work(actor: &Actor, args: WorkArgs) -> Outcome {
    let job = first(
        actor.store,
        Select::from("jobs").eq("name", args.job.as_str()),
    )?
    .ok_or_else(|| rule(format!("Unknown job type: {}", args.job)))?;
    let (pay, cost) = (int(&job, "pay"), int(&job, "energy_cost"));
    let (energy, gold) = (int(&actor.me, "energy"), int(&actor.me, "gold"));
    if energy < cost {
        return Err(rule(format!(
            "Insufficient energy. Need {cost}, have {energy}"
        )));
    }
    let worked = set(
        "users",
        vec![
            ("energy", json!(energy - cost)),
            ("gold", json!(gold + pay)),
        ],
    )
    .eq("id", actor.id());
    update(actor.store, worked)?;
    Ok(json!({
        "job": args.job, "earned": pay, "energy_spent": cost, "gold": gold + pay,
        "energy": energy - cost,
    }))
}
