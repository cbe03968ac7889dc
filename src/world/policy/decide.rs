//! What the world policy decides, per trigger, from what it has seen: the seed's five
//! examples as rules over the observation, the actor's identity (order/chaos, loyalty,
//! temperament) and the data tools' answers. Each function answers one turn; the run
//! calls again after every step, so each reads where the run stands from the calls
//! already made (the last action and its result), never from a memory of its own.

use serde_json::{Value, json};

use super::Seen;
use crate::world::triggers::identity_of;

/// One turn of the policy.
pub enum Turn {
    /// Look things up: `(tool, arguments)`, run together.
    Look(Vec<(String, Value)>),
    /// Take one action, recording `plan` (steps left, facts, follow-ups) with it.
    Act {
        why: String,
        call: (String, Value),
        plan: Option<Value>,
    },
    /// Answer in text: the run is over.
    Answer(String),
}

fn look(calls: &[(&str, Value)]) -> Turn {
    Turn::Look(
        calls
            .iter()
            .map(|(name, args)| ((*name).to_owned(), args.clone()))
            .collect(),
    )
}

fn act(why: impl Into<String>, tool: &str, args: Value, plan: Option<Value>) -> Turn {
    Turn::Act {
        why: why.into(),
        call: (tool.to_owned(), args),
        plan,
    }
}

/// Below this much energy an agent eats before it fights.
const FIGHTING_ENERGY: i64 = 30;
/// Below this much of a stat, the market check restores it.
const LOW: i64 = 50;
/// From this loyalty (0-100) an agent answers its community's call.
const LOYAL: i64 = 50;
/// From this loyalty up to a little past [`LOYAL`], an agent abstains on proposals.
const LUKEWARM: i64 = 30;
/// Below this morale an agent will not fight.
const LOW_MORALE: i64 = 40;

pub fn decide(seen: &Seen) -> Turn {
    if let Some(error) = seen.last_action().and_then(|c| c.error())
        && error.contains("does not allow")
    {
        return Turn::Answer(format!("I may not do that here: {error}"));
    }
    match seen.event.as_str() {
        "market.check" => market(seen),
        "message.mention" => mention(seen),
        "battle.started" => battle(seen),
        "message.received" => message(seen),
        "proposal.created" => proposal(seen),
        _ => Turn::Answer("Nothing here is mine to act on.".into()),
    }
}

/// The actor's loyalty from its identity, if it has one.
fn own_loyalty(seen: &Seen) -> Option<i64> {
    identity_of(&seen.actor).and_then(|i| i.loyalty)
}

fn temperament(seen: &Seen) -> String {
    identity_of(&seen.actor)
        .map(|i| i.temperament)
        .unwrap_or_default()
}

/// Whether a faction's answer holds a standing: seed 000's answer for none is all
/// zeros, and then the membership's loyalty speaks instead.
fn standing(relation: &Value) -> bool {
    ["sentiment", "trust", "loyalty"]
        .iter()
        .any(|field| int(relation.get(*field)).is_some_and(|v| v != 0))
}

fn int(value: Option<&Value>) -> Option<i64> {
    value.and_then(Value::as_i64)
}

/// Seed example 3: the scheduled market check. Low on energy or health, the agent
/// tries to buy what restores it; short of gold, it works first; then it eats.
fn market(seen: &Seen) -> Turn {
    if !seen.called_since("get_my_stats", "") || !seen.called_since("get_market_items", "") {
        return look(&[("get_my_stats", json!({})), ("get_market_items", json!({}))]);
    }
    let Some(stat) = need(seen) else {
        return Turn::Answer(format!("All is well: {}.", stats_line(seen)));
    };
    match eat(seen, &stat, Start::Buy, &[]) {
        Some(turn) => turn,
        None => Turn::Answer(format!("Restored my {stat}: {}.", stats_line(seen))),
    }
}

/// The stat the market check sees to: the one that is low, as it stood before the run
/// acted (the chain it starts then runs to its end).
fn need(seen: &Seen) -> Option<String> {
    if let Some(need) = seen.remembered.get("need").and_then(Value::as_str) {
        return Some(need.to_owned());
    }
    let stats = seen.latest("get_my_stats")?;
    ["energy", "health"]
        .into_iter()
        .find(|stat| int(stats.get(*stat)).is_some_and(|v| v < LOW))
        .map(str::to_owned)
}

