//! Look-ups answered once a run (seed 000's tool caching): a look-up whose tool keeps
//! its answers ([`ToolRegistry::cache_results`]), asked again in the same drive of a
//! run with the same arguments, is answered with its first answer instead of running
//! again. Any action of the run drops every answer kept: what it did may change what a
//! look-up reads. So does a write the run did not make, when the registry watches the
//! store the look-ups read ([`ToolRegistry::watch_writes`]; the world's tools do): other
//! residents act in the same world during a run, and the person too, through the same
//! store. What the store cannot see — another tab's writes, another player's in a shared
//! database — a kept answer can miss for the rest of the run; a fresh read could miss it
//! as well a moment later, and the world's rules check every action against the rows as
//! they are when it runs, so a stale look-up costs a refused action, never a wrong
//! write. Failures are never kept, nor calls whose arguments are not JSON.

use serde_json::Value;

use crate::base::text::Text;
use crate::llm::usage::Tally;
use crate::run::{Invocation, ToolResult};
use crate::tool::{RunsOn, ToolKind, ToolRegistry};

/// The answers kept so far, (tool, arguments, answer), and the watched writes
/// ([`ToolRegistry::writes_seen`]) as they stood before those look-ups ran.
#[derive(Default)]
pub struct Answers {
    kept: Vec<(Text, Value, Value)>,
    writes: u64,
}

impl Answers {
    /// The answer kept for `invocation`, as a result that took no time, while the
    /// watched writes are still `writes`.
    pub fn answer(&self, invocation: &Invocation, at_ms: i64, writes: u64) -> Option<ToolResult> {
        if writes != self.writes {
            return None;
        }
        let call = &invocation.call;
        let arguments = serde_json::from_str::<Value>(&call.arguments).ok()?;
        let (.., answer) = self
            .kept
            .iter()
            .find(|(name, args, _)| *name == call.name && *args == arguments)?;
        Some(ToolResult {
            call_id: call.id.clone(),
            result: Ok(answer.clone()),
            duration_ms: 0,
            at_ms,
            usage: Tally::default(),
        })
    }

    /// Takes in what `calls` returned, run when the watched writes stood at `writes`:
    /// after an action, nothing is kept; after another's write, only these answers;
    /// else each look-up's answer whose tool `tools` lets keep it is added.
    pub fn keep(
        &mut self,
        calls: &[Invocation],
        results: &[ToolResult],
        tools: &ToolRegistry,
        writes: u64,
    ) {
        if writes != self.writes {
            self.kept.clear();
            self.writes = writes;
        }
        if calls.iter().any(|i| i.kind != Some(ToolKind::Data)) {
            self.kept.clear();
            return;
        }
        for invocation in calls {
            let call = &invocation.call;
            let kept = invocation.runs_on == RunsOn::Page && tools.caches(&call.name);
            let answer = results
                .iter()
                .find(|r| r.call_id == call.id)
                .and_then(|r| r.result.as_ref().ok());
            let arguments = serde_json::from_str::<Value>(&call.arguments).ok();
            if let (true, Some(answer), Some(arguments)) = (kept, answer, arguments) {
                self.kept
                    .push((call.name.clone(), arguments, answer.clone()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::message::ToolCall;
    use crate::tool::{Approval, NoArgs, ToolError};

    fn invocation(id: &str, name: &str, arguments: &str, kind: ToolKind) -> Invocation {
        Invocation {
            call: ToolCall {
                id: id.into(),
                name: name.into(),
                arguments: arguments.into(),
            },
            kind: Some(kind),
            runs_on: RunsOn::Page,
            approval: Approval::Auto,
            timeout_ms: 1_000,
            idempotency_key: None,
            approved: None,
            owner: None,
        }
    }

    fn result(id: &str, result: Result<Value, ToolError>) -> ToolResult {
        ToolResult {
            call_id: id.into(),
            result,
            duration_ms: 5,
            at_ms: 1,
            usage: Tally::default(),
        }
    }

    fn tools() -> ToolRegistry {
        let mut tools = ToolRegistry::new();
        for name in ["stats", "fresh"] {
            tools.register_fn(name, ToolKind::Data, "", |_: NoArgs, _| async {
                Ok::<_, String>(1)
            });
        }
        tools.cache_results("stats");
        tools
    }

    #[test]
    fn a_kept_answer_serves_the_same_arguments_until_an_action() {
        let tools = tools();
        let mut answers = Answers::default();
        let first = invocation("c1", "stats", r#"{"who": 1}"#, ToolKind::Data);
        let fresh = invocation("c2", "fresh", "{}", ToolKind::Data);
        answers.keep(
            &[first.clone(), fresh.clone()],
            &[
                result("c1", Ok(Value::from(45))),
                result("c2", Ok(Value::from(7))),
            ],
            &tools,
            0,
        );
        let again = invocation("c3", "stats", r#"{ "who":1 }"#, ToolKind::Data);
        let served = answers.answer(&again, 9, 0).unwrap();
        assert_eq!(
            (served.call_id.as_str(), served.result),
            ("c3", Ok(Value::from(45)))
        );
        assert!(
            answers.answer(&fresh, 9, 0).is_none(),
            "a tool that keeps nothing"
        );
        let other = invocation("c4", "stats", r#"{"who": 2}"#, ToolKind::Data);
        assert!(answers.answer(&other, 9, 0).is_none(), "other arguments");
        let act = invocation("c5", "work", "{}", ToolKind::Action);
        answers.keep(&[act], &[result("c5", Ok(Value::Null))], &tools, 0);
        assert!(
            answers.answer(&again, 9, 0).is_none(),
            "an action drops them all"
        );
    }

    #[test]
    fn failures_are_not_kept() {
        let tools = tools();
        let mut answers = Answers::default();
        let call = invocation("c1", "stats", "{}", ToolKind::Data);
        let failed = Err(ToolError::Unknown("stats".into()));
        answers.keep(
            std::slice::from_ref(&call),
            &[result("c1", failed)],
            &tools,
            0,
        );
        assert!(answers.answer(&call, 9, 0).is_none());
    }

    #[test]
    fn a_write_the_run_did_not_make_drops_the_kept_answers() {
        use std::cell::Cell;
        use std::rc::Rc;
        // Another resident acting in the same world writes through the same store.
        let writes = Rc::new(Cell::new(3_u64));
        let mut tools = tools();
        let seen = Rc::clone(&writes);
        tools.watch_writes(Rc::new(move || seen.get()));
        let mut answers = Answers::default();
        let call = invocation("c1", "stats", "{}", ToolKind::Data);
        let before = tools.writes_seen();
        answers.keep(
            std::slice::from_ref(&call),
            &[result("c1", Ok(Value::from(45)))],
            &tools,
            before,
        );
        let again = invocation("c2", "stats", "{}", ToolKind::Data);
        assert_eq!(
            answers
                .answer(&again, 9, tools.writes_seen())
                .map(|r| r.result),
            Some(Ok(Value::from(45))),
            "kept while no one writes"
        );
        writes.set(4);
        let now = tools.writes_seen();
        assert_eq!(now, 4);
        assert!(
            answers.answer(&again, 9, now).is_none(),
            "another's write: the look-up runs again"
        );
        answers.keep(
            std::slice::from_ref(&again),
            &[result("c2", Ok(Value::from(30)))],
            &tools,
            now,
        );
        assert_eq!(
            answers.answer(&call, 9, now).map(|r| r.result),
            Some(Ok(Value::from(30))),
            "the fresh answer is kept in its place"
        );
    }
}
