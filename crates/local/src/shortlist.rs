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
//! answers in text. A request that requires a tool keeps every tool, and an offer of
//! [`MAX_TOOLS`] or fewer (a game's NPC, whose trigger allows two actions) is kept
//! whole: there is nothing to narrow, and its event ("The goblin attacks you!") need
//! not share a word with `attack` to call for it.
//!
//! Words are compared by their first five letters, and a few words people use for the
//! same request meet as one (`note` and `remember`, `tick` and `check`, `open` and
//! `click`): [`KIN`].

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

/// Words that ask for the same thing: each group's words count as its first. Verbs
/// an agent's tools are named for, and the words people use instead.
const KIN: &[&[&str]] = &[
    &["remember", "note", "memory", "recall", "memo"],
    &["check", "tick", "untick"],
    &["click", "open", "tap", "press", "push"],
    &["buy", "purchase", "order"],
    &["say", "speak", "shout", "greet"],
    &["move", "walk", "go", "head"],
    &["attack", "strike", "hit", "fight", "shoot"],
    &["give", "hand"],
];

/// The tools of `tools` related to the latest user message of `messages`, most related
/// first (ties keep their order), without those called since that message.
pub fn relevant(tools: &[Tool], messages: &[Message]) -> Vec<Tool> {
    let Some(at) = messages.iter().rposition(|m| m.role == "user") else {
        return Vec::new();
    };
    let said: Vec<Stem> = messages
        .get(at)
        .map(|m| stems(&m.content).collect())
        .unwrap_or_default();
    let called: Vec<&str> = messages
        .get(at + 1..)
        .unwrap_or_default()
        .iter()
        .flat_map(|m| m.tool_calls.iter().map(|c| c.name.as_str()))
        .collect();
    let fresh = tools.iter().filter(|t| !called.contains(&t.name.as_str()));
    if tools.len() <= MAX_TOOLS {
        return fresh.cloned().collect();
    }
    let mut scored: Vec<(usize, &Tool)> = fresh
        .map(|t| {
            // A word said counts twice, a kin word once; a word of the name twice
            // that: names are what the model chooses by.
            let touched = |text: &str| -> usize {
                stems(text)
                    .map(|w| said.iter().map(|s| s.meets(&w)).max().unwrap_or(0))
                    .sum()
            };
            (2 * touched(&t.name) + touched(&t.description), t)
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

/// A word as the shortlist compares it: its [`base`], and its kin group's first
/// word's (itself when it has no kin).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stem {
    base: String,
    kin: String,
}

impl Stem {
    /// How well this word, said, meets a tool's word: 2 for the same word or the
    /// head of its kin (said "note", `remember`), 1 for another kin word, else 0.
    fn meets(&self, other: &Stem) -> usize {
        if self.base == other.base || self.kin == other.base {
            2
        } else if self.kin == other.kin {
            1
        } else {
            0
        }
    }
}

/// A text's words of three letters or more (two for a kin word: "go"); common words
/// left out.
fn stems(text: &str) -> impl Iterator<Item = Stem> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| !COMMON.contains(&w.as_str()))
        .filter_map(|w| {
            let stem = base(&w);
            let kin = KIN.iter().find(|kin| kin.iter().any(|k| base(k) == stem));
            match kin.and_then(|kin| kin.first()) {
                Some(first) if w.chars().count() >= 2 => Some(Stem {
                    base: stem,
                    kin: base(first),
                }),
                _ if w.chars().count() >= 3 => Some(Stem {
                    kin: stem.clone(),
                    base: stem,
                }),
                _ => None,
            }
        })
}

/// Whether a word is too common to relate a text to another, or to name a thing.
pub(crate) fn is_common(word: &str) -> bool {
    word.chars().count() < 3 || COMMON.contains(&word.to_lowercase().as_str())
}

/// A text's words as the shortlist compares them (without kin): what grounding
/// relates a listing's lines to a request by.
pub(crate) fn keywords(text: &str) -> Vec<String> {
    stems(text).map(|s| s.base).collect()
}

/// A word cut to five letters and without a plural `s`, so "Remember" meets
/// `remember` and "items" meets `item`.
fn base(word: &str) -> String {
    let cut: String = word.to_lowercase().chars().take(5).collect();
    cut.trim_end_matches('s').to_owned()
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
        assert_eq!(pick("Remember that the ale is cold"), "remember recall");
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
    fn kin_words_meet_the_tool_named_for_their_request_after_the_word_itself() {
        let tools = demo();
        let pick = |text: &str| names(&relevant(&tools, &[user(text)])).join(" ");
        assert_eq!(pick("Make a note: the ale is cold"), "remember recall");
        assert_eq!(pick("What do you recall about me?"), "recall remember");
        let page = vec![
            tool("check", "Checks or unchecks a checkbox."),
            tool("click", "Clicks an element."),
            tool("fill", "Types text into a field."),
            tool("hover", "Moves the pointer over an element."),
            tool("scroll_to", "Scrolls to an element."),
        ];
        let pick = |text: &str| names(&relevant(&page, &[user(text)])).join(" ");
        assert_eq!(pick("Tick the box"), "check");
        assert_eq!(pick("Open the next article"), "click");
    }

    #[test]
    fn an_offer_of_four_or_fewer_is_kept_whole_but_what_was_called() {
        let npc = vec![
            tool("attack", "Strike someone within reach."),
            tool("look", "Where everyone is."),
            tool("say", "Say something aloud."),
        ];
        let event = [user("The goblin leaps at you!")];
        assert_eq!(names(&relevant(&npc, &event)), ["attack", "look", "say"]);
        let looked = Message {
            role: "assistant".into(),
            content: String::new(),
            tool_calls: vec![ToolCall {
                id: "1".into(),
                name: "look".into(),
                arguments: "{}".into(),
            }],
        };
        let seen = [user("The goblin leaps at you!"), looked];
        assert_eq!(names(&relevant(&npc, &seen)), ["attack", "say"]);
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
