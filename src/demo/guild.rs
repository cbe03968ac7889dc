//! The guild council of the demo: its game over the store the settings name (the
//! page's own, guarded across tabs, or the Supabase project as the signed-in player),
//! with the council asking the configured model, or its rules when none is.

use std::rc::Rc;

use crate::app::settings::{Backend, ModelSource, Settings};
use crate::guild::{Council, Exclusive, Game, Unlocked};
use crate::store::{Store, StoreError};
use crate::web::{BrowserClock, LocalStorage, TabsLock};

/// The `localStorage` key of the page's own guild.
pub const GUILD_KEY: &str = "familiar.guild";

/// The guild game the settings name.
pub fn game(settings: &Settings) -> Result<Game, StoreError> {
    let (store, lock): (Rc<dyn Store>, Rc<dyn Exclusive>) = match &settings.backend {
        Backend::Local => {
            let persist = Box::new(LocalStorage::new(GUILD_KEY));
            let store = Rc::new(crate::guild::local(Rc::new(BrowserClock), Some(persist))?);
            let lock = TabsLock::new(GUILD_KEY, Some(Rc::clone(&store)));
            (store, Rc::new(lock))
        }
        // PostgreSQL serializes the ticks itself (the guild's row is locked).
        Backend::Supabase { url, anon_key } => {
            let account = Rc::new(super::account(url, anon_key));
            let store = super::signed_in_world(url, anon_key, account);
            (Rc::new(store), Rc::new(Unlocked))
        }
    };
    let council = match &settings.model {
        ModelSource::Rules => Council::offline(),
        source @ (ModelSource::Proxy(_) | ModelSource::Local(_)) => {
            Council::with_model(super::model_for(source))
        }
    };
    Ok(Game::new(store, lock, council))
}
