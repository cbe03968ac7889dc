//! A set of requests a host sends a local model, each with the call a person expects,
//! and the score of an answer against it (`bench/tool_calls/tasks.json`, issue 44).
//!
//! The set is measured, not tuned to: one answer is scored twice, for the right tool
//! (or text when no tool should be called) and for the right tool with the right
//! arguments (or, for text, an answer that does not repeat itself). The same scoring
//! reads our answers and llama-cpp-python's (`bench/tool_calls/peer.py`), so the two
//! are held to one rule. Native only: the worker never carries it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::generate::{Engine, Event, GenerateError};

/// The file: the tool sets, and the tasks over them.
#[derive(Debug, Clone, Deserialize)]
pub struct TaskSet {
    pub sets: BTreeMap<String, ToolSet>,
    pub tasks: Vec<Task>,
}

/// A host's offer: its instructions and its tools, as the product sends them.
#[derive(Debug, Clone, Deserialize)]
pub struct ToolSet {
    #[serde(default)]
    pub system: String,
    pub tools: Vec<Value>,
}

/// One request and what a person expects of its answer.
#[derive(Debug, Clone, Deserialize)]
pub struct Task {
    pub id: String,
    pub set: String,
    /// `tune` or `held` (not looked at while tuning).
    pub split: String,
    /// Instead of the set's instructions (an NPC's persona and situation).
    #[serde(default)]
    pub system: Option<String>,
    /// The set's tools the product offers this task (the data tools and the actions
    /// its trigger allows); all of them when absent.
    #[serde(default)]
    pub tools: Option<Vec<String>>,
    pub messages: Vec<Value>,
    /// Any of these is right.
    pub expect: Vec<Expect>,
}

/// A right answer: a call of `tool` whose arguments match, or text.
#[derive(Debug, Clone, Deserialize)]
pub struct Expect {
    #[serde(default)]
    pub tool: Option<String>,
    #[serde(default)]
    pub args: BTreeMap<String, Matcher>,
    #[serde(default)]
    pub text: bool,
}

/// What an argument must be; every field given must hold. Strings compare without
/// case and surrounding spaces.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Matcher {
    #[serde(default)]
    pub eq: Option<Value>,
    #[serde(default)]
    pub one_of: Option<Vec<Value>>,
    #[serde(default)]
    pub contains: Option<String>,
    #[serde(default)]
    pub nonempty: bool,
    #[serde(default)]
    pub not: Vec<Value>,
}

/// What the model answered: a call, or text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    #[serde(default)]
    pub tool: Option<String>,
    /// The call's arguments as the model wrote them.
    #[serde(default)]
    pub arguments: String,
    #[serde(default)]
    pub text: String,
}

/// One answer's score.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Score {
    pub tool: bool,
    pub args: bool,
}

impl TaskSet {
    pub fn parse(text: &str) -> Result<TaskSet, String> {
        serde_json::from_str(text).map_err(|e| format!("the task set does not read: {e}"))
    }

    /// The task's request as Familiar's `ChatRequest` JSON, greedy, with room for a
    /// sentence or two of text.
    pub fn request(&self, task: &Task) -> Value {
        let set = self.sets.get(&task.set);
        let system = task
            .system
            .clone()
            .or_else(|| set.map(|s| s.system.clone()))
            .unwrap_or_default();
        let offered = |tool: &&Value| {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
            task.tools
                .as_ref()
                .is_none_or(|names| names.iter().any(|n| n == name))
        };
        let tools: Vec<Value> = set
            .map(|s| s.tools.iter().filter(offered).cloned().collect())
            .unwrap_or_default();
        json!({"system": system, "messages": task.messages, "tools": tools,
               "tool_choice": "auto", "temperature": 0.0, "max_tokens": 128})
    }
}

impl Task {
    /// The answer's score: the best of the expectations'.
    pub fn score(&self, answer: &Answer) -> Score {
        self.expect
            .iter()
            .map(|e| e.score(answer))
            .fold(Score::default(), |best, s| Score {
                tool: best.tool || s.tool,
                args: best.args || s.args,
            })
    }
}

impl Expect {
    fn score(&self, answer: &Answer) -> Score {
        match (&self.tool, &answer.tool) {
            (None, None) if self.text => {
                let said = !answer.text.trim().is_empty();
                Score {
                    tool: said,
                    args: said && !repeats(&answer.text),
                }
            }
            (Some(want), Some(got)) if want == got => {
                let arguments: Value =
                    serde_json::from_str(&answer.arguments).unwrap_or(Value::Null);
                let args = self
                    .args
                    .iter()
                    .all(|(name, m)| m.matches(arguments.get(name)));
                Score { tool: true, args }
            }
            _ => Score::default(),
        }
    }
}

impl Matcher {
    fn matches(&self, value: Option<&Value>) -> bool {
        let Some(value) = value else { return false };
        let same = |want: &Value| same(want, value);
        self.eq.as_ref().is_none_or(same)
            && self.one_of.as_ref().is_none_or(|o| o.iter().any(same))
            && self.contains.as_ref().is_none_or(|c| {
                value
                    .as_str()
                    .is_some_and(|s| s.to_lowercase().contains(&c.to_lowercase()))
            })
            && (!self.nonempty || value.as_str().is_some_and(|s| !s.trim().is_empty()))
            && !self.not.iter().any(same)
    }
}

fn same(want: &Value, got: &Value) -> bool {
    match (want, got) {
        (Value::String(a), Value::String(b)) => a.trim().eq_ignore_ascii_case(b.trim()),
        _ => want == got,
    }
}

