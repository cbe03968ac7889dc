//! Host tools answered over messages (seed 003's `function_call` /
//! `function_result`), for an iframe, an extension port or a socket: each result is
//! taken only from the target its call went to, under a request id no other target
//! can guess. A target that asked for batches gets the calls of one step as one
//! `function_calls` message; a target that disconnects (its own `disconnect` message,
//! or [`Channel::close`]) fails the calls waiting on it at once, not at their timeout.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use futures::channel::oneshot;
use serde_json::{Value, json};

use super::{Handler, REMEMBERED};
use crate::base::small_map::{SmallMap, SmallSet};

/// Why a message from the host was ignored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Ignored {
    #[error("not a function_result, function_results or disconnect message: {0}")]
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
///
/// A target [`Channel::batch`]ed gets every call of one step in one message,
/// `{type: "function_calls", calls: [{request_id, function, arguments}, …]}`, and may
/// answer them in one, `{type: "function_results", results: [{request_id, success,
/// result}, …]}`, or one by one. A step's calls are those its driver starts together
/// (it starts them all before it awaits any): each call waits one turn of the
/// executor before it is posted, by which time the others have joined it.
///
/// A target that says `{type: "disconnect", reason?}` fails every call waiting on it
/// at once; one [`Channel::close`]d (gone for good) also fails every later call at
/// once.
pub struct Channel {
    secret: (u64, u64),
    targets: Cell<u64>,
    waiting: RefCell<SmallMap<(Target, String), Reply>>,
    answered: RefCell<VecDeque<(Target, String)>>,
    /// Targets that take their calls in batches.
    batched: RefCell<SmallSet<Target>>,
    /// Calls of batched targets not posted yet: (target, wire id, the call).
    outbox: RefCell<Vec<(Target, String, Value)>>,
    /// Targets gone for good, with why.
    closed: RefCell<SmallMap<Target, String>>,
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
            batched: RefCell::new(SmallSet::new()),
            outbox: RefCell::new(Vec::new()),
            closed: RefCell::new(SmallMap::new()),
        })
    }

    /// Whether `target` takes its calls in batches, from now on.
    pub fn batch(&self, target: Target, batched: bool) {
        let mut set = self.batched.borrow_mut();
        if batched {
            set.insert(target);
        } else {
            set.remove(&target);
        }
    }

    /// Whether `target` takes its calls in batches.
    pub fn is_batched(&self, target: Target) -> bool {
        self.batched.borrow().contains(&target)
    }

    /// `target` is gone for good (`why`: its port closed, say): the calls waiting on it
    /// fail now, and so does every later call to it.
    pub fn close(&self, target: Target, why: &str) {
        self.closed.borrow_mut().insert(target, why.to_owned());
        self.disconnected(Some(target), why);
    }

    /// The host behind `from` (`None`: every target) disconnected, `why`: the calls
    /// waiting on it fail now, saying their outcome is unknown; how many did.
    pub fn disconnected(&self, from: Option<Target>, why: &str) -> usize {
        let mine = |target: &Target| from.is_none_or(|f| f == *target);
        self.outbox
            .borrow_mut()
            .retain(|(target, ..)| !mine(target));
        let keys: Vec<(Target, String)> = self
            .waiting
            .borrow()
            .keys()
            .filter(|(target, _)| mine(target))
            .cloned()
            .collect();
        let error = format!(
            "the host disconnected before answering ({why}); whether the call took \
             effect is unknown"
        );
        let mut failed = 0;
        for key in keys {
            let reply = self.waiting.borrow_mut().remove(&key);
            if let Some(reply) = reply
                && reply.send(Err(error.clone())).is_ok()
            {
                failed += 1;
            }
        }
        failed
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

    /// A handler for `function` that posts its calls to `target` with `send`: one by
    /// one, or in batches when the target asked for them.
    pub fn handler(
        self: &Rc<Self>,
        function: &str,
        target: Target,
        send: Rc<dyn Fn(Value)>,
    ) -> Handler {
        let channel = Rc::clone(self);
        let function = function.to_owned();
        Rc::new(move |request_id, arguments| {
            if let Some(why) = channel.closed.borrow().get(&target) {
                let error = format!("the host is gone ({why}): nothing can answer");
                return Box::pin(async move { Err(error) });
            }
            let (tx, rx) = oneshot::channel();
            let wire_id = channel.wire_id(request_id);
            let mut waiting = channel.waiting.borrow_mut();
            if waiting.len() >= REMEMBERED {
                // Calls that gave up long ago (timed out, never answered) make room.
                waiting.retain(|_, tx| !tx.is_canceled());
            }
            waiting.insert((target, wire_id.clone()), tx);
            drop(waiting);
            let batched = channel.is_batched(target);
            if batched {
                let call = json!({
                    "request_id": wire_id,
                    "function": function,
                    "arguments": arguments,
                });
                channel.outbox.borrow_mut().push((target, wire_id, call));
            } else {
                send(json!({
                    "type": "function_call",
                    "request_id": wire_id,
                    "function": function,
                    "arguments": arguments,
                }));
            }
            let channel = Rc::clone(&channel);
            let send = Rc::clone(&send);
            Box::pin(async move {
                if batched {
                    // The step's other calls are made in this same turn: post them
                    // all, once, after it.
                    YieldOnce(false).await;
                    channel.post_batch(target, &*send);
                }
                rx.await
                    .unwrap_or_else(|_| Err("the channel was closed".to_owned()))
            })
        })
    }

    /// Posts the calls waiting in the outbox for `target` as one message; calls that
    /// gave up meanwhile are left out.
    fn post_batch(&self, target: Target, send: &dyn Fn(Value)) {
        let mut outbox = self.outbox.borrow_mut();
        let (mine, others): (Vec<_>, Vec<_>) = outbox.drain(..).partition(|(t, ..)| *t == target);
        *outbox = others;
        drop(outbox);
        let waiting = self.waiting.borrow();
        let calls: Vec<Value> = mine
            .into_iter()
            .filter(|(t, id, _)| {
                waiting
                    .get(&(*t, id.clone()))
                    .is_some_and(|tx| !tx.is_canceled())
            })
            .map(|(.., call)| call)
            .collect();
        drop(waiting);
        if !calls.is_empty() {
            send(json!({"type": "function_calls", "calls": calls}));
        }
    }

    /// Takes any message the channel speaks `from` a target (`None`: the page
    /// itself): a `function_result`, a `function_results` batch, or `disconnect`.
    /// How many calls it settled, and what it ignored, each with why.
    pub fn deliver(&self, from: Option<Target>, message: &Value) -> (usize, Vec<Ignored>) {
        match message.get("type").and_then(Value::as_str) {
            Some("function_results") => {
                let Some(results) = message.get("results").and_then(Value::as_array) else {
                    let why = "function_results without a list of results".to_owned();
                    return (0, vec![Ignored::NotAResult(why)]);
                };
                let mut settled = 0;
                let mut ignored = Vec::new();
                for result in results {
                    match self.settle(from, result) {
                        Ok(()) => settled += 1,
                        Err(why) => ignored.push(why),
                    }
                }
                (settled, ignored)
            }
            Some("disconnect") => {
                let why = message.get("reason").and_then(Value::as_str);
                let why = why.unwrap_or("the host said it disconnected");
                (self.disconnected(from, why), Vec::new())
            }
            _ => match self.receive(from, message) {
                Ok(()) => (1, Vec::new()),
                Err(why) => (0, vec![why]),
            },
        }
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
        self.settle(from, message)
    }

    /// Delivers one result (`{request_id, success, result}`) `from` a target to the
    /// call waiting for it.
    fn settle(&self, from: Option<Target>, message: &Value) -> Result<(), Ignored> {
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

/// Ready on its second poll, having woken its task on the first: lets the rest of a
/// step's calls be made before the first is posted.
struct YieldOnce(bool);

impl std::future::Future for YieldOnce {
    type Output = ();

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        if self.0 {
            return std::task::Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
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

    #[test]
    fn a_batched_target_gets_a_steps_calls_in_one_message_and_may_answer_them_in_one() {
        use futures::task::LocalSpawnExt;
        let channel = Channel::new((1, 2));
        let (target, handler, sent) = posting(&channel);
        channel.batch(target, true);
        // A step's calls, made together as the driver makes them.
        let answers = Rc::new(RefCell::new(None));
        let slot = Rc::clone(&answers);
        let step = futures::future::join_all([
            handler("r1", json!({"kind": "goblin"})),
            handler("r2", json!({"kind": "troll"})),
        ]);
        let mut pool = futures::executor::LocalPool::new();
        pool.spawner()
            .spawn_local(async move { *slot.borrow_mut() = Some(step.await) })
            .unwrap();
        pool.run_until_stalled();
        let (r1, r2) = (channel.wire_id("r1"), channel.wire_id("r2"));
        assert_eq!(
            *sent.borrow(),
            [json!({"type": "function_calls", "calls": [
                {"request_id": r1, "function": "spawn", "arguments": {"kind": "goblin"}},
                {"request_id": r2, "function": "spawn", "arguments": {"kind": "troll"}},
            ]})]
        );
        let (settled, ignored) = channel.deliver(
            Some(target),
            &json!({"type": "function_results", "results": [
                {"request_id": r2, "success": false, "result": "no trolls here"},
                {"request_id": r1, "success": true, "result": {"hp": 7}},
                {"request_id": "r9", "success": true},
            ]}),
        );
        assert_eq!(settled, 2);
        assert_eq!(ignored, [Ignored::Unknown("r9".into())]);
        pool.run_until_stalled();
        assert_eq!(
            answers.borrow_mut().take(),
            Some(vec![Ok(json!({"hp": 7})), Err("no trolls here".into())])
        );
        // Another step is another message, answered one by one this time.
        let third = handler("r3", json!({"kind": "imp"}));
        let slot = Rc::clone(&answers);
        pool.spawner()
            .spawn_local(async move { *slot.borrow_mut() = Some(vec![third.await]) })
            .unwrap();
        pool.run_until_stalled();
        assert_eq!(sent.borrow().len(), 2);
        assert_eq!(
            sent.borrow()[1]["calls"][0]["arguments"],
            json!({"kind": "imp"})
        );
        let r3 = json!(channel.wire_id("r3"));
        assert_eq!(
            channel.deliver(Some(target), &result(&r3, json!(1))),
            (1, vec![])
        );
        pool.run_until_stalled();
        assert_eq!(answers.borrow_mut().take(), Some(vec![Ok(json!(1))]));
    }

    #[test]
    fn a_host_that_disconnects_fails_its_waiting_calls_at_once_and_a_closed_port_every_later_one() {
        let channel = Channel::new((1, 2));
        let (target, handler, _) = posting(&channel);
        let (other, other_handler, _) = posting(&channel);
        let waiting = handler("r1", json!({"kind": "goblin"}));
        let elsewhere = other_handler("r2", json!({"kind": "imp"}));
        let (failed, ignored) = channel.deliver(
            Some(target),
            &json!({"type": "disconnect", "reason": "the socket dropped"}),
        );
        assert_eq!((failed, ignored), (1, vec![]));
        assert_eq!(
            block_on(waiting),
            Err(
                "the host disconnected before answering (the socket dropped); whether the \
                 call took effect is unknown"
                    .into()
            )
        );
        // Only that target's calls: the other still waits, and is answered.
        let r2 = json!(channel.wire_id("r2"));
        channel
            .receive(Some(other), &result(&r2, json!("here")))
            .unwrap();
        assert_eq!(block_on(elsewhere), Ok(json!("here")));
        // Said by message, the target may come back; a closed port never does.
        let again = handler("r3", json!({}));
        channel.close(target, "its port closed");
        assert!(block_on(again).unwrap_err().contains("(its port closed)"));
        let later = block_on(handler("r4", json!({}))).unwrap_err();
        assert_eq!(
            later,
            "the host is gone (its port closed): nothing can answer"
        );
    }
}
