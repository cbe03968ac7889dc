//! The demo agent's parts: its system prompt, its rules model, its world and its
//! tools. The UI and the real-model check assemble the same agent from them.

use std::rc::Rc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use super::characters::{CHARACTERS, character};
use super::{BrowserClock, BrowserStorage, Fetch, LocalStorage, PageTitle};
use crate::agent::Agent;
use crate::app::{Config, Options, Play};
use crate::auth::{Account, AuthClient, SignedInStore};
use crate::delegate::Delegate;
use crate::ledger::Ledger;
use crate::llm::Llm;
use crate::openai::OpenAiClient;
use crate::rules::RulesModel;
use crate::settings::{Backend, ModelSource, Settings};
use crate::store::{LocalStore, Persist, PostgrestStore, Row, Rpc, Store, StoreError};
use crate::tool::{Approval, ToolRegistry};
use crate::tools::{CurrentTime, Forget, Recall, Remember};
use crate::world;

const RULES: &str = include_str!("../../public/rules/demo.json");
/// The `localStorage` key of the demo world.
pub const WORLD_KEY: &str = "familiar.world";
/// The demo agent's own user in the world (Dotty, the tavern keeper).
pub const AGENT_ID: i64 = 1;
/// The world user the person plays in the page's own world.
pub const LOCAL_PLAYER_ID: i64 = 3;
/// The `localStorage` key of the Supabase Auth session (it survives a reload).
pub const AUTH_KEY: &str = "familiar.auth";
/// The `localStorage` key of the world user the signed-in person plays.
pub const PLAYER_KEY: &str = "familiar.player";

/// Who acts in the world: whose memories the tools keep, whose ledger records the
/// applied actions, and who the player of character transactions is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The world user whose memories the memory tools keep.
    pub owner: i64,
    /// The world user the world's tools act as (data tools read as them).
    pub me: i64,
    /// The ledger's owner and the transactions' player: the signed-in user's id
    /// (their JWT's `sub`) online.
    pub user: String,
}

impl Identity {
    /// The page's own world: Dotty keeps the memories; the person plays user 3.
    pub fn local() -> Self {
        Self {
            owner: AGENT_ID,
            me: LOCAL_PLAYER_ID,
            user: LOCAL_PLAYER_ID.to_string(),
        }
    }
}

/// The world user a signed-in person plays, kept with whose sign-in it is.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Player {
    sub: String,
    id: i64,
}

/// Who acts in the world `backend` names: in a Supabase project, the signed-in user
/// (from the session kept in the page) and the world user they entered as; no one
/// (id 0, empty user) before signing in, so writes are refused plainly.
pub fn identity_for(backend: &Backend) -> Identity {
    match backend {
        Backend::Local => Identity::local(),
        Backend::Supabase { .. } => {
            let Some(sub) = signed_in_user() else {
                return Identity {
                    owner: 0,
                    me: 0,
                    user: String::new(),
                };
            };
            let player = super::load_json::<Player>(PLAYER_KEY)
                .filter(|p| p.sub == sub)
                .map_or(0, |p| p.id);
            Identity {
                owner: player,
                me: player,
                user: sub,
            }
        }
    }
}

/// The id of the user signed in to the Supabase project, if any.
pub fn signed_in_user() -> Option<String> {
    let text = LocalStorage::new(AUTH_KEY).load()?;
    let session: crate::auth::Session = serde_json::from_str(&text).ok()?;
    Some(session.user.id)
}

/// The sign-in to a Supabase project, with its session kept in `localStorage`.
pub fn account(url: &str, anon_key: &str) -> Account {
    let client = AuthClient::new(url, anon_key, Rc::new(Fetch), Rc::new(BrowserClock));
    Account::new(client, Box::new(LocalStorage::new(AUTH_KEY)))
}

/// A Supabase project's world as the signed-in user (anon before signing in).
pub fn signed_in_world(url: &str, anon_key: &str, account: Rc<Account>) -> SignedInStore {
    SignedInStore::new(supabase(url, anon_key), account)
}

/// Enters the world as the signed-in user (created on the first visit) and keeps
/// which world user that is; the world user's id.
pub async fn enter_world(store: &dyn Store, sub: &str) -> Result<i64, StoreError> {
    let mut args = Row::new();
    args.insert("username".into(), Value::from("player"));
    let call = Rpc {
        function: "enter_world".into(),
        args,
    };
    let user = store.rpc(&call).await?;
    let id = user
        .get("id")
        .and_then(Value::as_i64)
        .ok_or_else(|| StoreError::Invalid("entering the world returned no user".into()))?;
    super::save_json(
        PLAYER_KEY,
        &Player {
            sub: sub.to_owned(),
            id,
        },
    );
    Ok(id)
}

