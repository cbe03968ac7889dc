//! The rules model: a deterministic [`Llm`] that needs no network and no key.
//!
//! It reads a request the way a real model would — the last user message, the tool
//! results, the tools on offer — and answers by rules the app supplies as JSON:
//! keywords pick tool calls, answer templates turn tool results into text, and a
//! question whether the goal is complete gets YES or NO from the transcript, and the
//! run's optional phases (a review, a goal guess) get JSON of their shape
//! ([`phases`]), as do the supervisor's stages ([`supervision`]). It streams the same deltas a real client does. Which rules a demo
//! uses is the demo's business (`public/rules/`).

pub mod phases;
#[cfg(feature = "supervisor")]
pub mod supervision;
mod template;

use crate::base::json::Read;
use futures::future::LocalBoxFuture;
use serde::Serialize;
use serde_json::Value;

use crate::llm::message::{Message, Role, ToolCall};
use crate::llm::{
    ChatRequest, ChatResponse, DeltaSink, FinishReason, Llm, LlmError, replay_as_deltas,
};
use template::{fill_arguments, fill_template};

/// When a user message mentions a keyword, call a tool; answer from its result.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub struct Rule {
    /// Lower-case words or phrases; any one of them triggers the rule.
    pub keywords: Vec<String>,
    /// The tool to call.
    pub tool: String,
    /// The arguments to call it with.
    #[serde(default = "empty_object")]
    pub arguments: Value,
    /// The answer, with `{field}` placeholders filled from the tool's JSON result.
    pub answer: String,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// A rule set: the rules, and what to say when none applies.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub struct RulesModel {
    pub rules: Vec<Rule>,
    pub fallback: String,
}

/// Why a rule set could not be loaded.
#[derive(Debug, thiserror::Error)]
#[error("the rules file is not valid: {0}")]
pub struct RulesError(#[from] serde_json::Error);

impl RulesModel {
    /// Reads a rule set from its JSON form.
    pub fn from_json(text: &str) -> Result<Self, RulesError> {
        Ok(crate::base::json::from_text(text)?)
    }

    /// Decides this turn's response, without streaming it.
    pub fn respond(&self, request: &ChatRequest) -> ChatResponse {
        if let Some(answer) = phases::answer(request) {
            return answer;
        }
        // Only a build with the supervisor asks its stages.
        #[cfg(feature = "supervisor")]
        if let Some(answer) = supervision::answer(request) {
            return answer;
        }
        let messages = &request.messages[..];
        match messages.last() {
            Some(last) if last.role == Role::Tool => self.answer_from_results(messages),
            Some(last) if last.role == Role::User && is_completion_question(&last.content) => {
                self.completion_verdict(messages)
            }
            // The loop's note after a tool result (a failure to replan, a reminder) is
            // not a new request: answer from the results before it.
            Some(last) if last.role == Role::User && follows_a_result(messages) => {
                self.answer_from_results(messages.get(..messages.len() - 1).unwrap_or_default())
            }
            Some(last) if last.role == Role::User => self.choose_tools(request, &last.content),
            _ => text_response(String::new(), self.fallback.clone()),
        }
    }

    fn choose_tools(&self, request: &ChatRequest, user_text: &str) -> ChatResponse {
        let offered = request.offered_tools();
        let words = words_of(user_text);
        let matched: Vec<(&Rule, &str)> = self
            .rules
            .iter()
            .filter(|rule| offered.iter().any(|tool| tool.name == rule.tool))
            .filter_map(|rule| matching_keyword(rule, user_text, &words).map(|k| (rule, k)))
            .collect();
        if matched.is_empty() {
            return text_response(String::new(), self.fallback.clone());
        }
        let first_id = calls_so_far(&request.messages) + 1;
        let reasoning = matched
            .iter()
            .map(|(rule, keyword)| format!("“{keyword}” asks for the {} tool.", rule.tool))
            .collect::<Vec<_>>()
            .join(" ");
        let tool_calls = matched
            .iter()
            .zip(first_id..)
            .map(|((rule, keyword), n)| ToolCall {
                id: format!("call_{n}").into(),
                name: rule.tool.as_str().into(),
                arguments: fill_arguments(&rule.arguments, user_text, keyword)
                    .to_string()
                    .into(),
            })
            .collect();
        ChatResponse {
            text: String::new(),
            reasoning,
            tool_calls,
            finish: FinishReason::ToolCalls,
            usage: None,
            served: Default::default(),
        }
    }

    fn answer_from_results(&self, messages: &[Message]) -> ChatResponse {
        let results: Vec<&Message> = messages
            .iter()
            .rev()
            .take_while(|m| m.role == Role::Tool)
            .collect();
        let answers: Vec<String> = results
            .iter()
            .rev()
            .map(|result| self.answer_one(messages, result))
            .collect();
        let reasoning = match results.len() {
            1 => "A tool result came back; answering from it.".to_owned(),
            n => format!("{n} tool results came back; answering from them."),
        };
        text_response(reasoning, answers.join(" "))
    }

    fn answer_one(&self, transcript: &[Message], result: &Message) -> String {
        let tool = result
            .tool_call_id
            .as_deref()
            .and_then(|id| tool_name_of_call(transcript, id))
            .unwrap_or("the tool");
        let value: Value = serde_json::from_str(&result.content)
            .unwrap_or_else(|_| Value::String(result.content.clone()));
        if value.get("declined").is_some() {
            return format!("Understood: you declined {tool}, so I left it alone.");
        }
        if let Some(error) = value.get("error").and_then(Value::as_str) {
            return format!("I tried {tool}, but it failed: {error}");
        }
        match self.rules.iter().find(|rule| rule.tool == tool) {
            // Fields left empty at the end leave no separator behind ("I remember 0
            // things", not "… things: ").
            Some(rule) => fill_template(&rule.answer, &value)
                .trim_end()
                .trim_end_matches(':')
                .to_owned(),
            None => format!("{tool} returned {value}."),
        }
    }
}

impl Llm for RulesModel {
    fn model(&self) -> Option<&str> {
        Some("rules")
    }

    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
        sink: &'a mut DeltaSink<'_>,
    ) -> LocalBoxFuture<'a, Result<ChatResponse, LlmError>> {
        let mut response = self.respond(request);
        // It asks no provider: its calls use no tokens and cost nothing, said as such.
        response.usage = Some(crate::llm::Usage::default());
        replay_as_deltas(&response, sink);
        Box::pin(async move { Ok(response) })
    }
}

