//! A session from `createAgent`'s checked configuration: its model, store, built-in
//! tools, character (fetched when given by URL) and storage, all browser adapters.

use std::rc::Rc;

use crate::app::settings::Backend;
use crate::app::spec::{AgentSpec, Builtin, CharacterSpec, ModelSpec};
use crate::app::{
    self, Config, Participant, Play, Session, Storage, VolatileStorage, register_memory,
};
use crate::compose::agent::Agent;
use crate::compose::delegate::Delegate;
use crate::llm::Llm;
use crate::llm::openai::OpenAiClient;
use crate::store::{Persist, Store};
use crate::tool::CurrentTime;
use crate::tool::ToolRegistry;
use crate::web::{BrowserClock, BrowserStorage, Fetch, LocalStorage, PageTitle, character_file};
use crate::workflow::Character;
use crate::{web, world};

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
                    register_memory(
                        &mut tools,
                        world,
                        &Participant::local(),
                        Rc::new(BrowserClock),
                    );
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
        Rc::new(VolatileStorage::new())
    };
    let config = Config {
        namespace: spec.namespace.clone(),
        play,
        options: spec.options.clone(),
        clock: Rc::new(BrowserClock),
        storage,
        random: Rc::new(super::js::crypto_random),
    };
    Ok(Session::new(config, Delegate::new(Rc::new(agent))))
}

fn world(spec: &AgentSpec) -> Result<Rc<dyn Store>, String> {
    match &spec.store {
        Backend::Local => {
            let key = format!("{}.world", spec.namespace);
            let persist = spec
                .persist
                .then(|| Box::new(LocalStorage::new(&key)) as Box<dyn Persist>);
            world::local(Rc::new(BrowserClock), persist)
                .map(|w| Rc::new(w) as Rc<dyn Store>)
                .map_err(|e| format!("the agent's local store cannot be opened: {e}"))
        }
        Backend::Supabase { url, anon_key } => Ok(Rc::new(web::supabase(url, anon_key))),
    }
}

async fn load_character(source: &CharacterSpec) -> Result<Character, String> {
    match source {
        CharacterSpec::File(file) => app::load_character(&file.to_string(), "config.character"),
        CharacterSpec::Url(url) => {
            app::load_character(&character_file::fetch_text(url).await?, url)
        }
    }
}