/// The demo agent's instructions to its model.
pub const SYSTEM_PROMPT: &str = "You are Familiar, an assistant that lives in the user's \
    browser tab. Use the tools to read the page and the clock, and to remember, recall and \
    forget facts; answer briefly, in markdown when it helps.";

/// Prompts the empty conversation offers, for the assistant or a character.
pub fn sample_prompts(character: Option<&str>) -> &'static [&'static str] {
    match character {
        Some("dotty") => &[
            "I'll have a whiskey",
            "Here you go",
            "Never mind",
            "I'm hungry for stew",
        ],
        Some("brannoc") => &[
            "Any work for me?",
            "Deal, I'll find it",
            "Here is your hammer!",
        ],
        // A character loaded at run time: its author knows what it answers to.
        Some(_) => &[],
        None => &[
            "What time is it?",
            "What is this page called?",
            "Remember that the ale is cold",
            "What do you remember?",
        ],
    }
}

/// The no-key model of the demo. A broken rules file still yields a model, one that
/// says what is wrong with the file.
pub fn rules_model() -> RulesModel {
    RulesModel::from_json(RULES).unwrap_or_else(|error| RulesModel {
        rules: Vec::new(),
        fallback: error.to_string(),
    })
}

/// The demo world: the migrations' tables in the page, seeded on first use and kept in
/// `localStorage` across reloads.
pub fn world() -> Result<LocalStore, StoreError> {
    local_world(Some(WORLD_KEY))
}

/// The world's tables in the page, seeded on first use, kept under `key` in
/// `localStorage` (or in memory only, with no key).
pub fn local_world(key: Option<&str>) -> Result<LocalStore, StoreError> {
    let store = LocalStore::new(world::schemas()?).with_clock(Rc::new(BrowserClock));
    let store = world::rules::install(store);
    let store = match key {
        Some(key) => store.with_persistence(Box::new(LocalStorage::new(key)))?,
        None => store,
    };
    store.seed(world::SEED)?;
    world::rules::play_as(&store, LOCAL_PLAYER_ID)?;
    Ok(store)
}

/// The demo's tools: the clock, the page, memory in the world (`forget` asks a
/// person first), and the world's own tools (its actions run through its functions).
/// If the saved world cannot be read, the world's tools are left out (and the saved
/// world untouched) rather than overwriting it.
pub fn tools(world: Option<Rc<dyn Store>>, who: &Identity) -> ToolRegistry {
    let mut tools = ToolRegistry::new();
    tools
        .register(CurrentTime::new(Rc::new(BrowserClock)))
        .register(PageTitle);
    if let Some(world) = world {
        register_memory(&mut tools, &world, who);
        world::register_tools(&mut tools, world, who.me);
    }
    tools
}

/// Adds `remember` (which asks first once the run has read a page or a tool's
/// result: such text must not plant memories unseen), `recall` and `forget` (which
/// asks first) over `world` for `who`, with the ledger that applies each action once.
pub fn register_memory(tools: &mut ToolRegistry, world: &Rc<dyn Store>, who: &Identity) {
    tools.with_ledger(Ledger::new(Rc::clone(world), who.user.clone()));
    tools
        .register(Remember::new(
            Rc::clone(world),
            Rc::new(BrowserClock),
            who.owner,
        ))
        .register(Recall::new(Rc::clone(world), who.owner))
        .register(Forget::new(Rc::clone(world), who.owner))
        .set_approval("remember", Approval::AskIfUntrusted)
        .set_approval("forget", Approval::Ask);
}

/// The world the settings name: the page's own, or a Supabase project through its
/// REST endpoint as the signed-in user (the anon key before signing in). `None`, with
/// the reason in the console, if the page's saved world cannot be read.
pub fn world_for(backend: &Backend) -> Option<Rc<dyn Store>> {
    match backend {
        Backend::Local => match world() {
            Ok(world) => Some(Rc::new(world)),
            Err(error) => {
                web_sys::console::error_1(
                    &format!("familiar: the demo world is unavailable: {error}").into(),
                );
                None
            }
        },
        Backend::Supabase { url, anon_key } => {
            let account = Rc::new(account(url, anon_key));
            Some(Rc::new(signed_in_world(url, anon_key, account)))
        }
    }
}

