//! Where a call's values came from, and whether that lets it run unasked: the one
//! home of the rule "only the person's own words are instructions".
//!
//! A run reads text from several parties: the person's messages, the owner's
//! instructions, the agent's own store, and text others wrote (a page, a post, a host's
//! data). [`Readings`] keeps what it read by source; [`trace`] gives each consequential
//! value of a call (a recipient, an amount, text typed into a field, the button a click
//! presses) the source it came from, as CaMeL's capabilities do, kept simple and sound:
//! a value is the person's only when it appears in what the person wrote; otherwise it
//! takes the source of the others' text it appears in; a value that appears nowhere was
//! written by the model. [`needs_person`] says why a call must wait for a person
//! whatever grant is active: a consequential value from others' text, one the model
//! wrote after reading others' text, or a value carried from one site into another.
//! Tools say which of their arguments carry consequence ([`crate::tool::Consequential`]);
//! the page tools name what an element does from the page itself.

use serde::Serialize;

use serde_json::Value;

use crate::base::json::Read;
use crate::base::words::words;

use super::observation::{ENVIRONMENT, OTHERS_ENVIRONMENT, QUOTED_SUBJECT};
use super::{AgentRun, Invocation};
use crate::llm::message::{Role, ToolCall};
use crate::tool::{Approval, Author, Consequential, Valued};

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Read)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Source {
    /// What the person wrote (their messages in this conversation).
    Person,
    /// The owner's instructions and standing orders (the agent's configuration).
    Owner,
    /// The agent's own store or the world's rules (a tool whose results are its own).
    Own,
    /// Text another party wrote: `from` says which (a tool's result, a post, a page),
    /// `site` the origin of a page it was read on.
    Others {
        from: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        site: Option<String>,
    },
    /// Nothing the run read: the model wrote it.
    Model,
}

impl Source {
    /// The source as the card says it ("an email on https://mail.example").
    pub fn said(&self) -> String {
        match self {
            Self::Person => "you".into(),
            Self::Owner => "the agent's instructions".into(),
            Self::Own => "the agent's own records".into(),
            Self::Others {
                from,
                site: Some(site),
            } => format!("{from} on {site}"),
            Self::Others { from, site: None } => from.clone(),
            Self::Model => "the model".into(),
        }
    }
}

/// Text the run read, as words, with where it came from.
#[derive(Debug, Clone, PartialEq)]
struct Reading {
    source: Source,
    words: Vec<String>,
}

/// Everything a run read, by source, in the order it read it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Readings {
    read: Vec<Reading>,
}

impl Readings {
    /// Records `text` as read from `source`.
    pub fn push(&mut self, source: Source, text: &str) {
        let words = words(text);
        if !words.is_empty() {
            self.read.push(Reading { source, words });
        }
    }

    /// Whether the run has read anything another party wrote.
    pub fn has_others(&self) -> bool {
        self.read
            .iter()
            .any(|r| matches!(r.source, Source::Others { .. }))
    }

    /// The first others' texts the run read, said for a card (at most two).
    fn others_said(&self) -> String {
        let mut said: Vec<String> = Vec::new();
        for reading in &self.read {
            if let Source::Others { .. } = reading.source {
                let one = reading.source.said();
                if !said.contains(&one) {
                    said.push(one);
                }
            }
        }
        let more = said.len() > 2;
        said.truncate(2);
        let mut text = said.join(" and ");
        if more {
            text.push_str(" and more");
        }
        text
    }

    /// Where `value` came from: the person's words when it appears in them, else the
    /// owner's, else the first others' text it appears in, else the agent's own
    /// records, else the model.
    pub fn source_of(&self, value: &str) -> Source {
        let wanted = words(value);
        if wanted.is_empty() {
            return Source::Model;
        }
        let holds = |r: &&Reading| contains(&r.words, &wanted);
        self.first(|s| matches!(s, Source::Person), holds)
            .or_else(|| self.first(|s| matches!(s, Source::Owner), holds))
            .or_else(|| self.first(|s| matches!(s, Source::Others { .. }), holds))
            .or_else(|| self.first(|s| matches!(s, Source::Own), holds))
            .unwrap_or(Source::Model)
    }

    /// Where the element named `name` was chosen from: the person's when every word
    /// that tells it apart ([`telling`]) is in what the person wrote ("Archive" for
    /// "archive the project"); else as a value ([`Readings::source_of`]).
    pub fn source_of_target(&self, name: &str) -> Source {
        let telling = telling(name);
        let asked = !telling.is_empty()
            && self
                .read
                .iter()
                .filter(|r| r.source == Source::Person)
                .any(|r| {
                    telling
                        .iter()
                        .all(|w| r.words.iter().any(|s| same_word(s, w)))
                });
        if asked {
            Source::Person
        } else {
            self.source_of(name)
        }
    }

