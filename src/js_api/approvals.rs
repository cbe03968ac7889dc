//! Approvals through the API: decided in code (`onApproval`) or by a person
//! (`approve`, `deny`, `pending`).

use std::rc::Rc;

use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::FamiliarAgent;
use super::js::{error, field, message_of, to_js, to_json};
use crate::app::{ApprovalKey, Decision, PendingApproval};

impl FamiliarAgent {
    /// Decides the call `which` names: an [`ApprovalKey`]-shaped object, or the
    /// model's call id when only one waiting call has it.
    fn decide(&self, which: &JsValue, decision: Decision) -> Result<(), JsValue> {
        let key = match which.as_string() {
            Some(call_id) => self.session.waiting_call(&call_id),
            None => Ok(approval_key(which)?),
        };
        key.and_then(|key| self.session.decide(&key, decision))
            .map_err(|e| error(&e.to_string()))
    }
}

#[wasm_bindgen]
impl FamiliarAgent {
    /// Decides approvals in code: `callback(pending)` returns (or resolves to) `true`,
    /// `false`, one of `pending.grants` (`"task"`, `"site"`, `"always"`) or
    /// `{approve, grant, reason}`; `null` hands them back to `approve` / `deny`. A
    /// callback that throws denies.
    #[wasm_bindgen(js_name = onApproval)]
    pub fn on_approval(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ApprovalHandler | null | void")] callback: Option<
            Function,
        >,
    ) {
        let approver = callback.map(|callback| -> crate::app::Approver {
            Rc::new(move |pending: &PendingApproval| {
                let returned = callback.call1(&JsValue::NULL, &to_js(pending));
                Box::pin(async move {
                    let settled = match returned {
                        Ok(value) => JsFuture::from(Promise::resolve(&value)).await,
                        Err(e) => Err(e),
                    };
                    match settled {
                        Ok(answer) => decision(&answer),
                        Err(e) => Decision::Deny {
                            reason: format!("the approval handler failed: {}", message_of(&e)),
                        },
                    }
                })
            })
        });
        self.session.set_approver(approver);
    }

    /// Approves a waiting call, and with `grant` more (one of its `grants`: `"task"`,
    /// `"site"`, `"always"`; `true` is `"always"`: this tool, for this agent, in this
    /// conversation). `which` is a `pending()` entry (or `{conversation, turn,
    /// callId}`); the model's call id alone is taken while no other waiting call
    /// shares it.
    pub fn approve(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ApprovalKey | string")] which: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Grant | boolean | void")] grant: Option<JsValue>,
    ) -> Result<(), JsValue> {
        let grant = grant.unwrap_or(JsValue::UNDEFINED);
        let decision = match (grant.as_bool(), grant.as_string()) {
            (Some(always), _) if always => Decision::ApproveAlways,
            (_, Some(name)) => granting(&name).ok_or_else(|| {
                error(&format!(
                    "there is no grant \"{name}\"; known: task, site, always"
                ))
            })?,
            _ => Decision::Approve,
        };
        self.decide(&which, decision)
    }

    /// Lets the harmless page actions (`scroll_to`, `highlight`) run without
    /// a card on `site` (an origin, as `pending.site` names it), or asks again
    /// (`allowed: false`): the standing permission a host keeps (a card answered
    /// `"site"`) and gives back to each agent it creates.
    #[wasm_bindgen(js_name = allowHarmless)]
    pub fn allow_harmless(&self, site: &str, allowed: Option<bool>) {
        self.session.allow_harmless(site, allowed.unwrap_or(true));
    }

    /// The sites whose harmless page actions run without a card.
    #[wasm_bindgen(js_name = harmlessSites)]
    pub fn harmless_sites(&self) -> Vec<String> {
        self.session.harmless_sites()
    }

    /// Denies a waiting call (named as for `approve`); the model hears `reason`.
    pub fn deny(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ApprovalKey | string")] which: JsValue,
        reason: Option<String>,
    ) -> Result<(), JsValue> {
        let reason = reason
            .filter(|r| !r.trim().is_empty())
            .unwrap_or_else(|| "the user said no".into());
        self.decide(&which, Decision::Deny { reason })
    }

    /// The calls waiting for a decision.
    #[wasm_bindgen(unchecked_return_type = "PendingApproval[]")]
    pub fn pending(&self) -> JsValue {
        to_js(&self.session.pending())
    }
}

/// `{conversation, turn, callId}` or a `pending()` entry (`call.id`) as a key.
fn approval_key(which: &JsValue) -> Result<ApprovalKey, JsValue> {
    let conversation = field(which, "conversation").as_string();
    let turn = field(which, "turn").as_f64();
    let call = field(which, "callId")
        .as_string()
        .or_else(|| field(&field(which, "call"), "id").as_string());
    match (conversation, turn, call) {
        (Some(conversation), Some(turn), Some(call)) if turn >= 0.0 && turn.fract() == 0.0 => {
            Ok(ApprovalKey {
                conversation,
                turn: turn as u64,
                call,
            })
        }
        _ => Err(error(
            "name the call to decide as a pending() entry, {conversation, turn, callId}, or \
             its call id",
        )),
    }
}

/// The approval that grants `name` (a `Grant` as `pending.grants` names it).
fn granting(name: &str) -> Option<Decision> {
    match name {
        "task" => Some(Decision::ApproveForTask),
        "site" => Some(Decision::ApproveOnSite),
        "always" => Some(Decision::ApproveAlways),
        _ => None,
    }
}

/// A host's approval answer as a decision; anything unclear denies. A grant the
/// card did not offer (`"task"` on a call that always asks) approves the call alone.
fn decision(answer: &JsValue) -> Decision {
    if answer.as_bool() == Some(true) {
        return Decision::Approve;
    }
    if let Some(granted) = answer.as_string().as_deref().and_then(granting) {
        return granted;
    }
    if answer.is_object() {
        let approve = field(answer, "approve").as_bool() == Some(true);
        let always = field(answer, "always").as_bool() == Some(true);
        let grant = field(answer, "grant").as_string();
        let reason = field(answer, "reason").as_string();
        return match (approve, grant.as_deref().and_then(granting), always) {
            (true, Some(granted), _) => granted,
            (true, None, true) => Decision::ApproveAlways,
            (true, None, false) => Decision::Approve,
            (false, ..) => Decision::Deny {
                reason: reason.unwrap_or_else(|| "the host denied it".into()),
            },
        };
    }
    Decision::Deny {
        reason: if answer.as_bool() == Some(false) {
            "the host denied it".into()
        } else {
            format!(
                "the approval handler answered {}, not true, false, \"task\", \"site\" or \"always\"",
                to_json(answer).map(|v| v.to_string()).unwrap_or_default()
            )
        },
    }
}
