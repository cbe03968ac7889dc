//! Model servers on this machine, as Settings finds them: the places it looks (Ollama's
//! and LM Studio's usual ports on loopback, and a loopback address the person typed),
//! what each place's answer says in words, and which models are known to call tools
//! well. A server here needs no key, and none is sent.
//!
//! Pure: `web::probe` asks the browser and returns a [`Reached`]; the settings view
//! shows the [`Finding`]s. Only loopback addresses are looked at: a page may fetch
//! them anyway, and nothing found leaves the page unless the person picks it.

use crate::base::http::is_loopback;

/// Who is usually found at a place: it decides how to tell the person to let this
/// page in, or to load a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Ollama,
    LmStudio,
    /// The address typed in the proxy URL field: any OpenAI-compatible server.
    Typed,
}

/// A place Settings looks for a model server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub kind: Kind,
    /// Its OpenAI-compatible base address, e.g. `http://127.0.0.1:11434/v1`: what the
    /// proxy URL field takes.
    pub base: String,
}

/// Ollama's OpenAI-compatible address, on its usual port.
pub const OLLAMA: &str = "http://127.0.0.1:11434/v1";
/// LM Studio's server, on its usual port.
pub const LM_STUDIO: &str = "http://127.0.0.1:1234/v1";

/// Where to look: Ollama's and LM Studio's usual ports, then `typed` (the proxy URL
/// field) when it is on this machine and not one of those.
pub fn places(typed: &str) -> Vec<Place> {
    let mut places = vec![
        Place {
            kind: Kind::Ollama,
            base: OLLAMA.into(),
        },
        Place {
            kind: Kind::LmStudio,
            base: LM_STUDIO.into(),
        },
    ];
    if let Some(base) = typed_base(typed)
        && !places.iter().any(|p| same_place(&p.base, &base))
    {
        places.push(Place {
            kind: Kind::Typed,
            base,
        });
    }
    places
}

/// The base address of what the person typed, if it is an `http(s)://` address on
/// this machine: its `/chat/completions` or `/models` end taken off, and `/v1` added
/// to a bare origin (where Ollama, LM Studio and llama.cpp all serve their API).
fn typed_base(typed: &str) -> Option<String> {
    let typed = typed.trim();
    if !crate::llm::openai::is_web_url(typed) || !is_loopback(typed) {
        return None;
    }
    let base = typed.trim_end_matches('/');
    let base = base.strip_suffix("/chat/completions").unwrap_or(base);
    let base = base.strip_suffix("/models").unwrap_or(base);
    let after_scheme = base.split_once("://").map_or(base, |(_, rest)| rest);
    Some(if after_scheme.contains('/') {
        base.to_owned()
    } else {
        format!("{base}/v1")
    })
}

/// Whether two addresses are one place (`localhost` is `127.0.0.1`; case aside).
fn same_place(a: &str, b: &str) -> bool {
    let plain = |s: &str| {
        s.to_ascii_lowercase()
            .replace("://localhost", "://127.0.0.1")
    };
    plain(a) == plain(b)
}

impl Place {
    /// The address asked: the server's list of models.
    pub fn models_url(&self) -> String {
        format!("{}/models", self.base)
    }

    /// The place as a sentence begins with it.
    fn who(&self) -> String {
        match self.kind {
            Kind::Ollama => format!("Ollama ({})", self.base),
            Kind::LmStudio => format!("LM Studio ({})", self.base),
            Kind::Typed => format!("The server at {}", self.base),
        }
    }
}

/// What the browser got from a place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reached {
    /// The server answered this page: its status and body.
    Answered { status: u16, body: String },
    /// Something answers there, but not to this page: the page's own request failed
    /// where a `no-cors` one (whose answer a page cannot read) got through. A server
    /// that refuses this page's origin (CORS).
    Refused,
    /// Nothing answered, in time or at all: nothing listens there, or the browser kept
    /// the page from it.
    Nothing,
}

/// A model a server serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Model {
    /// Its name, as the proxy's model field takes it.
    pub id: String,
    /// Known to call tools well (see [`calls_tools_well`]).
    pub tools: bool,
}

/// What a place holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// A server with these models, those known to call tools well first.
    Models(Vec<Model>),
    /// A server that serves no model yet.
    NoModels,
    /// A server that refuses this page's origin.
    RefusesOrigin,
    /// Nothing listens there.
    Nothing,
    /// Something answered, with this status or an unreadable list: not an
    /// OpenAI-compatible API at this address.
    NotAModelServer(u16),
}

