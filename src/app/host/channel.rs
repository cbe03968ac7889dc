//! Host tools answered over messages (seed 003's `function_call` /
//! `function_result`), for an iframe, an extension port or a socket: each result is
//! taken only from the target its call went to, under a request id no other target
//! can guess.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use futures::channel::oneshot;
use serde_json::{Value, json};

use super::{Handler, REMEMBERED};
use crate::base::small_map::SmallMap;

/// Why a message from the host was ignored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Ignored {
    #[error("not a function_result message: {0}")]
    NotAResult(String),
    #[error("no call is waiting for request `{0}` from this sender")]
    Unknown(String),
    #[error("request `{0}` was already answered")]
    Duplicate(String),
    #[error("request `{0}` was answered after its call gave up (timed out or stopped)")]
    Late(String),
}

/// Where a channel's calls go: one per distinct recipient (an iframe's window at one
/// origin, a `MessagePort`, an extension port). A result is taken only from the
/// target its call was posted to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Target(u64);

type Reply = oneshot::Sender<Result<Value, String>>;

/// Calls answered over messages: each call goes out as
/// `{type: "function_call", request_id, function, arguments}` to its tool's
/// [`Target`] and waits for `{type: "function_result", request_id, success, result}`
/// from that same target. One channel serves every tool of a session; waiting calls
/// are keyed by (target, request id), so one frame or port cannot answer a call that
/// went to another. The request id on the wire is the call's idempotency key with a
/// keyed hash of it appended (`{key}~{16 hex}`): no recipient can work out the id of a
/// call it was not sent, while the same call repeated (a resumed run) carries the
/// same id as long as the secret is kept.
pub struct Channel {
    secret: (u64, u64),
    targets: Cell<u64>,
    waiting: RefCell<SmallMap<(Target, String), Reply>>,
    answered: RefCell<VecDeque<(Target, String)>>,
}

impl Channel {
    /// A channel whose request ids are keyed by `secret` (random, kept private to
    /// the page: see [`crate::app::Session::channel`]).
    pub fn new(secret: (u64, u64)) -> Rc<Self> {
        Rc::new(Self {
            secret,
            targets: Cell::new(0),
            waiting: RefCell::new(SmallMap::new()),
            answered: RefCell::new(VecDeque::new()),
        })
    }

    /// A new recipient for calls.
    pub fn target(&self) -> Target {
        let next = self.targets.get() + 1;
        self.targets.set(next);
        Target(next)
    }

    /// The request id `key`'s call carries on the wire.
    pub fn wire_id(&self, key: &str) -> String {
        use std::hash::Hasher;
        // SipHash-2-4 with a secret key is a PRF: its output for one id says nothing
        // about another's.
        #[allow(deprecated)]
        let mut hasher = std::hash::SipHasher::new_with_keys(self.secret.0, self.secret.1);
        hasher.write(key.as_bytes());
        format!("{key}~{:016x}", hasher.finish())
    }

    /// A handler for `function` that posts its calls to `target` with `send`.
    pub fn handler(
        self: &Rc<Self>,
        function: &str,
        target: Target,
        send: Rc<dyn Fn(Value)>,
    ) -> Handler {
        let channel = Rc::clone(self);
        let function = function.to_owned();
        Rc::new(move |request_id, arguments| {
            let (tx, rx) = oneshot::channel();
            let wire_id = channel.wire_id(request_id);
            let mut waiting = channel.waiting.borrow_mut();
            if waiting.len() >= REMEMBERED {
                // Calls that gave up long ago (timed out, never answered) make room.
                waiting.retain(|_, tx| !tx.is_canceled());
            }
            waiting.insert((target, wire_id.clone()), tx);
            drop(waiting);
            send(json!({
                "type": "function_call",
                "request_id": wire_id,
                "function": function,
                "arguments": arguments,
            }));
            Box::pin(async move {
                rx.await
                    .unwrap_or_else(|_| Err("the channel was closed".to_owned()))
            })
        })
    }

