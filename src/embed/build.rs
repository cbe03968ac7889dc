//! A session from `createAgent`'s checked configuration: its model, store, built-in
//! tools, character (fetched when given by URL) and storage, all browser adapters.

use std::rc::Rc;

use futures::StreamExt;

use crate::agent::Agent;
use crate::app::spec::{AgentSpec, Builtin, CharacterSpec, ModelSpec};
use crate::app::{Config, MemoryStorage, Play, Session, Storage};
use crate::delegate::Delegate;
use crate::http::{Http, HttpRequest};
use crate::llm::Llm;
use crate::openai::OpenAiClient;
use crate::settings::Backend;
use crate::store::Store;
use crate::tool::ToolRegistry;
use crate::tools::CurrentTime;
use crate::web::{BrowserClock, BrowserStorage, Fetch, PageTitle, demo};
use crate::workflow::Character;

/// The largest character file read from a URL.
const MAX_CHARACTER_BYTES: usize = 1 << 20;

/// Builds the session; every failure is one message saying what to fix.
pub async fn session(spec: AgentSpec) -> Result<Session, String> {
    let character = match &spec.character {
        Some(source) => Some(load_character(source).await?),
        None => None,
    };
    let needs_world = character.is_some() || spec.builtins.contains(&Builtin::Memory);
    let world = if needs_world {
        Some(world(&spec)?)
    } else {
        None
    };
    let llm: Rc<dyn Llm> = match &spec.model {
        ModelSpec::Rules(rules) => Rc::new(rules.clone()),
        ModelSpec::Proxy(settings) => Rc::new(
            OpenAiClient::new(
                settings.clone(),
                Rc::new(Fetch),
                Rc::new(BrowserClock),
                Box::new(js_sys::Math::random),
            )
            .map_err(|e| format!("config.model: {e}"))?,
        ),
    };
    let mut tools = ToolRegistry::new();
    for builtin in &spec.builtins {
        match builtin {
            Builtin::Clock => _ = tools.register(CurrentTime::new(Rc::new(BrowserClock))),
            Builtin::PageTitle => _ = tools.register(PageTitle),
            Builtin::Memory => {
                if let Some(world) = &world {
                    demo::register_memory(&mut tools, world, &demo::Identity::local());
                }
            }
        }
    }
    let agent = Agent::new(
        &spec.name,
        "",
        &spec.instructions,
        Rc::clone(&llm),
        Rc::new(tools),
    );
    let play = match (character, world) {
        (Some(character), Some(world)) => Some(Play {
            character: Rc::new(character),
            world,
            llm: matches!(spec.model, ModelSpec::Proxy(_)).then_some(llm),
            player: "player".into(),
        }),
        _ => None,
    };
    let storage: Rc<dyn Storage> = if spec.persist {
        Rc::new(BrowserStorage)
    } else {
        Rc::new(MemoryStorage::new())
    };
    let config = Config {
        namespace: spec.namespace.clone(),
        play,
        options: spec.options.clone(),
        clock: Rc::new(BrowserClock),
        storage,
        random: Rc::new(js_sys::Math::random),
    };
    Ok(Session::new(config, Delegate::new(Rc::new(agent))))
}

fn world(spec: &AgentSpec) -> Result<Rc<dyn Store>, String> {
    match &spec.store {
        Backend::Local => {
            let key = format!("{}.world", spec.namespace);
            let key = spec.persist.then_some(key.as_str());
            demo::local_world(key)
                .map(|w| Rc::new(w) as Rc<dyn Store>)
                .map_err(|e| format!("the agent's local store cannot be opened: {e}"))
        }
        Backend::Supabase { url, anon_key } => Ok(Rc::new(demo::supabase(url, anon_key))),
    }
}

async fn load_character(source: &CharacterSpec) -> Result<Character, String> {
    let (text, from) = match source {
        CharacterSpec::File(file) => (file.to_string(), "config.character".to_owned()),
        CharacterSpec::Url(url) => (fetch_text(url).await?, url.clone()),
    };
    Character::from_json(&text).map_err(|problems| {
        let lines: Vec<String> = problems
            .iter()
            .map(|p| format!("  {}: {}", p.path, p.message))
            .collect();
        format!(
            "the character file {from} has problems:\n{}",
            lines.join("\n")
        )
    })
}

async fn fetch_text(url: &str) -> Result<String, String> {
    let failed = |why: String| format!("the character file {url} cannot be read: {why}");
    let request = HttpRequest {
        method: "GET",
        url: resolve(url),
        headers: Vec::new(),
        body: None,
    };
    let mut response = Fetch
        .send(request)
        .await
        .map_err(|e| failed(e.to_string()))?;
    if response.status != 200 {
        return Err(failed(format!("the server answered {}", response.status)));
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = response.body.next().await {
        bytes.extend(chunk.map_err(|e| failed(e.to_string()))?);
        if bytes.len() > MAX_CHARACTER_BYTES {
            return Err(failed(format!(
                "it is larger than {MAX_CHARACTER_BYTES} bytes"
            )));
        }
    }
    String::from_utf8(bytes).map_err(|_| failed("it is not UTF-8 text".into()))
}

/// A URL relative to the page, made absolute.
fn resolve(url: &str) -> String {
    let base = web_sys::window().and_then(|w| w.location().href().ok());
    match base.and_then(|base| web_sys::Url::new_with_base(url, &base).ok()) {
        Some(resolved) => resolved.href(),
        None => url.to_owned(),
    }
}