/// What `reached` says of the place.
pub fn finding(reached: Reached) -> Finding {
    match reached {
        Reached::Answered { status, body } if (200..300).contains(&status) => {
            let Some(ids) = crate::base::json::value_from_bytes(body.as_bytes())
                .ok()
                .and_then(|answer| crate::llm::openai::model_ids(&answer))
            else {
                return Finding::NotAModelServer(status);
            };
            if ids.is_empty() {
                return Finding::NoModels;
            }
            let mut models: Vec<Model> = ids
                .into_iter()
                .map(|id| Model {
                    tools: calls_tools_well(&id),
                    id,
                })
                .collect();
            crate::base::sort::sort_by_key(&mut models, |m| !m.tools);
            Finding::Models(models)
        }
        Reached::Answered { status, .. } => Finding::NotAModelServer(status),
        Reached::Refused => Finding::RefusesOrigin,
        Reached::Nothing => Finding::Nothing,
    }
}

/// What `finding` tells the person about `place`, for a page at `origin`: what
/// answered, or what to do about it.
pub fn said(place: &Place, finding: &Finding, origin: &str) -> String {
    let who = place.who();
    match finding {
        Finding::Models(models) => match models.len() {
            1 => format!("{who} answers with 1 model: pick it below."),
            n => format!(
                "{who} answers with {n} models: pick one below (★: known to call tools well)."
            ),
        },
        Finding::NoModels => format!(
            "{who} answers but serves no model yet: {}, then press Find again.",
            match place.kind {
                Kind::Ollama => "pull one, for example “ollama pull qwen2.5:3b”",
                Kind::LmStudio => "load one in LM Studio's Developer tab",
                Kind::Typed => "load one in it",
            }
        ),
        Finding::RefusesOrigin => format!(
            "{who} runs but refuses this page, {origin} (CORS): {}",
            allow_origin(place.kind, origin)
        ),
        Finding::Nothing => format!("{who}: nothing answered."),
        Finding::NotAModelServer(status) => format!(
            "{who} answered (HTTP {status}), but not with a list of models: check the \
             address, which ends in /v1 for Ollama, LM Studio and llama.cpp."
        ),
    }
}

/// How to let a page at `origin` in, as each server is told.
fn allow_origin(kind: Kind, origin: &str) -> String {
    let ollama = format!(
        "quit Ollama, then start it with “OLLAMA_ORIGINS={origin} ollama serve” (on macOS, \
         “launchctl setenv OLLAMA_ORIGINS \"{origin}\"” and restart the app)"
    );
    let lm_studio = "in LM Studio's Developer tab, turn on “Enable CORS” in the server's settings";
    match kind {
        Kind::Ollama => format!("{ollama}."),
        Kind::LmStudio => format!("{lm_studio}."),
        Kind::Typed => {
            format!("let it allow requests from {origin}: for Ollama, {ollama}; {lm_studio}.")
        }
    }
}

/// What to add when nothing answered and the page is not on this machine itself: the
/// browser may ask first, or refuse plain http from an https page.
pub fn from_afar(origin: &str) -> Option<&'static str> {
    (!is_loopback(origin)).then_some(
        "This page comes from another machine: the browser may ask whether it may reach \
         apps on this device (allow it, then press Find again). Chrome, Edge and Firefox \
         let an https:// page reach http://127.0.0.1; Safari does not.",
    )
}

/// Model names known to call tools well, by a piece of the name (lower case), as the
/// extension's options mark them (`extension/providers.js`): the families with tool
/// calling trained in, as Ollama, LM Studio and the providers name them.
const CALLS_TOOLS: [&str; 36] = [
    "gpt-4o",
    "gpt-4.1",
    "gpt-5",
    "gpt-oss",
    "o3-mini",
    "o4-mini",
    "claude-3-5",
    "claude-3-7",
    "claude-sonnet",
    "claude-opus",
    "claude-haiku-4",
    "gemini-1.5",
    "gemini-2",
    "gemini-3",
    "llama3.1",
    "llama3.2",
    "llama3.3",
    "llama-3.1",
    "llama-3.2",
    "llama-3.3",
    "llama-4",
    "llama4",
    "qwen2.5",
    "qwen-2.5",
    "qwen3",
    "qwen-3",
    "mistral-large",
    "mistral-small",
    "mistral-medium",
    "command-r",
    "hermes",
    "kimi-k2",
    "deepseek-v3",
    "granite3",
    "functionary",
    "smollm2",
];

