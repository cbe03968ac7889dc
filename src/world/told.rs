//! World runs told in words: what started a resident's turn ("Market check", "Battle 1
//! has started"), what each of its actions did ("bought 1 bread"), and why. The demo's
//! chat shows a resident's turn so, and its World view's change log says it the same
//! way; the tools, their arguments and results stay in the turn's steps.

use serde_json::Value;

use super::policy::is_lookup;
use crate::run::Outcome;
use crate::run::interaction::{Interaction, Step};

/// A turn's trigger, when it is not a person's chat message: its kind and event.
pub fn trigger_of(interaction: &Interaction) -> Option<(String, String)> {
    interaction.steps.iter().find_map(|step| match step {
        Step::Observe { trigger, .. } => Some((trigger.kind.clone(), trigger.event.clone())),
        _ => None,
    })
}

/// The event that started a turn, named: "Market check", "Battle", "Message",
/// "Leader's call", "Proposal", or the trigger's own words for one the world does not
/// name.
pub fn event_name(kind: &str, event: &str) -> String {
    match event {
        "market.check" => "Market check".into(),
        "battle.started" => "Battle".into(),
        "message.received" => "Message".into(),
        "message.mention" => "Leader's call".into(),
        "proposal.created" => "Proposal".into(),
        _ => {
            let words = event.replace(['.', '_'], " ");
            let mut name = if words.is_empty() {
                kind.to_owned()
            } else {
                words
            };
            if let Some(first) = name.get(..1) {
                name.replace_range(..1, &first.to_uppercase());
            }
            name
        }
    }
}

/// Why a resident acted, after what it did: "at the market check", "when a battle
/// started", "answering a message".
pub fn reason(event: &str) -> &'static str {
    match event {
        "market.check" => "at the market check",
        "battle.started" => "when a battle started",
        "message.received" => "answering a message",
        "message.mention" => "at a leader's call",
        "proposal.created" => "on a proposal",
        _ => "when it was called",
    }
}

fn arg<'a>(args: &'a Value, key: &str) -> Option<&'a Value> {
    args.get(key).filter(|v| !v.is_null())
}

fn number(args: &Value, key: &str) -> String {
    arg(args, key).map_or_else(String::new, |v| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    })
}

