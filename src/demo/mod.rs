//! The demo's composition root: its agents (system prompt, rules model, tools), its
//! world and sign-in, and the session the UI drives, all built from browser adapters.
//! The real-model check assembles the same agent from these parts.

pub mod characters;
pub mod guild;
#[cfg(feature = "telemetry")]
mod telemetry;

#[cfg(feature = "telemetry")]
pub use telemetry::telemetry;

use crate::base::json::Read;
use std::rc::Rc;

use futures::future::LocalBoxFuture;
use serde::Serialize;
use serde_json::Value;

use crate::app::settings::{Backend, ModelSource, Settings};
use crate::app::{Config, Environment, Options, Participant, Perceived, Play, register_memory};
use crate::compose::agent::Agent;
use crate::compose::delegate::Delegate;
use crate::llm::Llm;
use crate::llm::openai::OpenAiClient;
use crate::llm::rules::RulesModel;
use crate::run::Observation;
use crate::store::auth::{Account, AuthClient, AuthError, SignedInStore};
use crate::store::{Delete, Filtered, LocalStore, Persist, Row, Rpc, Store, StoreError};
use crate::tool::{CurrentTime, ToolRegistry};
use crate::web::{
    BrowserClock, BrowserStorage, Fetch, LocalStorage, PageMemory, PageTitle, in_host_page,
    load_json, remove, save_json, supabase,
};
use crate::world;
use crate::world::triggers::{Claim, WorldAgent};
pub use characters::{CHARACTERS, character};

const RULES: &str = include_str!("../../public/rules/demo.json");
/// The `localStorage` key of the demo world.
pub const WORLD_KEY: &str = "familiar.world";
/// The `localStorage` key of the Supabase Auth session (it survives a reload).
pub const AUTH_KEY: &str = "familiar.auth";
/// The `localStorage` key of the world user the signed-in person plays.
pub const PLAYER_KEY: &str = "familiar.player";

/// The world user a signed-in person plays, kept with whose sign-in it is, and the
/// agents they own (their copies of the starters).
#[derive(Debug, Clone, Serialize, Read)]
struct Player {
    sub: String,
    id: i64,
    #[serde(default)]
    agents: Vec<Claim>,
}

/// The world's agents the person in `backend` plays: the seed's own in the page's
/// world; in a Supabase project, their copies of them (none before signing in).
pub fn roster(backend: &Backend) -> Vec<WorldAgent> {
    match backend {
        Backend::Local => world::triggers::agents(),
        Backend::Supabase { url, anon_key } => {
            let Some(sub) = signed_in_user(url, anon_key) else {
                return Vec::new();
            };
            let claims = load_json::<Player>(PLAYER_KEY)
                .filter(|p| p.sub == sub)
                .map(|p| p.agents)
                .unwrap_or_default();
            world::triggers::claimed(&claims)
        }
    }
}

/// Who acts in the world `backend` names: in a Supabase project, the user signed in
/// to that project and the world user they entered as; no one (id 0, empty user)
/// before signing in, so writes are refused plainly.
pub fn identity_for(backend: &Backend) -> Participant {
    match backend {
        Backend::Local => Participant::local(),
        Backend::Supabase { url, anon_key } => {
            let Some(sub) = signed_in_user(url, anon_key) else {
                return Participant {
                    owner: 0,
                    me: 0,
                    user: String::new(),
                };
            };
            let player = load_json::<Player>(PLAYER_KEY)
                .filter(|p| p.sub == sub)
                .map_or(0, |p| p.id);
            Participant {
                owner: player,
                me: player,
                user: sub,
            }
        }
    }
}

/// The id of the user signed in to the Supabase project at `url`, if any (a login of
/// another project is discarded, not read).
pub fn signed_in_user(url: &str, anon_key: &str) -> Option<String> {
    Some(account(url, anon_key).login()?.user.id)
}

/// The sign-in to a Supabase project. Its login is kept in `localStorage` on the
/// demo's own page, so it survives a reload; a widget in someone else's page keeps it
/// only in the page's memory (any script of that page can read its `localStorage`,
/// and a refresh token there would outlive the visit), as the proxy token is kept.
pub fn account(url: &str, anon_key: &str) -> Account {
    let client = AuthClient::new(url, anon_key, Rc::new(Fetch), Rc::new(BrowserClock));
    Account::new(client, login_storage(in_host_page()))
}

/// Where the login is kept: see [`account`]. In a host page, a login an earlier
/// version left in `localStorage` is removed.
fn login_storage(embedded: bool) -> Box<dyn Persist> {
    if embedded {
        remove(AUTH_KEY);
        Box::new(PageMemory::new(AUTH_KEY))
    } else {
        Box::new(LocalStorage::new(AUTH_KEY))
    }
}

/// Leaves the backend the settings named for the one they name now. A change of
/// backend (another URL or key, or the page's own world) signs out of the old project
/// here at once, so no login of it is left to follow the settings elsewhere; the
/// future returned tells the old project's server (its own URL, where its tokens
/// belong) to end the session. `None` when there was nothing to sign out of.
pub fn change_backend(old: &Backend, new: &Backend) -> Option<LocalBoxFuture<'static, ()>> {
    let Backend::Supabase { url, anon_key } = old else {
        return None;
    };
    if old == new {
        return None;
    }
    let login = account(url, anon_key).forget()?;
    let client = AuthClient::new(url, anon_key, Rc::new(Fetch), Rc::new(BrowserClock));
    Some(Box::pin(async move {
        match client.sign_out(&login).await {
            Ok(()) | Err(AuthError::SessionEnded(_)) => {}
            Err(error) => web_sys::console::warn_1(
                &format!("familiar: signed out here; the old project was not told: {error}").into(),
            ),
        }
    }))
}