/// Whether the message before the last is a tool result.
fn follows_a_result(messages: &[Message]) -> bool {
    messages
        .iter()
        .rev()
        .nth(1)
        .is_some_and(|m| m.role == Role::Tool)
}

/// The phrase that marks a question about whether the goal is complete; the rules
/// model answers it YES or NO from the transcript instead of by keywords.
pub const COMPLETION_QUESTION: &str = "answer yes or no";

fn is_completion_question(text: &str) -> bool {
    text.to_lowercase().contains(COMPLETION_QUESTION)
}

impl RulesModel {
    /// YES when the work since the user's request went well: the latest tool result is
    /// not an error and something was answered or done; NO otherwise. A YES says what
    /// was done, from the results' answer templates, as a model would explain it.
    fn completion_verdict(&self, transcript: &[Message]) -> ChatResponse {
        let response = completion_verdict(transcript);
        let before = transcript.get(..transcript.len().saturating_sub(1));
        let results = before.filter(|b| b.last().is_some_and(|m| m.role == Role::Tool));
        match results {
            Some(results) if response.text == "YES" => {
                let done = self.answer_from_results(results).text;
                text_response(response.reasoning, format!("YES. {done}"))
            }
            _ => response,
        }
    }
}

/// YES when the work since the user's request went well: the latest tool result is
/// not an error and something was answered or done; NO otherwise.
fn completion_verdict(transcript: &[Message]) -> ChatResponse {
    let since_request: Vec<&Message> = transcript
        .iter()
        .rev()
        .skip(1)
        .take_while(|m| m.role != Role::User || is_completion_question(&m.content))
        .collect();
    let last_result_failed = since_request
        .iter()
        .find(|m| m.role == Role::Tool)
        .is_some_and(|m| {
            serde_json::from_str::<Value>(&m.content).is_ok_and(|v| v.get("error").is_some())
        });
    let answered = since_request.iter().any(|m| {
        m.role == Role::Assistant && (!m.content.trim().is_empty() || !m.tool_calls.is_empty())
    });
    let (verdict, why) = match (last_result_failed, answered) {
        (true, _) => ("NO", "The last tool call failed."),
        (false, false) => ("NO", "Nothing has been answered yet."),
        (false, true) => ("YES", "The request was answered and no tool failed."),
    };
    text_response(why.to_owned(), verdict.to_owned())
}