/// Whether the model named `id` is known to call tools well.
pub fn calls_tools_well(id: &str) -> bool {
    let id = id.to_ascii_lowercase();
    CALLS_TOOLS.iter().any(|piece| id.contains(piece))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(kind: Kind, base: &str) -> Place {
        Place {
            kind,
            base: base.into(),
        }
    }

    #[test]
    fn the_usual_ports_are_looked_at_and_a_typed_address_only_on_this_machine() {
        let bases = |typed| {
            places(typed)
                .into_iter()
                .map(|p| p.base)
                .collect::<Vec<_>>()
        };
        assert_eq!(bases(""), [OLLAMA, LM_STUDIO]);
        assert_eq!(
            bases("http://127.0.0.1:8081/v1/chat/completions"),
            [OLLAMA, LM_STUDIO, "http://127.0.0.1:8081/v1"]
        );
        assert_eq!(
            bases("http://localhost:8081"),
            [OLLAMA, LM_STUDIO, "http://localhost:8081/v1"],
            "a bare origin is asked at /v1"
        );
        // Another machine is never probed, nor a usual port twice.
        assert_eq!(bases("https://llm.example.com/v1"), [OLLAMA, LM_STUDIO]);
        assert_eq!(
            bases("http://127.attacker.example:11434/v1"),
            [OLLAMA, LM_STUDIO]
        );
        assert_eq!(bases("http://localhost:11434/v1/"), [OLLAMA, LM_STUDIO]);
        assert_eq!(places("http://[::1]:9000/v1")[2].kind, Kind::Typed);
    }

    #[test]
    fn a_servers_models_are_listed_those_known_to_call_tools_first() {
        let body = r#"{"object":"list","data":[{"id":"phi3:mini"},{"id":"qwen2.5:3b"},{"id":"llama3.2:latest"}]}"#;
        let found = finding(Reached::Answered {
            status: 200,
            body: body.into(),
        });
        let model = |id: &str, tools| Model {
            id: id.into(),
            tools,
        };
        assert_eq!(
            found,
            Finding::Models(vec![
                model("qwen2.5:3b", true),
                model("llama3.2:latest", true),
                model("phi3:mini", false)
            ])
        );
        assert_eq!(
            said(
                &place(Kind::Ollama, OLLAMA),
                &found,
                "http://127.0.0.1:8080"
            ),
            "Ollama (http://127.0.0.1:11434/v1) answers with 3 models: pick one below (★: known to call tools well)."
        );
    }

    #[test]
    fn an_empty_list_a_refused_origin_and_silence_each_say_what_to_do() {
        let origin = "https://demo.example";
        let empty = finding(Reached::Answered {
            status: 200,
            body: r#"{"data":[]}"#.into(),
        });
        assert_eq!(empty, Finding::NoModels);
        assert_eq!(
            said(&place(Kind::Ollama, OLLAMA), &empty, origin),
            "Ollama (http://127.0.0.1:11434/v1) answers but serves no model yet: pull one, for \
             example “ollama pull qwen2.5:3b”, then press Find again."
        );
        let refused = finding(Reached::Refused);
        assert_eq!(
            said(&place(Kind::Ollama, OLLAMA), &refused, origin),
            "Ollama (http://127.0.0.1:11434/v1) runs but refuses this page, https://demo.example \
             (CORS): quit Ollama, then start it with “OLLAMA_ORIGINS=https://demo.example ollama \
             serve” (on macOS, “launchctl setenv OLLAMA_ORIGINS \"https://demo.example\"” and \
             restart the app)."
        );
        assert!(
            said(&place(Kind::LmStudio, LM_STUDIO), &refused, origin)
                .ends_with("refuses this page, https://demo.example (CORS): in LM Studio's Developer tab, turn on “Enable CORS” in the server's settings.")
        );
        let typed = said(
            &place(Kind::Typed, "http://127.0.0.1:9/v1"),
            &refused,
            origin,
        );
        assert!(
            typed.contains("OLLAMA_ORIGINS=https://demo.example") && typed.contains("Enable CORS"),
            "{typed}"
        );
        assert_eq!(
            said(
                &place(Kind::LmStudio, LM_STUDIO),
                &finding(Reached::Nothing),
                origin
            ),
            "LM Studio (http://127.0.0.1:1234/v1): nothing answered."
        );
    }

    #[test]
    fn an_answer_that_is_no_list_of_models_is_not_a_model_server() {
        for (status, body) in [
            (200, "Ollama is running"),
            (404, "{}"),
            (200, r#"{"data":"x"}"#),
        ] {
            let found = finding(Reached::Answered {
                status,
                body: body.into(),
            });
            assert_eq!(found, Finding::NotAModelServer(status), "{body}");
        }
        assert!(
            said(&place(Kind::Typed, "http://127.0.0.1:9/v1"), &Finding::NotAModelServer(404), "")
                .starts_with("The server at http://127.0.0.1:9/v1 answered (HTTP 404), but not with a list of models")
        );
    }

    #[test]
    fn a_page_from_another_machine_is_told_the_browser_may_ask_first() {
        assert_eq!(from_afar("http://127.0.0.1:8080"), None);
        assert_eq!(from_afar("http://localhost:8080"), None);
        assert!(from_afar("https://demo.example").is_some_and(|s| s.contains("allow it")));
    }

    #[test]
    fn tool_calling_families_are_known_by_their_names() {
        for id in [
            "qwen2.5:7b",
            "llama3.1:8b",
            "Llama-3.2-3B-Instruct",
            "gpt-oss:20b",
            "smollm2",
            "mistral-small3.1",
        ] {
            assert!(calls_tools_well(id), "{id}");
        }
        for id in ["phi3:mini", "gemma2:2b", "llama2", "codellama"] {
            assert!(!calls_tools_well(id), "{id}");
        }
    }
}
