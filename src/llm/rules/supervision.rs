//! The supervisor's stages (seed 003, `compose::supervisor`) answered by rules, in the
//! JSON their contracts ask for, so a supervised agent runs offline with the rules
//! model: the analysis (`Complexity`), the plan (`TaskPlan`) and the decider's word
//! (`Judgement`), each known by its `response_format` name as [`super::phases`] knows
//! the run's optional phases.
//!
//! The rules read the request's own shape, not its meaning: a request of several
//! clauses or steps (sentences, numbered lines, "then", "and" before a verb) is
//! COMPLEX and planned a task a clause; one clause is SIMPLE, a plan of one task. The
//! decider reads the executor's tool results the supervisor lists: done when the last
//! call of every tool succeeded (a person's "no" is their decision, not a failure) and
//! the executor's round ended well.

use super::text_response;
use crate::llm::message::Role;
use crate::llm::{ChatRequest, ChatResponse};

/// The schema names of the supervisor's contracts (`compose::supervisor`).
const COMPLEXITY: &str = "Complexity";
const TASK_PLAN: &str = "TaskPlan";
const JUDGEMENT: &str = "Judgement";

/// The most tasks a plan gets (the contract's own limit); later clauses join the last.
const MAX_TASKS: usize = 12;

/// Words that begin a new step when "and" comes before them: imperative verbs of
/// requests to an agent ("create X and add Y" is two steps; "Elena and Marcus talk"
/// is one).
const VERBS: &[&str] = &[
    "add", "ask", "build", "change", "check", "connect", "create", "delete", "find", "get", "give",
    "link", "list", "make", "move", "open", "put", "read", "remember", "remove", "rename", "send",
    "set", "show", "tell", "update", "validate", "write",
];

/// Words that only say where a step falls ("First, …", "Finally …"), dropped.
const ORDER_WORDS: &[&str] = &["first", "then", "next", "finally", "afterwards", "also"];

/// The answer to `request` when it asks one of the supervisor's stages; `None` for
/// any other request.
pub fn answer(request: &ChatRequest) -> Option<ChatResponse> {
    let name = request.response_format.as_ref()?.name.as_str();
    let asked = request
        .messages
        .iter()
        .rev()
        .find(|m| m.role == Role::User)
        .map_or("", |m| m.content.as_str());
    let (reasoning, text) = match name {
        COMPLEXITY => complexity(asked),
        TASK_PLAN => plan(asked),
        JUDGEMENT => judgement(asked),
        _ => return None,
    };
    Some(text_response(reasoning.to_owned(), text))
}

/// `text` as a JSON string.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

