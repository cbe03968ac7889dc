//! Which of the offered tools a small local model is shown: those the person's latest
//! words touch, a few at most.
//!
//! A model of SmolLM2-135M's size cannot choose among thirty tool names (the demo
//! agent's offer, whose descriptions the window has already cut): asked the time, it
//! picked `get_active_battles`. Retrieval before the choice is how small-model agents
//! cope: the tools whose name or description shares a word with the latest user
//! message are kept, most shared words first, at most [`MAX_TOOLS`]; a tool already
//! called since that message is not offered again (its result is in view, and a small
//! model repeats itself). When nothing relates, no tool is offered and the model
//! answers in text. A request that requires a tool keeps every tool.

use crate::generate::wire::{Message, Tool};

/// The most tools a local model is shown at once.
pub const MAX_TOOLS: usize = 4;

/// Words too common to relate a message to a tool.
const COMMON: &[&str] = &[
    "about", "all", "and", "any", "are", "can", "could", "did", "does", "for", "from", "get",
    "give", "had", "has", "have", "her", "him", "his", "how", "its", "let", "may", "not", "now",
    "our", "out", "please", "set", "she", "tell", "that", "the", "their", "them", "then", "there",
    "they", "this", "was", "way", "what", "when", "where", "which", "who", "why", "will", "with",
    "would", "you", "your",
];

/// The tools of `tools` related to the latest user message of `messages`, most related
/// first (ties keep their order), without those called since that message.
pub fn relevant(tools: &[Tool], messages: &[Message]) -> Vec<Tool> {
    let Some(at) = messages.iter().rposition(|m| m.role == "user") else {
        return Vec::new();
    };
    let said: Vec<String> = messages
        .get(at)
        .map(|m| stems(&m.content).collect())
        .unwrap_or_default();
    let called: Vec<&str> = messages
        .get(at + 1..)
        .unwrap_or_default()
        .iter()
        .flat_map(|m| m.tool_calls.iter().map(|c| c.name.as_str()))
        .collect();
    let mut scored: Vec<(usize, &Tool)> = tools
        .iter()
        .filter(|t| !called.contains(&t.name.as_str()))
        .map(|t| {
            // A word of the name counts twice: names are what the model chooses by.
            let name = stems(&t.name).filter(|w| said.contains(w)).count();
            let description = stems(&t.description).filter(|w| said.contains(w)).count();
            (2 * name + description, t)
        })
        .filter(|(score, _)| *score > 0)
        .collect();
    // The best left, a few times over (no slice sort in this crate: one compiled
    // sort for the program); the earliest among equals, so ties keep the offer's order.
    let mut kept = Vec::new();
    while kept.len() < MAX_TOOLS {
        let best = scored.iter().enumerate().fold(
            None,
            |best: Option<(usize, usize)>, (at, (score, _))| match best {
                Some((_, top)) if top >= *score => best,
                _ => Some((at, *score)),
            },
        );
        let Some((at, _)) = best else { break };
        kept.push(scored.remove(at).1.clone());
    }
    kept
}

/// A text's words of three letters or more, lowercase, cut to five letters and
/// without a plural `s`, so "Remember" meets `remember` and "items" meets `item`;
/// common words left out.
fn stems(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
        .filter(|w| !COMMON.contains(&w.as_str()))
        .map(|w| w.chars().take(5).collect::<String>())
        .map(|w| w.trim_end_matches('s').to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::wire::ToolCall;

    fn tool(name: &str, description: &str) -> Tool {
        Tool {
            name: name.into(),
            description: description.into(),
            parameters: serde_json::Value::Null,
        }
    }

    fn user(text: &str) -> Message {
        Message {
            role: "user".into(),
            content: text.into(),
            tool_calls: Vec::new(),
        }
    }

    fn names(tools: &[Tool]) -> Vec<&str> {
        tools.iter().map(|t| t.name.as_str()).collect()
    }

    /// The demo agent's offer as the window leaves it: names only.
    fn demo() -> Vec<Tool> {
        [
            "abstain_from_vote",
            "buy_item",
            "consume_item",
            "create_post",
            "current_time",
            "do_work",
            "forget",
            "get_active_battles",
            "get_item_price",
            "get_market_items",
            "get_my_inventory",
            "get_my_stats",
            "get_recent_posts",
            "page_title",
            "recall",
            "remember",
            "reply_to_message",
            "search_knowledge",
        ]
        .into_iter()
        .map(|n| tool(n, ""))
        .collect()
    }

    #[test]
    fn the_tools_the_words_touch_are_kept_most_touched_first() {
        let tools = demo();
        let pick = |text: &str| names(&relevant(&tools, &[user(text)])).join(" ");
        assert_eq!(pick("What time is it?"), "current_time");
        assert_eq!(pick("What is this page called?"), "page_title");
        assert_eq!(pick("Remember that the ale is cold"), "remember");
        assert_eq!(pick("Forget about the ale"), "forget");
        assert_eq!(
            pick("Which items are on the market, and their price?"),
            "get_item_price get_market_items buy_item consume_item"
        );
    }

    #[test]
    fn nothing_related_offers_nothing_and_common_words_relate_nothing() {
        let tools = demo();
        assert!(relevant(&tools, &[user("Tell me a long story about a dragon.")]).is_empty());
        assert!(relevant(&tools, &[user("What can you get for me?")]).is_empty());
        assert!(relevant(&tools, &[]).is_empty());
    }

    #[test]
    fn descriptions_count_and_at_most_four_are_kept() {
        let tools = vec![
            tool("a", "Gold and coins."),
            tool("b", "Counts coins."),
            tool("coin_c", ""),
            tool("d", "coins"),
            tool("e", "coins"),
            tool("f", "nothing here"),
        ];
        let kept = relevant(&tools, &[user("How many coins?")]);
        assert_eq!(names(&kept), ["coin_c", "a", "b", "d"]);
    }

    #[test]
    fn a_tool_called_since_the_message_is_not_offered_again() {
        let tools = demo();
        let called = Message {
            role: "assistant".into(),
            content: String::new(),
            tool_calls: vec![ToolCall {
                id: "1".into(),
                name: "current_time".into(),
                arguments: "{}".into(),
            }],
        };
        let result = Message {
            role: "tool".into(),
            content: "{\"time\":\"12:00\"}".into(),
            tool_calls: Vec::new(),
        };
        let messages = [user("What time is it?"), called, result];
        assert!(relevant(&tools, &messages).is_empty());
        // A new message starts afresh.
        let mut again = messages.to_vec();
        again.push(user("And the time now?"));
        assert_eq!(names(&relevant(&tools, &again)), ["current_time"]);
    }
}