fn stats_line(seen: &Seen) -> String {
    ["energy", "health", "gold"]
        .iter()
        .filter_map(|s| seen.stat(s).map(|v| format!("{s} {v}")))
        .collect::<Vec<_>>()
        .join(", ")
}

/// How the eating chain begins: by buying (the market check) or by eating what one
/// might carry (a call to arms).
#[derive(Clone, Copy, PartialEq)]
enum Start {
    Buy,
    Eat,
}

/// The market item that restores `stat` most, by name.
fn food(seen: &Seen, stat: &str) -> Option<(String, i64)> {
    let items = seen.latest("get_market_items")?.as_array()?;
    items
        .iter()
        .filter_map(|item| {
            let gain = int(item.get("effects")?.get(stat))?;
            let name = item.get("name")?.as_str()?.to_owned();
            (gain > 0).then(|| (name, int(item.get("price")).unwrap_or(0), gain))
        })
        .max_by_key(|(_, _, gain)| *gain)
        .map(|(name, price, _)| (name, price))
}

/// The best-paying job the agent has the energy for.
fn job(seen: &Seen) -> Option<String> {
    let energy = seen.stat("energy").unwrap_or(0);
    let jobs = seen.latest("get_available_jobs")?.as_array()?;
    jobs.iter()
        .filter(|job| int(job.get("energy_cost")).is_some_and(|cost| cost <= energy))
        .max_by_key(|job| int(job.get("pay")).unwrap_or(0))
        .and_then(|job| job.get("name")?.as_str().map(str::to_owned))
}

/// The steps of the eating chain from `step` on, then `tail`.
fn steps(item: &str, from: usize, tail: &[String]) -> Vec<String> {
    let chain = [
        "do_work for gold".to_owned(),
        format!("buy_item {item}"),
        format!("consume_item {item}"),
    ];
    let mut steps: Vec<String> = chain.into_iter().skip(from).collect();
    steps.extend(tail.iter().cloned());
    steps
}

/// The work → buy → eat chain that restores `stat`: the turn that carries it on, or
/// `None` once the agent has eaten (or the chain does not apply to the last action).
fn eat(seen: &Seen, stat: &str, start: Start, tail: &[String]) -> Option<Turn> {
    let known = food(seen, stat);
    let item = known.as_ref().map_or("food", |(name, _)| name.as_str());
    let facts = json!({"need": stat});
    let Some(last) = seen.last_action() else {
        let plan = json!({"steps": steps(item, 2, tail), "remember": facts});
        return Some(match start {
            Start::Buy => act(
                format!("My {stat} is low: buy {item}, then eat it."),
                "buy_item",
                json!({"item_name": item, "quantity": 1}),
                Some(plan),
            ),
            Start::Eat => act(
                format!("My {stat} is low: eat first."),
                "consume_item",
                json!({"item_name": item, "quantity": 1}),
                None,
            ),
        });
    };
    let turn = match (last.name.as_str(), last.error()) {
        ("consume_item", None) => return None,
        ("consume_item" | "buy_item", Some(_)) => {
            let mut lookups = Vec::new();
            if known.is_none() {
                lookups.push(("get_market_items", json!({})));
            }
            if !seen.called_since("get_available_jobs", &last.name) {
                lookups.push(("get_available_jobs", json!({})));
            }
            if !lookups.is_empty() {
                return Some(look(&lookups));
            }
            let price = known.as_ref().map_or(i64::MAX, |(_, price)| *price);
            if seen.stat("gold").unwrap_or(0) >= price {
                act(
                    format!("I have the gold: buy {item}."),
                    "buy_item",
                    json!({"item_name": item, "quantity": 1}),
                    Some(json!({"steps": steps(item, 2, tail), "remember": facts})),
                )
            } else {
                match job(seen) {
                    Some(job) => act(
                        format!("Not enough gold for {item}: work as {job} first."),
                        "do_work",
                        json!({"job": job}),
                        Some(json!({"steps": steps(item, 1, tail), "remember": facts})),
                    ),
                    None => Turn::Answer(format!(
                        "I cannot afford {item} and am too tired to work for it."
                    )),
                }
            }
        }
        ("do_work", None) => act(
            format!("Earned gold: buy {item}."),
            "buy_item",
            json!({"item_name": item, "quantity": 1}),
            Some(json!({"steps": steps(item, 2, tail)})),
        ),
        ("buy_item", None) => act(
            format!("Bought {item}: eat it."),
            "consume_item",
            json!({"item_name": item, "quantity": 1}),
            Some(json!({"steps": tail})),
        ),
        (name, Some(error)) => Turn::Answer(format!("`{name}` failed: {error}. I stop here.")),
        _ => return None,
    };
    Some(turn)
}

