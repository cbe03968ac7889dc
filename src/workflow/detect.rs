//! Intent detection from patterns and keywords, before any model is asked: which
//! workflow step a message means, and what it says (the named groups of the pattern
//! that matched, corrected by the price list).
//!
//! The order follows seed 002's execution flow, per workflow type: for each pending
//! transaction (one mentioned by the message first — "cancel the stew" — then the
//! newest), does the message cancel or advance it? Then, for each workflow with no
//! pending transaction, does it start it? A pattern match anywhere beats a
//! keyword-only match; among keyword-only matches the first in that order is kept.

use serde_json::{Map, Value};

use super::character::{Action, Character, Matcher, State};
use super::transaction::Transaction;

/// How strongly a matcher matched a message.
#[derive(Debug, Clone, PartialEq)]
pub enum Match {
    /// A pattern matched; its named groups.
    Pattern(Map<String, Value>),
    /// Only keywords matched: a weaker signal (see [`Detection`]).
    Keyword,
    No,
}

impl Matcher {
    /// The first pattern that matches `message` (with its named groups), else whether
    /// a keyword does: a whole word, or a phrase anywhere, ignoring case.
    pub fn check(&self, message: &str) -> Match {
        for pattern in &self.patterns {
            if let Some(captures) = pattern.captures(message) {
                let mut groups = Map::new();
                groups.extend(pattern.capture_names().flatten().filter_map(|name| {
                    let value = captures.name(name)?.as_str().trim();
                    Some((name.to_owned(), Value::from(value)))
                }));
                return Match::Pattern(groups);
            }
        }
        let lower = message.to_lowercase();
        let hit = self.keywords.iter().any(|k| {
            if k.contains(' ') {
                lower.contains(k.as_str())
            } else {
                find_word(&lower, k).is_some()
            }
        });
        if hit { Match::Keyword } else { Match::No }
    }
}

/// What a message means for the character's workflows.
#[derive(Debug, Clone, PartialEq)]
pub enum Intent {
    /// Starts workflow `workflow`, with what the message said.
    Start {
        workflow: usize,
        extracted: Map<String, Value>,
    },
    /// Moves the workflow's pending transaction through its state `state`.
    Advance {
        workflow: usize,
        state: usize,
        extracted: Map<String, Value>,
    },
    /// Cancels the workflow's pending transaction.
    Cancel {
        workflow: usize,
    },
    None,
}

impl Intent {
    /// The workflow it acts on.
    pub fn workflow(&self) -> Option<usize> {
        match self {
            Self::Start { workflow, .. }
            | Self::Advance { workflow, .. }
            | Self::Cancel { workflow } => Some(*workflow),
            Self::None => None,
        }
    }
}

/// The outcome of pattern and keyword detection, before any model is asked.
#[derive(Debug, Clone, PartialEq)]
pub enum Detection {
    /// A pattern matched, or only keywords did on triggers that ask for no model.
    Sure(Intent),
    /// Only keywords matched, on triggers with `llm_classification`: a model, when
    /// there is one, decides (`question`); with none, the keywords do and `intent`
    /// holds.
    Unsure {
        intent: Intent,
        question: String,
    },
    Nothing,
}

/// One step a message may mean, with the triggers that decide it.
struct Candidate<'a> {
    intent: Intent,
    matcher: &'a Matcher,
    question: String,
    /// The state that would create the transaction, for a start.
    creates: Option<&'a State>,
}

impl Character {
    /// Patterns and keywords only, over the user's pending transactions (one per
    /// workflow type, newest first). Only the message's first
    /// [`super::limits::MAX_MATCHED_CHARS`] characters are read.
    pub fn detect(&self, message: &str, pending: &[Transaction]) -> Detection {
        let message = super::limits::matched(message);
        let mut weak = None;
        for candidate in self.candidates(message, pending) {
            match candidate.matcher.check(message) {
                Match::Pattern(groups) => {
                    return Detection::Sure(candidate.with(groups, message));
                }
                Match::Keyword if weak.is_none() => {
                    // A start on keywords alone needs an item the price list knows,
                    // when it has one ("I have a question" orders nothing).
                    let priced = candidate.creates.is_none_or(|state| {
                        price_list(state).is_none()
                            || item_from(state, &Map::new(), message).is_some()
                    });
                    if priced {
                        let llm = candidate.matcher.llm;
                        let question = candidate.question.clone();
                        let intent = candidate.with(Map::new(), message);
                        weak = Some(if llm {
                            Detection::Unsure { intent, question }
                        } else {
                            Detection::Sure(intent)
                        });
                    }
                }
                Match::Keyword | Match::No => {}
            }
        }
        weak.unwrap_or(Detection::Nothing)
    }