fn text_response(reasoning: String, text: String) -> ChatResponse {
    ChatResponse {
        text,
        reasoning,
        tool_calls: Vec::new(),
        finish: FinishReason::Stop,
        usage: None,
        served: Default::default(),
    }
}

fn words_of(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The first keyword of `rule` found in the text: a whole word, or for a phrase a
/// case-insensitive substring.
fn matching_keyword<'r>(rule: &'r Rule, text: &str, words: &[String]) -> Option<&'r str> {
    let lower = text.to_lowercase();
    rule.keywords
        .iter()
        .find(|k| {
            if k.contains(' ') {
                lower.contains(k.as_str())
            } else {
                words.iter().any(|w| w == *k)
            }
        })
        .map(String::as_str)
}

fn calls_so_far(transcript: &[Message]) -> usize {
    transcript.iter().map(|m| m.tool_calls.len()).sum()
}

fn tool_name_of_call<'t>(transcript: &'t [Message], id: &str) -> Option<&'t str> {
    transcript
        .iter()
        .flat_map(|m| &m.tool_calls)
        .find(|call| call.id == id)
        .map(|call| call.name.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{Delta, ToolSpec};
    use serde_json::json;

    fn model() -> RulesModel {
        RulesModel::from_json(
            r#"{
                "fallback": "Ask me the time.",
                "rules": [
                    {"keywords": ["time", "what hour"], "tool": "current_time",
                     "answer": "It is {time} on {date}."},
                    {"keywords": ["title"], "tool": "page_title", "answer": "“{title}”"}
                ]
            }"#,
        )
        .unwrap()
    }

    fn offering(tools: &[&str], messages: Vec<Message>) -> ChatRequest {
        ChatRequest {
            messages: messages.into(),
            tools: tools
                .iter()
                .map(|name| ToolSpec {
                    name: (*name).into(),
                    description: String::new(),
                    parameters: json!({"type": "object"}),
                })
                .collect(),
            ..ChatRequest::default()
        }
    }

    fn collect(model: &RulesModel, request: &ChatRequest) -> (ChatResponse, Vec<Delta>) {
        let mut deltas = Vec::new();
        let response =
            futures::executor::block_on(model.chat(request, &mut |d| deltas.push(d))).unwrap();
        (response, deltas)
    }

    #[test]
    fn a_keyword_calls_its_tool_when_offered() {
        let request = offering(&["current_time"], vec![Message::user("What time is it?")]);
        let (response, deltas) = collect(&model(), &request);
        assert_eq!(response.finish, FinishReason::ToolCalls);
        assert_eq!(
            response.tool_calls,
            vec![ToolCall {
                id: "call_1".into(),
                name: "current_time".into(),
                arguments: "{}".into()
            }]
        );
        assert!(matches!(
            &deltas[..],
            [Delta::Reasoning { .. }, Delta::ToolCall { index: 0, .. }]
        ));
    }

    #[test]
    fn keywords_match_whole_words_not_fragments() {
        let request = offering(&["current_time"], vec![Message::user("sometimes I wonder")]);
        let response = model().respond(&request);
        assert!(response.tool_calls.is_empty());
        assert_eq!(response.text, "Ask me the time.");
    }

    #[test]
    fn phrases_match_inside_the_text() {
        let request = offering(
            &["current_time"],
            vec![Message::user("So, WHAT HOUR is it")],
        );
        assert_eq!(model().respond(&request).tool_calls.len(), 1);
    }

    #[test]
    fn a_tool_not_offered_is_never_called() {
        let mut request = offering(&["current_time"], vec![Message::user("time and title?")]);
        let names: Vec<_> = model()
            .respond(&request)
            .tool_calls
            .into_iter()
            .map(|c| c.name)
            .collect();
        assert_eq!(names, ["current_time"]);
        request.tool_choice = crate::llm::ToolChoice::None;
        assert!(model().respond(&request).tool_calls.is_empty());
    }

    #[test]
    fn tool_results_fill_the_answer_template_and_stream_as_text() {
        let call = ToolCall {
            id: "call_1".into(),
            name: "current_time".into(),
            arguments: "{}".into(),
        };
        let request = offering(
            &["current_time"],
            vec![
                Message::user("time?"),
                Message::assistant("", vec![call]),
                Message::tool("call_1", r#"{"time":"09:05","date":"2026-11-22"}"#),
            ],
        );
        let (response, deltas) = collect(&model(), &request);
        assert_eq!(response.text, "It is 09:05 on 2026-11-22.");
        let streamed: String = deltas
            .iter()
            .filter_map(|d| match d {
                Delta::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(streamed, response.text);
    }

    #[test]
    fn a_tool_error_is_reported_not_templated() {
        let call = ToolCall {
            id: "call_1".into(),
            name: "page_title".into(),
            arguments: "{}".into(),
        };
        let request = offering(
            &["page_title"],
            vec![
                Message::user("title"),
                Message::assistant("", vec![call]),
                Message::tool("call_1", r#"{"error":"no document"}"#),
            ],
        );
        assert_eq!(
            model().respond(&request).text,
            "I tried page_title, but it failed: no document"
        );
    }

    #[test]
    fn the_loops_note_after_a_failure_is_answered_from_the_results_not_as_a_request() {
        let call = ToolCall {
            id: "call_1".into(),
            name: "page_title".into(),
            arguments: "{}".into(),
        };
        let note = "The action `page_title` failed: no document. Adjust your plan.";
        let request = offering(
            &["page_title"],
            vec![
                Message::user("title"),
                Message::assistant("", vec![call]),
                Message::tool("call_1", r#"{"error":"no document"}"#),
                Message::user(note),
            ],
        );
        let response = model().respond(&request);
        assert!(response.tool_calls.is_empty(), "no retry loop");
        assert_eq!(
            response.text,
            "I tried page_title, but it failed: no document"
        );
    }

    #[test]
    fn arguments_can_carry_the_users_words() {
        let rules = RulesModel::from_json(
            r#"{"fallback": "", "rules": [{"keywords": ["remember"], "tool": "remember",
                "arguments": {"content": "{rest}", "said": "{message}"}, "answer": "ok"}]}"#,
        )
        .unwrap();
        let request = offering(
            &["remember"],
            vec![Message::user("Please REMEMBER: the ale is cold!")],
        );
        let arguments: Value =
            serde_json::from_str(&rules.respond(&request).tool_calls[0].arguments).unwrap();
        assert_eq!(
            arguments,
            json!({"content": "the ale is cold", "said": "Please REMEMBER: the ale is cold!"})
        );
    }

    #[test]
    fn completion_questions_are_answered_yes_or_no_from_the_transcript() {
        let question = "Is the goal complete? Answer YES or NO.";
        let call = ToolCall {
            id: "call_1".into(),
            name: "current_time".into(),
            arguments: "{}".into(),
        };
        let answered = vec![
            Message::user("time?"),
            Message::assistant("", vec![call.clone()]),
            Message::tool("call_1", r#"{"time":"09:05"}"#),
            Message::assistant("It is 09:05.", Vec::new()),
            Message::user(question),
        ];
        let verdict = |messages| model().respond(&offering(&["current_time"], messages));
        assert_eq!(verdict(answered).text, "YES");
        // Right after an action's result (the game loop's check), a YES says what was
        // done, in the result's answer template.
        let acted = vec![
            Message::user("time?"),
            Message::assistant("", vec![call.clone()]),
            Message::tool("call_1", r#"{"time":"09:05"}"#),
            Message::user(question),
        ];
        let checked = verdict(acted).text;
        assert!(checked.starts_with("YES. "), "{checked}");
        assert!(checked.contains("09:05"), "{checked}");
        let failed = vec![
            Message::user("time?"),
            Message::assistant("", vec![call]),
            Message::tool("call_1", r#"{"error":"no clock"}"#),
            Message::assistant("Sorry.", Vec::new()),
            Message::user(question),
        ];
        assert_eq!(verdict(failed).text, "NO");
        assert_eq!(
            verdict(vec![Message::user("hi"), Message::user(question)]).text,
            "NO"
        );
    }

    #[test]
    fn a_broken_rules_file_is_a_clear_error() {
        let error = RulesModel::from_json(r#"{"rules": 3}"#).unwrap_err();
        assert!(error.to_string().starts_with("the rules file is not valid"));
    }
}