/// A Supabase project's REST endpoint (or any PostgREST server), with its anon key.
pub fn supabase(url: &str, anon_key: &str) -> PostgrestStore {
    let url = url.trim().trim_end_matches('/');
    let rest = if url.ends_with("/rest/v1") {
        url.to_owned()
    } else {
        format!("{url}/rest/v1")
    };
    PostgrestStore::new(
        &rest,
        anon_key.trim(),
        Rc::new(Fetch),
        Rc::new(BrowserClock),
        Box::new(js_sys::Math::random),
    )
}

/// The model the settings name: the rules model, or the proxy (falling back to the
/// rules model, which then says what is wrong, if the proxy settings are invalid).
pub fn model_for(source: &ModelSource) -> Rc<dyn Llm> {
    match source {
        ModelSource::Rules => Rc::new(rules_model()),
        ModelSource::Proxy(settings) => {
            let client = OpenAiClient::new(
                settings.clone(),
                Rc::new(Fetch),
                Rc::new(BrowserClock),
                Box::new(js_sys::Math::random),
            );
            match client {
                Ok(client) => Rc::new(client),
                Err(error) => Rc::new(RulesModel {
                    rules: Vec::new(),
                    fallback: format!("The model settings cannot work: {error}."),
                }),
            }
        }
    }
}

/// The demo's agents behind one router: Familiar answers by default; `@scribe` keeps
/// notes, `@clock` tells the time and `@page` reads the page; `/time`, `/title`,
/// `/recall` and `/note` reach them directly.
pub fn delegate(llm: Rc<dyn Llm>, world: Option<Rc<dyn Store>>, who: &Identity) -> Delegate {
    let agent = |name: &str, description: &str, system: &str, tools: ToolRegistry| {
        Rc::new(Agent::new(
            name,
            description,
            system,
            Rc::clone(&llm),
            Rc::new(tools),
        ))
    };
    let mut clock = ToolRegistry::new();
    clock.register(CurrentTime::new(Rc::new(BrowserClock)));
    let mut page = ToolRegistry::new();
    page.register(PageTitle);
    let mut scribe = ToolRegistry::new();
    if let Some(world) = &world {
        register_memory(&mut scribe, world, who);
    }
    let familiar = agent(
        "familiar",
        "Answers anything it can",
        SYSTEM_PROMPT,
        tools(world, who),
    );
    Delegate::new(familiar)
        .with_agent(agent(
            "scribe",
            "Keeps, recalls and forgets notes",
            "You keep the user's notes.",
            scribe,
        ))
        .with_agent(agent(
            "clock",
            "Tells the time",
            "You tell the time.",
            clock,
        ))
        .with_agent(agent(
            "page",
            "Reads this page",
            "You read the page the user is on.",
            page,
        ))
        .with_command("time", "clock")
        .with_command("title", "page")
        .with_command("recall", "scribe")
        .with_command("note", "scribe")
}

/// The player's id in character transactions.
pub const PLAYER: &str = "player";

/// The storage namespace of the demo's conversations.
pub const NAMESPACE: &str = "familiar";

/// The demo session's configuration, from its settings: the agents behind the
/// router, the character played, how runs are shaped, and the page's storage; with
/// the world they act on, for the inspector.
pub fn session(settings: &Settings) -> (Config, Delegate, Option<Rc<dyn Store>>) {
    let world = world_for(&settings.backend);
    let who = identity_for(&settings.backend);
    let llm = model_for(&settings.model);
    let proxy = matches!(settings.model, ModelSource::Proxy(_)).then(|| Rc::clone(&llm));
    let play = settings
        .character
        .as_deref()
        .and_then(character)
        .zip(world.clone())
        .map(|(character, world)| Play {
            character,
            world,
            llm: proxy,
            player: match settings.backend {
                Backend::Local => PLAYER.into(),
                Backend::Supabase { .. } => who.user.clone(),
            },
        });
    let options = Options {
        max_iterations: settings.max_iterations,
        reflection: u32::from(settings.reflection),
        ..Options::default()
    };
    let config = Config {
        namespace: NAMESPACE.into(),
        play,
        options,
        clock: Rc::new(BrowserClock),
        storage: Rc::new(BrowserStorage),
        random: Rc::new(js_sys::Math::random),
    };
    (config, delegate(llm, world.clone(), &who), world)
}