/// Whether a text loops, as a small model with nothing more to say does: one of its
/// sentences (of three words or more) said twice, or three words said three times
/// over ("I'm sorry, I'm sorry, I'm sorry").
pub fn repeats(text: &str) -> bool {
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_alphanumeric() && c != '\'')
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let sentences: Vec<Vec<String>> = text
        .split(['.', '!', '?', '\n'])
        .map(words)
        .filter(|s| s.len() >= 3)
        .collect();
    let twice = sentences
        .iter()
        .enumerate()
        .any(|(i, s)| sentences.iter().skip(i + 1).any(|t| t == s));
    let all = words(text);
    let triples: Vec<&[String]> = all.windows(3).collect();
    twice
        || triples
            .iter()
            .any(|t| triples.iter().filter(|u| u == &t).count() >= 3)
}

/// The engine's answer to `request`, through the worker's own path (shortlist,
/// template, grammar), run to its end.
pub fn answer(engine: &mut Engine, request: &Value) -> Result<Answer, GenerateError> {
    let mut generation = engine.start(&request.to_string())?;
    while !generation.is_finished() {
        for event in generation.next(engine)? {
            if let Event::Done {
                text, tool_calls, ..
            } = event
            {
                let call = tool_calls.into_iter().next();
                return Ok(Answer {
                    tool: call.as_ref().map(|c| c.name.clone()),
                    arguments: call.map(|c| c.arguments).unwrap_or_default(),
                    text,
                });
            }
        }
    }
    Err(GenerateError::Model(
        "the generation ended without an answer".into(),
    ))
}

/// Shares of right answers, by set and split: `(set, split, tool, args, of)`, with
/// `all` rows for every set and for the whole.
pub fn tally<'t>(
    tasks: &'t [Task],
    scores: &BTreeMap<String, Score>,
) -> Vec<(&'t str, &'static str, usize, usize, usize)> {
    let mut sets: Vec<&str> = tasks.iter().map(|t| t.set.as_str()).collect();
    sets.dedup();
    sets.push("all");
    let mut rows = Vec::new();
    for set in sets {
        for split in ["tune", "held", "all"] {
            let chosen = tasks
                .iter()
                .filter(|t| (set == "all" || t.set == set) && (split == "all" || t.split == split));
            let (mut tool, mut args, mut of) = (0, 0, 0);
            for task in chosen {
                let score = scores.get(&task.id).copied().unwrap_or_default();
                tool += usize::from(score.tool);
                args += usize::from(score.args);
                of += 1;
            }
            rows.push((set, split, tool, args, of));
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(expect: Value) -> Task {
        serde_json::from_value(json!({"id": "t", "set": "s", "split": "tune",
            "messages": [], "expect": expect}))
        .unwrap_or_else(|e| unreachable!("{e}"))
    }

    fn call(tool: &str, arguments: &str) -> Answer {
        Answer {
            tool: Some(tool.into()),
            arguments: arguments.into(),
            text: String::new(),
        }
    }

    fn text(text: &str) -> Answer {
        Answer {
            tool: None,
            arguments: String::new(),
            text: text.into(),
        }
    }

    #[test]
    fn the_right_tool_with_wrong_arguments_scores_the_tool_only() {
        let t = task(json!([{"tool": "click", "args": {"element": {"eq": 4}}}]));
        assert_eq!(
            t.score(&call("click", r#"{"element":4}"#)),
            Score {
                tool: true,
                args: true
            }
        );
        assert_eq!(
            t.score(&call("click", r#"{"element":1234}"#)),
            Score {
                tool: true,
                args: false
            }
        );
        assert_eq!(
            t.score(&call("click", "{}")),
            Score {
                tool: true,
                args: false
            }
        );
        assert_eq!(
            t.score(&call("hover", r#"{"element":4}"#)),
            Score::default()
        );
        assert_eq!(t.score(&text("Done.")), Score::default());
    }

    #[test]
    fn matchers_compare_strings_without_case_and_any_expectation_may_hold() {
        let t = task(json!([
            {"tool": "attack", "args": {"target": {"one_of": ["goblin", "the goblin"]}}},
            {"tool": "say", "args": {"text": {"nonempty": true, "not": ["say"]}}}
        ]));
        assert!(t.score(&call("attack", r#"{"target":" Goblin"}"#)).args);
        assert!(
            !t.score(&call("attack", r#"{"target":"Goblin 123456789"}"#))
                .args
        );
        assert!(t.score(&call("say", r#"{"text":"Halt!"}"#)).args);
        assert!(!t.score(&call("say", r#"{"text":"Say"}"#)).args);
        let contains =
            task(json!([{"tool": "remember", "args": {"content": {"contains": "Tea"}}}]));
        assert!(
            contains
                .score(&call("remember", r#"{"content":"I prefer tea."}"#))
                .args
        );
    }

    #[test]
    fn text_is_right_when_no_tool_was_expected_and_whole_when_it_does_not_loop() {
        let t = task(json!([{"text": true}]));
        assert_eq!(
            t.score(&text("Fifty-six.")),
            Score {
                tool: true,
                args: true
            }
        );
        let looping = "I'm sorry, I can't do that. I'm sorry, I can't do that.";
        assert_eq!(
            t.score(&text(looping)),
            Score {
                tool: true,
                args: false
            }
        );
        let sorry = "I'm sorry, I'm sorry, I'm sorry, I'm sorry";
        assert_eq!(
            t.score(&text(sorry)),
            Score {
                tool: true,
                args: false
            }
        );
        assert_eq!(t.score(&text("  ")), Score::default());
        assert_eq!(t.score(&call("current_time", "{}")), Score::default());
    }
}
