//! `createAgent({environment})` and `agent.schedule(...)`: what the host perceives as
//! each turn starts — for every agent, or for one of `agents` by its own
//! `environment` — and triggers the agent fires on its own.

use std::rc::Rc;

use js_sys::{Function, Promise};
use serde_json::Value;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use super::js::{console_error, field, message_of, to_js, to_json};
use crate::app::spec::{self, Problem};
use crate::app::{Environment, Missed, Perceived};
use crate::run::Observation;

/// Takes `config.environment` (a function) out of the config, which must be JSON, and
/// each of `config.agents[].environment` by its agent's name (JSON drops them).
pub fn take_environment(
    config: JsValue,
) -> (JsValue, Option<Environment>, Vec<(String, Environment)>) {
    // `Array.from` throws on what is not a list; the spec says what is wrong with it.
    let agents = field(&config, "agents");
    let agents = match agents.dyn_into::<js_sys::Array>() {
        Ok(agents) => agents,
        Err(_) => js_sys::Array::new(),
    };
    let own = agents
        .iter()
        .filter_map(|agent| {
            let function = field(&agent, "environment").dyn_into::<Function>().ok()?;
            Some((field(&agent, "name").as_string()?, environment_of(function)))
        })
        .collect();
    let Ok(function) = field(&config, "environment").dyn_into::<Function>() else {
        return (config, None, own);
    };
    let rest = js_sys::Object::assign(&js_sys::Object::new(), &config.unchecked_into());
    let _ = js_sys::Reflect::delete_property(&rest, &"environment".into());
    (rest.into(), Some(environment_of(function)), own)
}

/// The host's `environment` function as the session calls it.
fn environment_of(function: Function) -> Environment {
    let function = Rc::new(function);
    Rc::new(move |observation: &Observation| {
        let function = Rc::clone(&function);
        let asked = to_js(observation);
        Box::pin(async move {
            match perceive(&function, &asked).await {
                Ok(perceived) => perceived,
                // A broken environment costs the turn its perception, not the turn.
                Err(why) => {
                    console_error(&format!("environment: {why}"));
                    Perceived::default()
                }
            }
        })
    })
}

/// Calls the host's `environment(observation)`: a string, or `{text, others?, actor?}`,
/// or a promise of either.
async fn perceive(function: &Function, asked: &JsValue) -> Result<Perceived, String> {
    let returned = function
        .call1(&JsValue::NULL, asked)
        .map_err(|e| format!("it threw: {}", message_of(&e)))?;
    let settled = JsFuture::from(Promise::resolve(&returned))
        .await
        .map_err(|e| format!("it rejected: {}", message_of(&e)))?;
    perceived_of(&to_json(&settled)?)
}

/// What `environment` returned, read.
pub fn perceived_of(value: &Value) -> Result<Perceived, String> {
    match value {
        Value::Null => Ok(Perceived::default()),
        Value::String(text) => Ok(Perceived {
            text: text.clone(),
            ..Perceived::default()
        }),
        Value::Object(fields) => {
            let text = match fields.get("text") {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(text)) => text.clone(),
                Some(_) => return Err("`text` is not a string".into()),
            };
            let others = match fields.get("others") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(others)) => *others,
                Some(_) => return Err("`others` is not true or false".into()),
            };
            let actor = match fields.get("actor") {
                None | Some(Value::Null) => serde_json::Map::new(),
                Some(Value::Object(actor)) => actor.clone(),
                Some(_) => return Err("`actor` is not an object".into()),
            };
            Ok(Perceived {
                text,
                others,
                actor,
            })
        }
        _ => Err("expected text or {text, others, actor}".into()),
    }
}

/// `schedule({id?, every, trigger, missed?})`, checked: `every` in milliseconds.
pub struct ScheduleSpec {
    pub id: Option<String>,
    pub every_ms: u64,
    pub trigger: Observation,
    pub missed: Missed,
}

pub fn schedule_of(value: &Value) -> Result<ScheduleSpec, String> {
    let problem = |message: String| {
        spec::describe(
            "schedule's argument has problems",
            &[Problem {
                path: "schedule".into(),
                message,
            }],
        )
    };
    let Some(fields) = value.as_object() else {
        return Err(problem("expected {id?, every, trigger, missed?}".into()));
    };
    if let Some(unknown) = fields
        .keys()
        .find(|k| !["id", "every", "trigger", "missed"].contains(&k.as_str()))
    {
        return Err(problem(format!(
            "unknown field `{unknown}`; known fields: id, every, trigger, missed"
        )));
    }
    let id = match fields.get("id") {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) => Some(id.clone()),
        Some(_) => return Err(problem("`id` is not a string".into())),
    };
    let every_ms = fields
        .get("every")
        .and_then(Value::as_f64)
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
        .ok_or_else(|| problem("`every` is the period in milliseconds, e.g. 60000".into()))?;
    let missed = match fields.get("missed").and_then(Value::as_str) {
        None => Missed::Skip,
        Some("skip") => Missed::Skip,
        Some("catch_up" | "catchUp") => Missed::CatchUp,
        Some(other) => {
            return Err(problem(format!(
                "`missed` is \"skip\" or \"catchUp\", got `{other}`"
            )));
        }
    };
    let trigger = fields
        .get("trigger")
        .ok_or_else(|| problem("`trigger` is the event to fire, as `trigger()` takes it".into()))?;
    let trigger = spec::observation_from_value(trigger)
        .map_err(|problems| spec::describe("schedule's trigger has problems", &problems))?;
    Ok(ScheduleSpec {
        id,
        every_ms: every_ms as u64,
        trigger,
        missed,
    })
}