    fn first(
        &self,
        of: impl Fn(&Source) -> bool,
        holds: impl Fn(&&Reading) -> bool,
    ) -> Option<Source> {
        self.read
            .iter()
            .filter(|r| of(&r.source))
            .find(holds)
            .map(|r| r.source.clone())
    }
}

/// A consequential value with its source, as the card shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Read)]
pub struct Traced {
    pub means: String,
    pub value: String,
    pub source: Source,
}

/// The values a call's `args` give the arguments its tool declares consequential:
/// each string, number or flag at the argument (each item of a list, each string
/// within an object). An argument given no value carries none.
pub fn declared(consequential: &[Consequential], args: &Value) -> Vec<Valued> {
    let mut values = Vec::new();
    for c in consequential {
        let at = if c.argument.starts_with('/') {
            args.pointer(&c.argument)
        } else {
            args.get(&c.argument)
        };
        if let Some(at) = at {
            leaves(at, &mut |value| {
                values.push(Valued {
                    means: c.means.clone(),
                    value,
                    target: false,
                });
            });
        }
    }
    values
}

/// Every scalar within `value`, as text.
fn leaves(value: &Value, out: &mut dyn FnMut(String)) {
    match value {
        Value::Null => {}
        Value::String(text) => out(text.clone()),
        Value::Number(_) | Value::Bool(_) => out(value.to_string()),
        Value::Array(items) => items.iter().for_each(|item| leaves(item, out)),
        Value::Object(fields) => fields.values().for_each(|item| leaves(item, out)),
    }
}

/// Each of `values` with the source it came from in `readings`.
pub fn trace(values: &[Valued], readings: &Readings) -> Vec<Traced> {
    values
        .iter()
        .map(|v| Traced {
            means: v.means.clone(),
            value: v.value.clone(),
            source: if v.target {
                readings.source_of_target(&v.value)
            } else {
                readings.source_of(&v.value)
            },
        })
        .collect()
}

/// Why a call with the `traced` values must wait for a person whatever grant is
/// active; `None` when every consequential value came from the person, the owner or
/// the agent's own records (or from the model in a run that read nothing others
/// wrote). `site`: the site the call acts on, for a value carried from another.
pub fn needs_person(traced: &[Traced], readings: &Readings, site: Option<&str>) -> Option<String> {
    let reasons: Vec<String> = traced
        .iter()
        .filter_map(|t| {
            let value = quoted(&t.value);
            match &t.source {
                Source::Others {
                    site: Some(from), ..
                } if site.is_some_and(|to| to != from.as_str()) => Some(format!(
                    "the {} {value} comes from {}, another site than {}",
                    t.means,
                    t.source.said(),
                    site.unwrap_or_default()
                )),
                Source::Others { .. } => Some(format!(
                    "the {} {value} comes from {}, not from you",
                    t.means,
                    t.source.said()
                )),
                Source::Model if readings.has_others() => Some(format!(
                    "the {} {value} was chosen by the model after it read {}",
                    t.means,
                    readings.others_said()
                )),
                _ => None,
            }
        })
        .collect();
    (!reasons.is_empty()).then(|| reasons.join("; "))
}

impl AgentRun {
    /// Everything the run has read, by source: its instructions (the owner's), the
    /// person's messages (a resumed run's: a saved state's), and what others wrote — tool results whose author is not
    /// the agent itself, an event subject another party wrote, a perceived
    /// environment others wrote — from the conversation's earlier turns too.
    pub fn readings(&self) -> Readings {
        let mut readings = Readings::default();
        readings.push(Source::Owner, &self.system);
        let mut names: Vec<(&str, &str)> = Vec::new();
        for message in self.transcript.iter() {
            match message.role {
                Role::System => readings.push(Source::Owner, &message.content),
                Role::User if self.saved => readings.push(saved(), &message.content),
                Role::User => readings.push(source_of_user(&message.content), &message.content),
                Role::Assistant => names.extend(
                    message
                        .tool_calls
                        .iter()
                        .map(|c| (c.id.as_str(), c.name.as_str())),
                ),
                Role::Tool => {
                    let id = message.tool_call_id.as_deref().unwrap_or_default();
                    let name = names.iter().find(|(i, _)| *i == id).map(|(_, n)| *n);
                    self.read_result(name, &message.content, &mut readings);
                }
            }
        }
        readings
    }