/// A Supabase project's world as the signed-in user (anon before signing in).
pub fn signed_in_world(url: &str, anon_key: &str, account: Rc<Account>) -> SignedInStore {
    SignedInStore::new(supabase(url, anon_key), account)
}

/// Enters the world as the signed-in user (created on the first visit), claims their
/// own agents (copies of the starters, made on the first visit) and keeps which world
/// user and agents those are; the world user's id.
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
    let claim = Rpc {
        function: "claim_agents".into(),
        args: Row::new(),
    };
    let agents = serde_json::from_value(store.rpc(&claim).await?)
        .map_err(|e| StoreError::Invalid(format!("claiming agents returned no list ({e})")))?;
    save_json(
        PLAYER_KEY,
        &Player {
            sub: sub.to_owned(),
            id,
            agents,
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
/// `localStorage` across reloads. The familiar of a fresh profile remembers nothing it
/// was not told: the seed's memory of the world's agent (a fixture of the world's own
/// scenarios) is let go as the world is first made, so the README's remember, forget,
/// reload, “What do you remember?” ends with nothing remembered.
pub fn world() -> Result<LocalStore, StoreError> {
    let saved = LocalStorage::new(WORLD_KEY);
    let fresh = saved.load().is_none();
    let world = world::local(Rc::new(BrowserClock), Some(Box::new(saved)))?;
    if fresh {
        let seeded = Delete {
            table: "memories".into(),
            filters: Vec::new(),
            returning: false,
        }
        .eq("user_id", world::AGENT_ID);
        world.run_delete(&seeded)?;
    }
    Ok(world)
}

/// The demo's tools: the clock, the page, memory in the world (`forget` asks a
/// person first), and the world's own tools (its actions run through its functions).
/// If the saved world cannot be read, the world's tools are left out (and the saved
/// world untouched) rather than overwriting it.
pub fn tools(world: Option<Rc<dyn Store>>, who: &Participant) -> ToolRegistry {
    let mut tools = ToolRegistry::new();
    tools
        .register(CurrentTime::new(Rc::new(BrowserClock)))
        .register(PageTitle);
    if let Some(world) = world {
        register_memory(&mut tools, &world, who, Rc::new(BrowserClock));
        world::register_tools(&mut tools, world, who.me);
    }
    tools
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

/// A model that says why the settings' model cannot answer.
fn cannot_work(error: &str) -> Rc<dyn Llm> {
    Rc::new(RulesModel {
        rules: Vec::new(),
        fallback: format!("The model settings cannot work: {error}."),
    })
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
                Err(error) => cannot_work(&error.to_string()),
            }
        }
        #[cfg(feature = "local")]
        ModelSource::Local(settings) => match crate::web::local_model::worker_for(settings, None) {
            Ok(worker) => Rc::new(crate::llm::local::LocalModel::new(settings.clone(), worker)),
            Err(error) => cannot_work(&error),
        },
        #[cfg(not(feature = "local"))]
        ModelSource::Local(_) => cannot_work("this build has no local model"),
    }
}

/// The demo's agents behind one router: Familiar answers by default; `@scribe` keeps
/// notes, `@clock` tells the time and `@page` reads the page; `/time`, `/title`,
/// `/recall` and `/note` reach them directly.
pub fn delegate(llm: Rc<dyn Llm>, world: Option<Rc<dyn Store>>, who: &Participant) -> Delegate {
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
        register_memory(&mut scribe, world, who, Rc::new(BrowserClock));
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

/// The world's environment (seed 000's observation): a trigger's actor reads its
/// current morale, energy, health and gold from `world` as the trigger fires, however
/// long ago it was scheduled.
pub fn world_environment(world: Rc<dyn Store>) -> Environment {
    Rc::new(move |observation: &Observation| {
        let world = Rc::clone(&world);
        let mut observation = observation.clone();
        Box::pin(async move {
            match world::perceive(&*world, &mut observation).await {
                Ok(Some(_)) => Perceived {
                    actor: observation.actor.state,
                    ..Perceived::default()
                },
                Ok(None) => Perceived::default(),
                Err(error) => Perceived {
                    text: format!("Your current stats could not be read: {error}"),
                    ..Perceived::default()
                },
            }
        })
    })
}

/// The storage namespace of the demo's conversations.
pub const NAMESPACE: &str = "familiar";

/// The demo session's configuration, from its settings: the agents behind the
/// router, the character played, how runs are shaped, and the page's storage; with
/// the world they act on, for the inspector.
pub fn session(settings: &Settings) -> (Config, Delegate, Option<Rc<dyn Store>>) {
    let world = world_for(&settings.backend);
    let who = identity_for(&settings.backend);
    let llm = model_for(&settings.model);
    let proxy = (!matches!(settings.model, ModelSource::Rules)).then(|| Rc::clone(&llm));
    let proxy_for_world = proxy.clone();
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
        guess_goal: settings.goal_guess,
        planning_on_events: true,
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
    let mut agents = delegate(llm, world.clone(), &who);
    // The world's agents, each acting as itself (the World view fires their triggers):
    // the offline world policy plays them, or the proxy's model when one is set.
    for resident in world.iter().flat_map(|world| {
        roster(&settings.backend)
            .into_iter()
            .map(|who| crate::world::residents::resident(&who, world, proxy_for_world.clone()))
    }) {
        agents = agents.with_agent(Rc::new(resident));
    }
    (config, agents, world)
}
