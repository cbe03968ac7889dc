//! `createAgent({telemetry: {endpoint, headers, content, secrets, onSpan, serviceName}})`: every
//! run traced as OpenTelemetry spans, exported as OTLP/HTTP JSON to the collector at
//! `endpoint` (batched, retried, kept while offline and across a reload:
//! `web::otlp`), handed to `onSpan` as each ends (a host with its own pipeline), or
//! both; and `agent.trace(conversation)`, a conversation's trace as an OTLP JSON
//! export request (what the inspector downloads). Prompts, answers, arguments and
//! results only with `content: true`; card numbers and the host's `secrets` never.

use wasm_bindgen::prelude::*;

use super::FamiliarAgent;
use super::js::field;
#[cfg(feature = "telemetry")]
use super::js::{console_error, message_of, to_js, to_json};
#[cfg(feature = "telemetry")]
use {
    crate::app::spec::ModelSpec,
    crate::app::{Session, Storage, Telemetry, VolatileStorage},
    crate::trace::{Capture, Collector, Resource, Span, export_request, otlp_span},
    crate::web::{BrowserClock, BrowserStorage, Fetch, otlp::Exporter},
    js_sys::Function,
    serde_json::Value,
    std::rc::Rc,
};

/// What the host asked for under `telemetry`.
pub struct Given {
    #[cfg(feature = "telemetry")]
    collector: Option<Collector>,
    #[cfg(feature = "telemetry")]
    content: bool,
    #[cfg(feature = "telemetry")]
    secrets: Vec<String>,
    #[cfg(feature = "telemetry")]
    on_span: Option<Function>,
    #[cfg(feature = "telemetry")]
    service: String,
}

#[cfg(feature = "telemetry")]
const KNOWN: [&str; 6] = [
    "endpoint",
    "headers",
    "content",
    "secrets",
    "onSpan",
    "serviceName",
];

/// The shortest secret masked: a shorter one would mask ordinary words too.
#[cfg(feature = "telemetry")]
const SHORTEST_SECRET: usize = 4;

/// Takes `telemetry` out of `config` (its `onSpan` is a function, not JSON), checked.
pub fn take_telemetry(config: JsValue) -> Result<(JsValue, Option<Given>), String> {
    let given = field(&config, "telemetry");
    if given.is_undefined() || given.is_null() {
        return Ok((config, None));
    }
    if cfg!(not(feature = "telemetry")) {
        return Err("config.telemetry needs the telemetry feature, which this build leaves out: use the full build (dist/, `trunk build --release`) or one with the `telemetry` feature".into());
    }
    let rest = js_sys::Object::assign(&js_sys::Object::new(), &config.into());
    let _ = js_sys::Reflect::delete_property(&rest, &"telemetry".into());
    Ok((rest.into(), Some(read(&given)?)))
}

#[cfg(not(feature = "telemetry"))]
fn read(_: &JsValue) -> Result<Given, String> {
    Ok(Given {})
}