    /// A tool's result as read: the agent's own, or others' text with the site a
    /// page result names (`location`). Read as its strings, not its JSON (whose
    /// escapes would run words together).
    fn read_result(&self, tool: Option<&str>, content: &str, readings: &mut Readings) {
        let tool = tool.unwrap_or("an unknown tool");
        let value: Value = serde_json::from_str(content).unwrap_or(Value::Null);
        let mut text = String::new();
        leaves(&value, &mut |leaf| {
            text.push_str(&leaf);
            text.push('\n');
        });
        if value.is_null() {
            text = content.to_owned();
        }
        let source = if self.author_of(tool) == Author::Own {
            Source::Own
        } else {
            let site = value
                .get("location")
                .or_else(|| value.get("origin"))
                .and_then(Value::as_str)
                .and_then(crate::base::site::site);
            Source::Others {
                from: format!("the result of `{tool}`"),
                site,
            }
        };
        readings.push(source, &text);
    }

    /// The consequential values of `call` (those its tool declares, and `named`: what
    /// the tool's judge read off its target), each with its source; and why the call
    /// must wait for a person whatever grant is active ([`needs_person`]), `site`
    /// being where it acts.
    pub fn provenance(
        &self,
        call: &ToolCall,
        named: &[Valued],
        site: Option<&str>,
    ) -> (Vec<Traced>, Option<String>) {
        let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
        let mut values = self
            .catalogue
            .iter()
            .find(|t| t.spec.name == call.name)
            .map(|t| declared(&t.consequential, &args))
            .unwrap_or_default();
        values.extend(named.iter().cloned());
        if values.is_empty() {
            return (Vec::new(), None);
        }
        let readings = self.readings();
        let traced = trace(&values, &readings);
        let why = needs_person(&traced, &readings, site);
        (traced, why)
    }

    /// Whether `invocation` waits for a person: by the owner's standing orders when
    /// the run has them; else by its approval, or — for a tool that declares its
    /// consequential arguments — by where those values came from, so a run that read
    /// others' text still acts on the person's values unasked.
    pub(super) fn asks(&self, invocation: &Invocation) -> bool {
        let call = &invocation.call;
        let declares = || {
            self.catalogue
                .iter()
                .any(|t| t.spec.name == call.name && !t.consequential.is_empty())
        };
        match invocation.approval {
            Approval::Ask => true,
            Approval::Deny => false,
            // Standing orders decide for the owner: within them, whatever was read.
            _ if self.orders.is_some() => self.outside_orders(call).is_some(),
            _ if declares() => self.provenance(call, &[], None).1.is_some(),
            approval => approval.asks(self.untrusted),
        }
    }
}

/// Where a resumed run's messages came from: storage, which a page's scripts can
/// write; so a value found only there asks.
fn saved() -> Source {
    Source::Others {
        from: "a saved state".into(),
        site: None,
    }
}

/// Who wrote a user message: another party when the run quoted it as theirs (an
/// event subject, a perceived environment others wrote), else the person (or, for
/// the host's own environment, the owner).
fn source_of_user(content: &str) -> Source {
    if let Some(rest) = content.strip_prefix(QUOTED_SUBJECT) {
        let who = rest.split(", quoted").next().unwrap_or_default();
        return Source::Others {
            from: format!("text written by {who}"),
            site: None,
        };
    }
    if content.starts_with(OTHERS_ENVIRONMENT) {
        return Source::Others {
            from: "what the agent perceived".into(),
            site: None,
        };
    }
    if content.starts_with(ENVIRONMENT) {
        return Source::Owner;
    }
    Source::Person
}

/// A value as the card quotes it: in quotes, cut when long.
fn quoted(value: &str) -> String {
    let mut text: String = value.chars().take(80).collect();
    if text.len() < value.len() {
        text.push('…');
    }
    format!("“{text}”")
}

/// Whether `words` holds `wanted` as a run of whole words.
fn contains(words: &[String], wanted: &[String]) -> bool {
    words.windows(wanted.len()).any(|window| window == wanted)
}

/// The words of an element's name that tell it apart: not the short words and
/// articles every name shares.
fn telling(name: &str) -> Vec<String> {
    const COMMON: &str = "the|and|for|your|you|this|that|with|from|into|all|now|here";
    words(name)
        .into_iter()
        .filter(|w| w.chars().count() > 2 || w.chars().all(|c| c.is_ascii_digit()))
        .filter(|w| !COMMON.split('|').any(|c| c == w))
        .collect()
}

/// Whether two words are the same but for an ending ("archive", "archiving",
/// "archived"; "member", "members").
fn same_word(a: &str, b: &str) -> bool {
    fn stem(word: &str) -> &str {
        ["ing", "ed", "es", "s", "e"]
            .iter()
            .find_map(|end| {
                word.strip_suffix(end)
                    .filter(|rest| rest.chars().count() >= 3)
            })
            .unwrap_or(word)
    }
    a == b || stem(a) == stem(b)
}

#[cfg(test)]
mod tests;