/// `{"level", "reason"}`: COMPLEX when the request has several steps.
fn complexity(request: &str) -> (&'static str, String) {
    let tasks = tasks_of(request);
    let (level, reason) = match tasks.len() {
        0 | 1 => ("SIMPLE", "one step".to_owned()),
        n => (
            "COMPLEX",
            format!("{n} steps: {}", tasks.join("; ").to_lowercase()),
        ),
    };
    (
        "Counted the request's clauses.",
        format!(r#"{{"level":"{level}","reason":{}}}"#, quoted(&reason)),
    )
}

/// `{"tasks"}`: a task a step of the request, in its own words.
fn plan(request: &str) -> (&'static str, String) {
    let mut tasks = tasks_of(request);
    if tasks.is_empty() {
        tasks.push("Answer the request".to_owned());
    }
    let tasks: Vec<String> = tasks.iter().map(|t| quoted(t)).collect();
    (
        "A task for each clause of the request, in its order.",
        format!(r#"{{"tasks":[{}]}}"#, tasks.join(",")),
    )
}

/// The request's steps: its numbered or bulleted lines, else its sentences, each cut
/// at "then" and at "and" before a verb; order words dropped, each capitalised.
pub fn tasks_of(request: &str) -> Vec<String> {
    let lines: Vec<&str> = request
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let listed: Vec<&str> = lines.iter().filter_map(|l| list_item(l)).collect();
    let parts: Vec<String> = if listed.len() > 1 {
        listed.iter().map(|l| (*l).to_owned()).collect()
    } else {
        lines
            .iter()
            .flat_map(|line| sentences(line))
            .flat_map(|sentence| clauses(&sentence))
            .collect()
    };
    let mut tasks: Vec<String> = parts.iter().filter_map(|p| tidy(p)).collect();
    if tasks.len() > MAX_TASKS {
        let rest = tasks.split_off(MAX_TASKS - 1).join("; ");
        tasks.push(rest);
    }
    tasks
}

/// A line's text without its list marker (`1.`, `2)`, `-`, `*`), if it has one.
fn list_item(line: &str) -> Option<&str> {
    if let Some(rest) = line.strip_prefix(['-', '*', '•']) {
        return Some(rest.trim());
    }
    let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let rest = line.get(digits..)?;
    (digits > 0)
        .then(|| rest.strip_prefix(['.', ')']))
        .flatten()
        .map(str::trim)
}

/// `line` cut after each `.`, `?`, `!` or `;` that ends a sentence.
fn sentences(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        current.push(c);
        let ends = matches!(c, '.' | '?' | '!' | ';')
            && chars.peek().is_none_or(|next| next.is_whitespace());
        if ends {
            out.push(std::mem::take(&mut current));
        }
    }
    out.push(current);
    out
}

/// A sentence cut before "then" (", then", "and then") and before "and" when a verb
/// follows it.
fn clauses(sentence: &str) -> Vec<String> {
    let words: Vec<&str> = sentence.split_whitespace().collect();
    let mut out = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    let bare = |w: &str| {
        w.trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase()
    };
    let mut i = 0;
    while let Some(word) = words.get(i) {
        let this = bare(word);
        let next = words.get(i + 1).map(|w| bare(w)).unwrap_or_default();
        let cut = match this.as_str() {
            "then" => true,
            "and" => next == "then" || VERBS.contains(&next.as_str()),
            _ => false,
        };
        if cut && !current.is_empty() {
            out.push(current.join(" "));
            current.clear();
        }
        if this == "and" && cut {
            // "and then": the "then" is the cut's too.
            i += if next == "then" { 2 } else { 1 };
            continue;
        }
        current.push(word);
        i += 1;
    }
    if !current.is_empty() {
        out.push(current.join(" "));
    }
    out
}

/// A clause as a task: order words and the punctuation around it dropped, its first
/// letter capitalised; `None` when nothing is left.
fn tidy(clause: &str) -> Option<String> {
    let mut text = clause.trim();
    loop {
        let first = text.split_whitespace().next().unwrap_or_default();
        let bare = first.trim_end_matches(',').to_lowercase();
        if first.is_empty() || !ORDER_WORDS.contains(&bare.as_str()) {
            break;
        }
        text = text.get(first.len()..).unwrap_or_default().trim_start();
    }
    let text = text
        .trim_matches(|c: char| c.is_whitespace() || matches!(c, ',' | '.' | ';' | ':'))
        .to_owned();
    let mut chars = text.chars();
    let first = chars.next()?;
    Some(first.to_uppercase().chain(chars).collect())
}

/// `{"done", "summary"}` from the decider's question (`Supervision::decision_text`):
/// its tool result lines (`- tool: succeeded|failed|declined: …`), how the round
/// ended, and the executor's report.
fn judgement(asked: &str) -> (&'static str, String) {
    let section = |name: &str| {
        asked.split_once(name).map_or("", |(_, rest)| {
            rest.lines().next().unwrap_or_default().trim()
        })
    };
    let outcome = section("Executor's outcome:");
    let report = section("Executor's report:");
    let results: Vec<(&str, &str, &str)> = asked
        .lines()
        .filter_map(|line| {
            let (tool, rest) = line.strip_prefix("- ")?.split_once(": ")?;
            let (how, what) = rest.split_once(": ").unwrap_or((rest, ""));
            Some((tool, how, what))
        })
        .collect();
    // A tool's last call is what stands: a failure the executor worked around later
    // (the same tool succeeding after it) is not left over.
    let mut failing: Vec<String> = Vec::new();
    for (i, (tool, how, what)) in results.iter().enumerate() {
        let later = results.get(i + 1..).unwrap_or_default();
        if *how == "failed" && !later.iter().any(|(t, h, _)| t == tool && *h == "succeeded") {
            failing.push(format!("{tool} failed ({what})"));
        }
    }
    let succeeded = results
        .iter()
        .filter(|(_, how, _)| *how == "succeeded")
        .count();
    let declined: Vec<&str> = results
        .iter()
        .filter(|(_, how, _)| *how == "declined")
        .map(|(tool, ..)| *tool)
        .collect();
    let ended_badly = ["failed", "aborted", "stopped at its step cap"].contains(&outcome);
    let (done, summary) = if ended_badly {
        (false, format!("the executor {outcome}: {report}"))
    } else if !failing.is_empty() {
        (false, format!("still to fix: {}", failing.join("; ")))
    } else if !declined.is_empty() {
        let declined = declined.join(", ");
        (
            true,
            format!("done as decided: the person declined {declined}; {report}"),
        )
    } else if succeeded > 0 {
        (
            true,
            format!("every task is done ({succeeded} tool calls succeeded): {report}"),
        )
    } else {
        (true, format!("answered: {report}"))
    };
    (
        "Judged from the executor's tool results and how its round ended.",
        format!(
            r#"{{"done":{done},"summary":{}}}"#,
            quoted(summary.trim_end_matches([':', ' ']))
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ResponseFormat;
    use crate::llm::message::Message;
    use serde_json::{Value, json};

    fn asking(format: &str, text: &str) -> ChatRequest {
        ChatRequest {
            messages: vec![Message::user(text)].into(),
            response_format: Some(ResponseFormat {
                name: format.into(),
                schema: json!({}),
            }),
            ..ChatRequest::default()
        }
    }

    fn answered(format: &str, text: &str) -> Value {
        serde_json::from_str(&answer(&asking(format, text)).unwrap().text).unwrap()
    }

    #[test]
    fn a_request_of_one_clause_is_simple_and_planned_as_one_task() {
        let request = "Create a dialog where Elena greets the player";
        assert_eq!(answered(COMPLEXITY, request)["level"], "SIMPLE");
        assert_eq!(
            answered(TASK_PLAN, request),
            json!({"tasks": ["Create a dialog where Elena greets the player"]})
        );
        // "and" between names is not a new step; "and" before a verb is.
        assert_eq!(
            answered(COMPLEXITY, "Write a scene where Elena and Marcus argue.")["level"],
            "SIMPLE"
        );
    }

    #[test]
    fn a_request_of_several_clauses_is_complex_and_planned_a_task_a_clause() {
        let request = "First create a character Marcus, then add a variable has_key \
                       and write a greeting for him. Validate the graph.";
        let complexity = answered(COMPLEXITY, request);
        assert_eq!(complexity["level"], "COMPLEX");
        assert!(
            complexity["reason"]
                .as_str()
                .unwrap()
                .starts_with("4 steps")
        );
        assert_eq!(
            answered(TASK_PLAN, request),
            json!({"tasks": [
                "Create a character Marcus",
                "Add a variable has_key",
                "Write a greeting for him",
                "Validate the graph"
            ]})
        );
    }

    #[test]
    fn numbered_lines_are_the_plan_whatever_their_sentences() {
        let request = "Please:\n1. Create Elena. She is a guard.\n2) Create Marcus\n- Connect them";
        assert_eq!(
            answered(TASK_PLAN, request)["tasks"],
            json!([
                "Create Elena. She is a guard",
                "Create Marcus",
                "Connect them"
            ])
        );
    }

    #[test]
    fn a_plan_never_passes_the_contracts_limit_and_loses_no_clause() {
        let request: Vec<String> = (1..=15).map(|n| format!("Add node {n}.")).collect();
        let tasks = tasks_of(&request.join(" "));
        assert_eq!(tasks.len(), MAX_TASKS);
        assert!(tasks.last().unwrap().ends_with("Add node 15"), "{tasks:?}");
        assert_eq!(
            answered(TASK_PLAN, "  ")["tasks"],
            json!(["Answer the request"])
        );
    }

    fn decision(results: &[&str], outcome: &str) -> String {
        format!(
            "Request: r\nPlan:\n1. r\nTool results:\n{}\nExecutor's outcome: {outcome}\n\
             Executor's report: Created dialog node for Elena.",
            results.join("\n")
        )
    }

    #[test]
    fn the_decider_marks_done_when_every_tools_last_call_succeeded() {
        let ok = answered(
            JUDGEMENT,
            &decision(
                &[r#"- create_dialog_node: succeeded: {"id":"n1"}"#],
                "answered",
            ),
        );
        assert_eq!(ok["done"], true);
        assert!(
            ok["summary"]
                .as_str()
                .unwrap()
                .contains("1 tool calls succeeded")
        );
        // A failure worked around later (the same tool succeeding) is not left over.
        let recovered = decision(
            &[
                "- create_connection: failed: no node \"x\"",
                r#"- create_connection: succeeded: {"id":"e1"}"#,
            ],
            "answered",
        );
        assert_eq!(answered(JUDGEMENT, &recovered)["done"], true);
        let declined = decision(&["- create_variable: declined: not now"], "answered");
        assert_eq!(answered(JUDGEMENT, &declined)["done"], true);
    }

    #[test]
    fn the_decider_says_what_is_left_when_a_call_failed_or_the_round_ended_badly() {
        let failed = answered(
            JUDGEMENT,
            &decision(
                &[
                    r#"- create_character: succeeded: {"id":"c1"}"#,
                    "- create_dialog_node: failed: no character \"c9\"",
                ],
                "answered",
            ),
        );
        assert_eq!(failed["done"], false);
        assert_eq!(
            failed["summary"],
            "still to fix: create_dialog_node failed (no character \"c9\")"
        );
        let broke = answered(JUDGEMENT, &decision(&[], "failed"));
        assert_eq!(broke["done"], false);
        assert!(
            broke["summary"]
                .as_str()
                .unwrap()
                .starts_with("the executor failed")
        );
    }

    #[test]
    fn other_requests_are_not_answered_here() {
        assert!(answer(&asking("Review", "hi")).is_none());
        let mut plain = asking(COMPLEXITY, "hi");
        plain.response_format = None;
        assert!(answer(&plain).is_none());
    }
}