    /// Every step the message may mean, in the order they are tried.
    fn candidates<'a>(&'a self, message: &str, pending: &[Transaction]) -> Vec<Candidate<'a>> {
        let lower = message.to_lowercase();
        let mut ordered: Vec<&Transaction> = pending.iter().collect();
        crate::base::sort::sort_by_key(&mut ordered, |t| !mentions(&lower, t));
        let mut found = Vec::new();
        for transaction in ordered {
            let Some((w, workflow)) = self.workflow_index(&transaction.transaction_type) else {
                continue;
            };
            if let Some((matcher, _)) = &workflow.cancellation {
                found.push(Candidate {
                    intent: Intent::Cancel { workflow: w },
                    matcher,
                    question: format!("cancel the {}", workflow.transaction_type),
                    creates: None,
                });
            }
            let current = workflow
                .states
                .iter()
                .enumerate()
                .find(|(_, s)| s.name == transaction.state);
            if let Some((s, state)) = current {
                found.push(Candidate {
                    intent: Intent::Advance {
                        workflow: w,
                        state: s,
                        extracted: Map::new(),
                    },
                    matcher: &state.matcher,
                    question: format!("{} (step `{}`)", workflow.description, state.name),
                    creates: None,
                });
            }
        }
        for (w, workflow) in self.workflows.iter().enumerate() {
            let busy = pending
                .iter()
                .any(|t| t.transaction_type == workflow.transaction_type);
            if let (false, Some(first)) = (busy, workflow.states.first()) {
                found.push(Candidate {
                    intent: Intent::Start {
                        workflow: w,
                        extracted: Map::new(),
                    },
                    matcher: &first.matcher,
                    question: workflow.description.clone(),
                    creates: Some(first),
                });
            }
        }
        found
    }
}

impl Candidate<'_> {
    /// Its intent, with what the message said.
    fn with(self, mut extracted: Map<String, Value>, message: &str) -> Intent {
        match self.intent {
            Intent::Start { workflow, .. } => {
                if let Some(state) = self.creates
                    && let Some((field, item)) = item_from(state, &extracted, message)
                {
                    extracted.insert(field, Value::from(item));
                }
                Intent::Start {
                    workflow,
                    extracted,
                }
            }
            Intent::Advance {
                workflow, state, ..
            } => Intent::Advance {
                workflow,
                state,
                extracted,
            },
            other => other,
        }
    }
}

/// A creating state's price list, when it has one.
fn price_list(state: &State) -> Option<&std::collections::BTreeMap<String, Value>> {
    match &state.action {
        Action::Create(create) if !create.price_lookup.is_empty() => Some(&create.price_lookup),
        _ => None,
    }
}

/// The item field and the price-list entry the message names, when what the pattern
/// captured is not on the list: an author's `(?<drink>\w+)` after "I'll have"
/// captures `a` in "I'll have a whiskey", but the author meant the whiskey. The
/// earliest entry named wins.
pub(super) fn item_from(
    state: &State,
    extracted: &Map<String, Value>,
    message: &str,
) -> Option<(String, String)> {
    let prices = price_list(state)?;
    let field = state.item_field.as_ref()?;
    let captured = extracted.get(field).and_then(Value::as_str);
    if captured.is_some_and(|c| lookup(prices, c).is_some()) {
        return None;
    }
    let lower = message.to_lowercase();
    prices
        .keys()
        .filter_map(|key| Some((find_word(&lower, &key.to_lowercase())?, key)))
        .min_by_key(|(at, key)| (*at, std::cmp::Reverse(key.len())))
        .map(|(_, key)| (field.clone(), key.clone()))
}

/// The price of `item`, ignoring case.
pub(super) fn lookup<'a>(
    prices: &'a std::collections::BTreeMap<String, Value>,
    item: &str,
) -> Option<&'a Value> {
    prices
        .iter()
        .find(|(key, _)| key.to_lowercase() == item.to_lowercase())
        .map(|(_, price)| price)
}

/// Where `word` first stands as a whole word (or phrase) in `text`.
fn find_word(text: &str, word: &str) -> Option<usize> {
    if word.is_empty() {
        return None;
    }
    let is_word = |c: char| c.is_alphanumeric() || c == '\'';
    text.match_indices(word).map(|(at, _)| at).find(|&at| {
        let before = text.get(..at).and_then(|t| t.chars().next_back());
        let after = text.get(at + word.len()..).and_then(|t| t.chars().next());
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

/// Whether the message names something of the transaction ("cancel the stew").
fn mentions(lower: &str, transaction: &Transaction) -> bool {
    transaction.context.values().any(|value| {
        value
            .as_str()
            .is_some_and(|text| find_word(lower, &text.to_lowercase()).is_some())
    })
}