fn words(args: &Value, key: &str) -> String {
    match arg(args, key) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// What an action did, as a verb phrase: `buy_item` with `{"item_name": "bread",
/// "quantity": 1}` is "bought 1 bread"; a refused one says what was tried and why
/// not. Any other tool reads as its name in words.
pub fn deed(tool: &str, arguments: &str, result: Option<&Result<Value, String>>) -> String {
    let args: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
    let quantity = arg(&args, "quantity").and_then(Value::as_i64).unwrap_or(1);
    let item = words(&args, "item_name");
    let done = match tool {
        "do_work" => format!("worked at {}", words(&args, "job")),
        "buy_item" => format!("bought {quantity} {item}"),
        "consume_item" => format!("used {quantity} {item}"),
        "join_battle" => format!(
            "fought in Battle {}, spending {} energy",
            number(&args, "battle_id"),
            number(&args, "energy")
        ),
        "ignore_battle" => format!("stayed out of Battle {}", number(&args, "battle_id")),
        "send_message" => format!("sent a message: “{}”", words(&args, "content")),
        "reply_to_message" => format!("replied: “{}”", words(&args, "content")),
        "create_post" => format!("posted: “{}”", words(&args, "content")),
        "join_community" => "joined a community".into(),
        "leave_community" => "left a community".into(),
        "vote_on_proposal" => {
            let side = match arg(&args, "in_favour").and_then(Value::as_bool) {
                Some(false) => "against",
                _ => "for",
            };
            format!("voted {side} proposal {}", number(&args, "proposal_id"))
        }
        "abstain_from_vote" => format!("abstained on proposal {}", number(&args, "proposal_id")),
        "create_proposal" => format!("proposed “{}”", words(&args, "title")),
        other => other.replace(['_', '-'], " "),
    };
    match result {
        Some(Err(error)) => {
            // The registry's "`tool` failed: " says what the sentence already says.
            let why = error
                .strip_prefix(&format!("`{tool}` failed: "))
                .unwrap_or(error);
            format!("tried to {} but could not: {why}", infinitive(tool, &done))
        }
        _ => done,
    }
}

/// What a resident asks to do, in words, as its approval card says it: `send_message`
/// with `{"user_id": 3, "content": "Hi"}` is "send a message to Mira: “Hi”" (`name`
/// gives a user's name for an id; "user 3" when it does not know), `ignore_battle`
/// "stay out of Battle 1". Any other tool reads as its name in words.
pub fn request(tool: &str, arguments: &str, name: impl Fn(i64) -> Option<String>) -> String {
    let done = deed(tool, arguments, None);
    let asked = infinitive(tool, &done);
    if tool != "send_message" {
        return asked;
    }
    let args: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
    let to = match arg(&args, "user_id").and_then(Value::as_i64) {
        Some(id) => name(id).unwrap_or_else(|| format!("user {id}")),
        None => return asked,
    };
    format!("send a message to {to}: “{}”", words(&args, "content"))
}

/// The deed as what was tried: "buy 1 bread" for "bought 1 bread".
fn infinitive(tool: &str, done: &str) -> String {
    let plain = [
        ("worked", "work"),
        ("bought", "buy"),
        ("used", "use"),
        ("fought", "fight"),
        ("stayed", "stay"),
        ("sent", "send"),
        ("replied", "reply"),
        ("posted", "post"),
        ("joined", "join"),
        ("left", "leave"),
        ("voted", "vote"),
        ("abstained", "abstain"),
        ("proposed", "propose"),
    ];
    match done.split_once(' ') {
        // "replied: “…”" is "reply: “…”".
        Some((verb, rest)) => match plain
            .iter()
            .find(|(past, _)| *past == verb.trim_end_matches(':'))
        {
            Some((_, now)) if verb.ends_with(':') => format!("{now}: {rest}"),
            Some((_, now)) => format!("{now} {rest}"),
            None => tool.replace(['_', '-'], " "),
        },
        None => plain
            .iter()
            .find(|(past, _)| *past == done)
            .map_or_else(|| done.to_owned(), |(_, now)| (*now).to_owned()),
    }
}

/// What a resident's finished turn did, in sentences: each action it took (look-ups
/// and plans left to its steps), then its own words when they are more than the list
/// of its tools. `None` while the turn has no outcome.
pub fn told(interaction: &Interaction) -> Option<String> {
    let outcome = interaction.outcome()?;
    let mut tools = Vec::new();
    let deeds: Vec<String> = interaction
        .steps
        .iter()
        .filter_map(|step| match step {
            Step::ToolCall { call, result, .. }
                if call.name != "plan" && !is_lookup(&call.name) =>
            {
                tools.push(call.name.to_string());
                Some(deed(&call.name, &call.arguments, result.as_ref()))
            }
            _ => None,
        })
        .collect();
    let text = outcome.text().trim();
    let mut said: Vec<String> = deeds.iter().map(|d| sentence(d)).collect();
    if said.is_empty() || !(text.is_empty() || lists_tools(text, &tools)) {
        if text.is_empty() && said.is_empty() {
            said.push(match outcome {
                Outcome::Aborted { .. } => "Stopped.".into(),
                _ => "Nothing needed doing.".into(),
            });
        } else if !text.is_empty() {
            said.push(text.to_owned());
        }
    }
    Some(said.join(" "))
}

/// "Bought 1 bread." for "bought 1 bread".
fn sentence(deed: &str) -> String {
    let mut text = deed.to_owned();
    if let Some(first) = text.get(..1) {
        text.replace_range(..1, &first.to_uppercase());
    }
    if !text.ends_with(['.', '!', '?', '”']) {
        text.push('.');
    }
    if text.ends_with('”') {
        text.push('.');
    }
    text
}

/// Whether `text` only lists the run's tools by name ("Done: do_work, then buy_item."),
/// which the deeds already say in words.
fn lists_tools(text: &str, tools: &[String]) -> bool {
    let Some(list) = text.strip_prefix("Done: ") else {
        return false;
    };
    let list = list.trim_end_matches('.');
    !tools.is_empty()
        && list
            .split(", then ")
            .all(|part| tools.iter().any(|tool| part.starts_with(tool.as_str())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_read_as_what_the_resident_did() {
        let bought = deed("buy_item", r#"{"item_name":"bread","quantity":2}"#, None);
        assert_eq!(bought, "bought 2 bread");
        let fought = deed("join_battle", r#"{"battle_id":1,"energy":80}"#, None);
        assert_eq!(fought, "fought in Battle 1, spending 80 energy");
        let refused = Err("Insufficient gold. Need 3, have 0".to_owned());
        let tried = deed("buy_item", r#"{"item_name":"bread"}"#, Some(&refused));
        assert_eq!(
            tried,
            "tried to buy 1 bread but could not: Insufficient gold. Need 3, have 0"
        );
        assert_eq!(deed("open_gate", "{}", None), "open gate");
    }

    #[test]
    fn a_residents_request_names_whom_and_what_in_words() {
        let names = |id: i64| (id == 3).then(|| "Mira".to_owned());
        let message = r#"{"user_id":3,"content":"Hi there"}"#;
        assert_eq!(
            request("send_message", message, names),
            "send a message to Mira: “Hi there”"
        );
        let stranger = r#"{"user_id":9,"content":"Hi"}"#;
        assert_eq!(
            request("send_message", stranger, names),
            "send a message to user 9: “Hi”"
        );
        let battle = r#"{"battle_id":1}"#;
        assert_eq!(
            request("ignore_battle", battle, names),
            "stay out of Battle 1"
        );
        let bread = r#"{"item_name":"bread","quantity":1}"#;
        assert_eq!(request("consume_item", bread, names), "use 1 bread");
        let reply = r#"{"message_id":4,"content":"No."}"#;
        assert_eq!(request("reply_to_message", reply, names), "reply: “No.”");
    }

    #[test]
    fn a_summary_naming_only_tools_is_left_to_the_deeds() {
        let tools = ["do_work".to_owned(), "buy_item".to_owned()];
        assert!(lists_tools("Done: do_work, then buy_item.", &tools));
        assert!(lists_tools(
            "Done: buy_item failed (no gold), then do_work.",
            &tools
        ));
        assert!(!lists_tools("I bought bread for the tavern.", &tools));
        assert!(!lists_tools("Done: nothing.", &[]));
    }

    #[test]
    fn events_are_named_and_give_the_reason() {
        assert_eq!(event_name("schedule", "market.check"), "Market check");
        assert_eq!(event_name("weather", "storm.rising"), "Storm rising");
        assert_eq!(reason("battle.started"), "when a battle started");
        assert_eq!(sentence("replied: “On my way”"), "Replied: “On my way”.");
    }
}