#[cfg(feature = "telemetry")]
fn read(given: &JsValue) -> Result<Given, String> {
    let on_span = match field(given, "onSpan") {
        f if f.is_undefined() || f.is_null() => None,
        f => Some(
            f.dyn_into::<Function>()
                .map_err(|_| "config.telemetry.onSpan must be a function")?,
        ),
    };
    let rest = js_sys::Object::assign(&js_sys::Object::new(), given.unchecked_ref());
    let _ = js_sys::Reflect::delete_property(&rest, &"onSpan".into());
    let value = to_json(&rest).map_err(|e| format!("config.telemetry: {e}"))?;
    let Value::Object(fields) = value else {
        return Err("config.telemetry must be an object".into());
    };
    if let Some(unknown) = fields.keys().find(|k| !KNOWN.contains(&k.as_str())) {
        return Err(format!(
            "config.telemetry.{unknown}: unknown field; known fields: {}",
            KNOWN.join(", ")
        ));
    }
    let text = |name: &str| match fields.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("config.telemetry.{name} must be a string")),
    };
    let mut headers = Vec::new();
    match fields.get("headers") {
        None | Some(Value::Null) => {}
        Some(Value::Object(given)) => {
            for (name, value) in given {
                let Value::String(value) = value else {
                    return Err(format!("config.telemetry.headers.{name} must be a string"));
                };
                headers.push((name.clone(), value.clone()));
            }
        }
        Some(_) => return Err("config.telemetry.headers must be an object of strings".into()),
    }
    let collector = match text("endpoint")? {
        Some(endpoint) => Some(
            Collector::new(&endpoint, headers)
                .map_err(|e| format!("config.telemetry.endpoint: {e}"))?,
        ),
        None if !headers.is_empty() => {
            return Err("config.telemetry.headers go with an endpoint".into());
        }
        None => None,
    };
    let content = match fields.get("content") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("config.telemetry.content must be true or false".into()),
    };
    let secrets = match fields.get("secrets") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(given)) => given
            .iter()
            .enumerate()
            .map(|(i, secret)| match secret {
                Value::String(s) if s.chars().count() >= SHORTEST_SECRET => Ok(s.clone()),
                Value::String(s) => Err(format!(
                    "config.telemetry.secrets[{i}] has {} characters: a secret shorter than \
                     {SHORTEST_SECRET} would mask ordinary text too",
                    s.chars().count()
                )),
                _ => Err(format!("config.telemetry.secrets[{i}] must be a string")),
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err("config.telemetry.secrets must be an array of strings".into()),
    };
    if collector.is_none() && on_span.is_none() {
        return Err(
            "config.telemetry needs an endpoint (a collector) or onSpan (your own pipeline)".into(),
        );
    }
    Ok(Given {
        collector,
        content,
        secrets,
        on_span,
        service: text("serviceName")?.unwrap_or_else(|| "familiar".into()),
    })
}

/// Traces `session`'s runs as `given` asks; `namespace` keeps the outbox apart from
/// other agents', in `localStorage` when `persist`.
#[cfg(feature = "telemetry")]
pub fn install(session: &Session, given: Given, namespace: &str, persist: bool, model: &ModelSpec) {
    let resource = Resource {
        service_name: given.service,
        attributes: Vec::new(),
    };
    let storage: Rc<dyn Storage> = if persist {
        Rc::new(BrowserStorage)
    } else {
        Rc::new(VolatileStorage::new())
    };
    let exporter = given.collector.map(|collector| {
        Exporter::new(
            collector,
            resource,
            format!("{namespace}.otlp"),
            storage,
            Rc::new(Fetch),
            Rc::new(BrowserClock),
            Rc::new(super::js::crypto_random),
        )
    });
    let on_span = given.on_span;
    let sink = move |spans: &[Span]| {
        if let Some(exporter) = &exporter {
            exporter.push(spans);
        }
        if let Some(callback) = &on_span {
            for span in spans {
                if let Err(e) = callback.call1(&JsValue::NULL, &to_js(&otlp_span(span))) {
                    console_error(&format!("telemetry.onSpan threw: {}", message_of(&e)));
                }
            }
        }
    };
    let (provider, model) = match model {
        ModelSpec::Rules(_) => ("familiar.rules", "rules".to_owned()),
        ModelSpec::Proxy(settings) => ("openai", settings.model.clone()),
        ModelSpec::Local(_) => ("familiar.local", "local".to_owned()),
    };
    session.set_telemetry(Some(Telemetry {
        capture: Capture {
            content: given.content,
            secrets: given.secrets,
        },
        provider: provider.into(),
        model,
        sink: Rc::new(sink),
    }));
}

#[wasm_bindgen]
impl FamiliarAgent {
    /// Conversation `conversation`'s trace (the open one when not given) as an OTLP
    /// JSON export request, ready to save as a file or post to a collector; `null`
    /// when this agent is not traced (no `telemetry` in its config).
    #[wasm_bindgen(js_name = trace, unchecked_return_type = "{resourceSpans: {scopeSpans: {spans: OtlpSpan[]}[]}[]} | null")]
    pub fn trace(&self, conversation: Option<String>) -> JsValue {
        #[cfg(feature = "telemetry")]
        {
            let id = conversation.unwrap_or_else(|| self.session.conversation_id());
            if !self.session.traced() {
                return JsValue::NULL;
            }
            let spans = self.session.trace_of(&id);
            to_js(&export_request(&spans, &Resource::default()))
        }
        #[cfg(not(feature = "telemetry"))]
        {
            let _ = conversation;
            JsValue::NULL
        }
    }
}