    /// Takes a message `from` a target (`None`: the page itself, relaying a result
    /// that came another way, for a call to any target): a result for a call waiting
    /// on that target is delivered; anything else is ignored, and why is returned for
    /// the caller to report.
    pub fn receive(&self, from: Option<Target>, message: &Value) -> Result<(), Ignored> {
        if message.get("type").and_then(Value::as_str) != Some("function_result") {
            let mut text = message.to_string();
            if let Some((cut, _)) = text.char_indices().nth(80) {
                text.truncate(cut);
                text.push('…');
            }
            return Err(Ignored::NotAResult(text));
        }
        let Some(request_id) = message.get("request_id").and_then(Value::as_str) else {
            return Err(Ignored::NotAResult("it has no request_id".into()));
        };
        let mine =
            |target: &Target, id: &str| from.is_none_or(|f| f == *target) && id == request_id;
        let key = self
            .waiting
            .borrow()
            .keys()
            .find(|(target, id)| mine(target, id))
            .cloned();
        let Some(tx) = key.and_then(|key| self.waiting.borrow_mut().remove_entry(&key)) else {
            let duplicate = self.answered.borrow().iter().any(|(t, id)| mine(t, id));
            return Err(if duplicate {
                Ignored::Duplicate(request_id.to_owned())
            } else {
                Ignored::Unknown(request_id.to_owned())
            });
        };
        let (key, tx) = tx;
        let mut answered = self.answered.borrow_mut();
        if answered.len() >= REMEMBERED {
            answered.pop_front();
        }
        answered.push_back(key);
        let result = message.get("result").cloned().unwrap_or(Value::Null);
        let outcome = if message.get("success").and_then(Value::as_bool) == Some(true) {
            Ok(result)
        } else {
            Err(match result {
                Value::String(error) => error,
                Value::Null => "the host reported a failure".to_owned(),
                other => other.to_string(),
            })
        };
        tx.send(outcome)
            .map_err(|_| Ignored::Late(request_id.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;

    /// A channel with one target whose posted calls land in the returned list.
    fn posting(channel: &Rc<Channel>) -> (Target, Handler, Rc<RefCell<Vec<Value>>>) {
        let sent = Rc::new(RefCell::new(Vec::new()));
        let outbox = Rc::clone(&sent);
        let target = channel.target();
        let handler = channel.handler(
            "spawn",
            target,
            Rc::new(move |message| outbox.borrow_mut().push(message)),
        );
        (target, handler, sent)
    }

    fn result(request_id: &Value, result: Value) -> Value {
        json!({"type": "function_result", "request_id": request_id, "success": true,
               "result": result})
    }

    #[test]
    fn a_channel_delivers_results_by_request_id_and_reports_the_rest() {
        let channel = Channel::new((1, 2));
        let (target, handler, sent) = posting(&channel);
        let from = Some(target);
        let answer = handler("r1", json!({"kind": "goblin"}));
        let r1 = json!(channel.wire_id("r1"));
        assert_eq!(
            sent.borrow()[0],
            json!({"type": "function_call", "request_id": r1, "function": "spawn",
                   "arguments": {"kind": "goblin"}})
        );
        assert_eq!(
            channel.receive(from, &result(&json!("r9"), json!(1))),
            Err(Ignored::Unknown("r9".into()))
        );
        channel
            .receive(from, &result(&r1, json!({"hp": 7})))
            .unwrap();
        assert_eq!(block_on(answer), Ok(json!({"hp": 7})));
        assert_eq!(
            channel.receive(from, &result(&r1, json!(2))),
            Err(Ignored::Duplicate(channel.wire_id("r1")))
        );
        // A call that gave up (its future dropped at the timeout) gets a late answer.
        drop(handler("r2", json!({})));
        let r2 = json!(channel.wire_id("r2"));
        assert_eq!(
            channel.receive(from, &result(&r2, json!(0))),
            Err(Ignored::Late(channel.wire_id("r2")))
        );
        assert!(matches!(
            channel.receive(from, &json!({"type": "hello"})),
            Err(Ignored::NotAResult(_))
        ));
        let failed = handler("r3", json!({}));
        let r3 = json!(channel.wire_id("r3"));
        channel
            .receive(
                from,
                &json!({"type": "function_result", "request_id": r3,
                        "success": false, "result": "no room"}),
            )
            .unwrap();
        assert_eq!(block_on(failed), Err("no room".into()));
    }

    #[test]
    fn a_result_is_taken_only_from_the_target_its_call_went_to() {
        let channel = Channel::new((1, 2));
        let (_, spawn, _) = posting(&channel);
        let (frame, _, _) = posting(&channel);
        let answer = spawn("run/1/call_1", json!({"kind": "goblin"}));
        let id = json!(channel.wire_id("run/1/call_1"));
        // Another frame, even knowing the id, cannot answer it.
        assert_eq!(
            channel.receive(Some(frame), &result(&id, json!("forged"))),
            Err(Ignored::Unknown(channel.wire_id("run/1/call_1")))
        );
        // The page itself (relaying a socket's answer) can, and only once.
        channel.receive(None, &result(&id, json!("real"))).unwrap();
        assert_eq!(block_on(answer), Ok(json!("real")));
        assert!(channel.receive(None, &result(&id, json!("again"))).is_err());
    }

    #[test]
    fn a_request_id_on_the_wire_cannot_be_worked_out_from_another() {
        let channel = Channel::new((0x5eed, 0xc0ffee));
        let (_, handler, sent) = posting(&channel);
        drop(handler("ns-c1-1-1-0000beef/1/call_1", json!({})));
        drop(handler("ns-c1-1-1-0000beef/1/call_2", json!({})));
        let ids: Vec<String> = sent
            .borrow()
            .iter()
            .map(|m| m["request_id"].as_str().unwrap().to_owned())
            .collect();
        // The key is readable; the rest is a keyed hash, not a counter.
        assert!(
            ids[0].starts_with("ns-c1-1-1-0000beef/1/call_1~"),
            "{ids:?}"
        );
        let tail = |id: &str| id.rsplit_once('~').unwrap().1.to_owned();
        assert_eq!(tail(&ids[0]).len(), 16);
        assert_ne!(tail(&ids[0]), tail(&ids[1]));
        // The same key gives the same id with the same secret (a resumed run), and
        // another id with another secret.
        assert_eq!(channel.wire_id("ns-c1-1-1-0000beef/1/call_1"), ids[0]);
        let other = Channel::new((0x5eed, 0xc0ffef));
        assert_ne!(other.wire_id("ns-c1-1-1-0000beef/1/call_1"), ids[0]);
    }
}