/// The number after "battle" in a message ("fight in battle 7!").
fn battle_named(text: &str) -> Option<i64> {
    let lower = text.to_lowercase();
    let after = lower.split("battle").nth(1)?;
    let digits: String = after
        .trim_start_matches(|c: char| !c.is_ascii_digit())
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// Seed example 4: a community leader calls the agent to battle. Loyal to them, it
/// fights — eating first when too tired, working for the food when short of gold —
/// and reports back last, from the follow-up context memory keeps.
fn mention(seen: &Seen) -> Turn {
    let leader = seen.subject_id.clone().unwrap_or(Value::Null);
    let message_id = seen
        .remembered
        .get("reply_to_message_id")
        .cloned()
        .or_else(|| seen.message_id.clone())
        .unwrap_or(Value::Null);
    let battle = battle_named(&seen.text);
    if !seen.called_since("get_user_profile", "") {
        let mut calls = vec![
            ("get_user_profile", json!({"user_id": leader})),
            ("get_relationship", json!({"target_id": leader})),
            ("get_my_stats", json!({})),
        ];
        if let Some(battle) = battle {
            calls.insert(2, ("get_battle_details", json!({"battle_id": battle})));
        }
        return look(&calls);
    }
    let reply = |text: String| {
        act(
            "Report back to the leader.",
            "reply_to_message",
            json!({"message_id": message_id, "content": text}),
            None,
        )
    };
    let last = seen.last_action();
    if last.is_some_and(|c| c.name == "reply_to_message") {
        return Turn::Answer("Reported back.".into());
    }
    let gruff = temperament(seen).contains("gruff");
    if let Some(fought) = last.filter(|c| c.name == "join_battle") {
        return reply(match (fought.error(), gruff) {
            (Some(error), _) => format!("I could not fight: {error}"),
            (None, true) => "DONE! Crushed them for you.".into(),
            (None, false) => "Done: I fought in the battle as you asked.".into(),
        });
    }
    let affinity = seen
        .latest("get_relationship")
        .and_then(|r| int(r.get("affinity")))
        .unwrap_or(0);
    let loyal = affinity >= LOYAL || own_loyalty(seen).is_some_and(|l| l >= 70);
    let active = seen
        .latest("get_battle_details")
        .and_then(|b| b.get("status"))
        .is_some_and(|s| s == "active");
    let Some(battle) = battle.filter(|_| loyal && active) else {
        return reply(if !loyal {
            "You are not my leader. Fight your own battles.".into()
        } else {
            "There is no battle for me to fight.".into()
        });
    };
    let fight_plan = json!({
        "steps": [],
        "remember": {"battle_id": battle},
    });
    let energy = seen.stat("energy").unwrap_or(0);
    let ready = energy >= FIGHTING_ENERGY
        || last.is_some_and(|c| c.name == "consume_item" && c.error().is_none());
    if !ready {
        let tail = vec![
            format!("join_battle {battle}"),
            "reply_to_message to the leader".into(),
        ];
        if let Some(mut turn) = eat(seen, "energy", Start::Eat, &tail) {
            if last.is_none()
                && let Turn::Act { plan, .. } = &mut turn
            {
                *plan = Some(json!({
                    "steps": steps("food", 0, &tail),
                    "remember": {"battle_id": battle, "reply_to_message_id": message_id,
                                 "need": "energy"},
                    "owe": [{"tool": "reply_to_message",
                             "note": format!("report back to the leader on message {message_id}")}],
                }));
            }
            return turn;
        }
    }
    let owe = json!([{"tool": "reply_to_message",
                      "note": format!("report back to the leader on message {message_id}")}]);
    let mut plan = fight_plan;
    if last.is_none()
        && let Some(map) = plan.as_object_mut()
    {
        map.insert("owe".into(), owe);
    }
    act(
        format!("My leader calls: fight in battle {battle} with {energy} energy."),
        "join_battle",
        json!({"battle_id": battle, "energy": energy.clamp(1, 100)}),
        Some(plan),
    )
}

/// Seed example 5: a battle starts. The agent looks up the battle, its community and
/// stats, then how it stands toward both factions; loyal to its side, in good spirits
/// and no friend of the enemy, it joins with its energy; otherwise it stays out.
fn battle(seen: &Seen) -> Turn {
    let battle = seen.subject_id.clone().unwrap_or(Value::Null);
    if let Some(done) = seen.last_action() {
        return Turn::Answer(match done.error() {
            Some(error) => format!("`{}` failed: {error}", done.name),
            None if done.name == "ignore_battle" => "I stay out of it.".into(),
            None => "I fought.".into(),
        });
    }
    let stats = seen.latest("get_my_stats");
    let details = seen.latest("get_battle_details");
    if !seen.called_since("get_battle_details", "") {
        let me = seen.me().unwrap_or(0);
        return look(&[
            ("get_battle_details", json!({"battle_id": battle})),
            ("get_user_community", json!({"user_id": me})),
            ("get_my_stats", json!({})),
        ]);
    }
    let membership = seen.latest("get_user_community");
    let mine = membership
        .and_then(|m| m.get("communities"))
        .and_then(|c| int(c.get("id")));
    let sides: Vec<i64> = ["community1", "community2"]
        .iter()
        .filter_map(|side| int(details?.get(*side)?.get("id")))
        .collect();
    let ours = mine.is_some_and(|c| sides.contains(&c));
    let enemy = sides.iter().copied().find(|c| Some(*c) != mine);
    // Chained: how it stands toward its own faction and the enemy's.
    if let (true, Some(mine), Some(enemy)) = (ours, mine, enemy)
        && !seen.called_since("get_faction_relationship", "")
    {
        return look(&[
            ("get_faction_relationship", json!({"community_id": mine})),
            ("get_faction_relationship", json!({"community_id": enemy})),
        ]);
    }
    let toward = |community: Option<i64>, field: &str| {
        seen.calls
            .iter()
            .filter(|c| c.name == "get_faction_relationship")
            .filter_map(|c| c.result.as_ref()?.as_ref().ok())
            .find(|r| int(r.get("community_id")) == community && standing(r))
            .and_then(|r| int(r.get(field)))
    };
    let row_loyalty = membership.and_then(|m| int(m.get("loyalty"))).unwrap_or(0);
    let faction_loyalty = toward(mine, "loyalty").unwrap_or(row_loyalty);
    let loyalty = own_loyalty(seen).map_or(faction_loyalty, |l| l.min(faction_loyalty));
    let friends_with_enemy = toward(enemy, "sentiment").is_some_and(|s| s > 30);
    let morale = stats.and_then(|s| int(s.get("morale"))).unwrap_or(0);
    let energy = stats.and_then(|s| int(s.get("energy"))).unwrap_or(0);
    if ours && !friends_with_enemy && loyalty >= LOYAL && morale >= LOW_MORALE && energy > 0 {
        act(
            format!("Our community fights; loyal ({loyalty}) with morale {morale}: I join."),
            "join_battle",
            json!({"battle_id": battle, "energy": energy.clamp(1, 100)}),
            None,
        )
    } else {
        let why = if friends_with_enemy {
            "I will not fight a faction I am fond of.".to_owned()
        } else if ours {
            format!("I barely care for them (loyalty {loyalty}, morale {morale}).")
        } else {
            "Not my community's fight.".into()
        };
        act(why, "ignore_battle", json!({"battle_id": battle}), None)
    }
}

const GREETINGS: [&str; 7] = [
    "hi",
    "hello",
    "hey",
    "greetings",
    "howdy",
    "morning",
    "evening",
];

/// Seed examples 1 and 2: a message. A greeting is answered at once; an invitation is
/// weighed by who sent it — their profile, community, the relationship, memories of
/// them — and refused when they are an enemy.
fn message(seen: &Seen) -> Turn {
    let from = seen.subject_id.clone().unwrap_or(Value::Null);
    if let Some(done) = seen.last_action() {
        return Turn::Answer(match done.error() {
            Some(error) => format!("`{}` failed: {error}", done.name),
            None => "Answered.".into(),
        });
    }
    let lower = seen.text.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let warm = !temperament(seen).contains("gruff");
    if words.len() <= 4 && words.first().is_some_and(|w| GREETINGS.contains(w)) {
        let text = if warm {
            "Hey! What's up?"
        } else {
            "What do you want?"
        };
        return act(
            "A simple greeting.",
            "send_message",
            json!({"user_id": from, "content": text}),
            None,
        );
    }
    if !(words.contains(&"join") && (words.contains(&"community") || words.contains(&"guild"))) {
        return act(
            "A message to answer.",
            "reply_to_message",
            json!({"message_id": seen.message_id, "content": "Heard you. I will think on it."}),
            None,
        );
    }
    let Some(profile) = seen.latest("get_user_profile") else {
        return look(&[
            ("get_user_profile", json!({"user_id": from})),
            ("get_user_community", json!({"user_id": from})),
            ("get_relationship", json!({"target_id": from})),
        ]);
    };
    let name = profile
        .get("username")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if !seen.called_since("search_memories", "") {
        return look(&[("search_memories", json!({"query": name}))]);
    }
    let relationship = seen.latest("get_relationship");
    let affinity = relationship
        .and_then(|r| int(r.get("affinity")))
        .unwrap_or(0);
    let enemy = affinity < 0
        || relationship
            .and_then(|r| r.get("kind"))
            .and_then(Value::as_str)
            .is_some_and(|k| ["hostile", "enemy", "rival"].contains(&k));
    let community = seen
        .latest("get_user_community")
        .and_then(|c| c.get("communities"))
        .and_then(|c| int(c.get("id")));
    match community {
        Some(community) if !enemy && affinity >= LOYAL => act(
            format!("{name} is a friend: I join."),
            "join_community",
            json!({"community_id": community}),
            None,
        ),
        _ => {
            let text = match (enemy, warm) {
                (true, false) => "Get lost, traitor. I don't join enemies.",
                (true, true) => "No. We have fought each other; I will not join you.",
                (false, _) => "Thank you, but I stay where I am.",
            };
            act(
                format!("{name}'s invitation: refused."),
                "send_message",
                json!({"user_id": from, "content": text}),
                None,
            )
        }
    }
}

/// A proposal to the agent's community: it looks up its community, then how it stands
/// toward it; the loyal vote for, the disloyal against, the lukewarm abstain.
fn proposal(seen: &Seen) -> Turn {
    let proposal = seen.subject_id.clone().unwrap_or(Value::Null);
    if let Some(done) = seen.last_action() {
        return Turn::Answer(match done.error() {
            Some(error) => format!("`{}` failed: {error}", done.name),
            None => "Voted.".into(),
        });
    }
    let Some(membership) = seen.latest("get_user_community") else {
        let me = seen.me().unwrap_or(0);
        return look(&[("get_user_community", json!({"user_id": me}))]);
    };
    let community = membership.get("communities").and_then(|c| int(c.get("id")));
    if let Some(community) = community
        && !seen.called_since("get_faction_relationship", "")
    {
        return look(&[(
            "get_faction_relationship",
            json!({"community_id": community}),
        )]);
    }
    let row = int(membership.get("loyalty")).unwrap_or(0);
    let faction = seen
        .latest("get_faction_relationship")
        .filter(|f| standing(f))
        .and_then(|f| int(f.get("loyalty")))
        .unwrap_or(row);
    let loyalty = own_loyalty(seen).map_or(faction, |l| l.min(faction));
    if (LUKEWARM..LOYAL + 10).contains(&loyalty) {
        return act(
            format!("Loyalty {loyalty}: I abstain."),
            "abstain_from_vote",
            json!({"proposal_id": proposal}),
            None,
        );
    }
    let in_favour = loyalty >= LOYAL;
    act(
        format!(
            "Loyalty {loyalty}: I vote {}.",
            if in_favour { "yes" } else { "no" }
        ),
        "vote_on_proposal",
        json!({"proposal_id": proposal, "in_favour": in_favour}),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_battle_is_found_by_the_number_after_its_name() {
        assert_eq!(battle_named("Everyone fight in battle 7!"), Some(7));
        assert_eq!(battle_named("Battle #12 now"), Some(12));
        assert_eq!(battle_named("no fight here"), None);
    }
}
