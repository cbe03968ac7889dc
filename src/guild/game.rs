//! [`Game`]: the guild council as a front end plays it, over any [`Store`] (the page's
//! own or Supabase) and the [`Council`]. Every read and write runs inside the game's
//! [`Exclusive`] section, so two tabs sharing the page's store never interleave (the
//! browser's lock is `web::lock`); model calls run outside it, so a slow model holds
//! no one up. Nothing the council returns is stored unless it passed the contract.

use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;

use futures::future::LocalBoxFuture;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::council::{Council, Drafts, Forecast};
use super::{Guild, Proposal, Record};
use crate::llm::contract::ContractError;
use crate::store::{Filtered, Row, Rpc, Select, Store, StoreError};

/// The longest name a guild's proposals may be drafted for, in characters.
pub const MOST_NAME: usize = 60;

/// How many proposals and ticks the board shows, newest kept.
const SHOWN_PROPOSALS: u64 = 30;
const SHOWN_TICKS: u64 = 200;

/// One section of the game's work at a time, across every writer of its store.
pub trait Exclusive {
    /// Runs `work` alone: after any other writer's section has ended, and before the
    /// next begins.
    fn exclusive<'a>(&'a self, work: LocalBoxFuture<'a, ()>) -> LocalBoxFuture<'a, ()>;
}

/// No lock: a store with one writer (a native test), or one that serializes writers
/// itself (PostgreSQL locks the guild's row).
#[derive(Debug, Default, Clone, Copy)]
pub struct Unlocked;

impl Exclusive for Unlocked {
    fn exclusive<'a>(&'a self, work: LocalBoxFuture<'a, ()>) -> LocalBoxFuture<'a, ()> {
        work
    }
}

/// Why a move of the game did not happen, in words a player can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GameError {
    #[error("{0}")]
    Store(#[from] StoreError),
    #[error("The council's proposals were unusable, so none were stored: {0}")]
    Drafts(ContractError),
    #[error("The oracle's forecast was unusable, so nothing changed: {0}")]
    Forecast(ContractError),
    #[error("there is no proposal {0} on the council's table")]
    NoProposal(i64),
    #[error("a guild's name is 1 to {MOST_NAME} characters; this one is {0}")]
    Name(usize),
    #[error("the game's lock ended before its work ran")]
    Lock,
    #[error("the store answered in an unexpected shape: {0}")]
    Shape(String),
}

/// What the page shows: the guild, the proposals (newest last) and the history.
#[derive(Debug, Clone, PartialEq)]
pub struct Board {
    pub guild: Guild,
    pub proposals: Vec<Proposal>,
    pub history: Vec<Record>,
}

/// The guild council over a store.
pub struct Game {
    store: Rc<dyn Store>,
    lock: Rc<dyn Exclusive>,
    council: Council,
}

fn typed<T: DeserializeOwned>(value: Value) -> Result<T, GameError> {
    crate::base::json::from_value(value).map_err(|e| GameError::Shape(e.to_string()))
}

fn rows<T: DeserializeOwned>(rows: Vec<Row>) -> Result<Vec<T>, GameError> {
    rows.into_iter().map(|r| typed(Value::Object(r))).collect()
}

fn call(function: &str, args: Value) -> Rpc {
    let args = match args {
        Value::Object(map) => map,
        _ => Row::new(),
    };
    Rpc {
        function: function.into(),
        args,
    }
}

impl Game {
    pub fn new(store: Rc<dyn Store>, lock: Rc<dyn Exclusive>, council: Council) -> Self {
        Self {
            store,
            lock,
            council,
        }
    }

    /// Runs `work` inside the game's exclusive section and returns its result.
    async fn alone<T: 'static>(
        &self,
        work: impl Future<Output = Result<T, GameError>> + 'static,
    ) -> Result<T, GameError> {
        let slot = Rc::new(RefCell::new(None));
        let filled = Rc::clone(&slot);
        let section = async move {
            let result = work.await;
            *filled.borrow_mut() = Some(result);
        };
        self.lock.exclusive(Box::pin(section)).await;
        slot.take().unwrap_or(Err(GameError::Lock))
    }

    /// The board now (the guild is founded on the first look).
    pub async fn board(&self) -> Result<Board, GameError> {
        let store = Rc::clone(&self.store);
        self.alone(async move { read_board(store.as_ref()).await })
            .await
    }

    /// Whether the council plays by its rules, with no model to ask (seed 001's
    /// deterministic fallback), so a front end can say so.
    pub fn offline(&self) -> bool {
        self.council.is_offline()
    }

    /// The council drafts 1-3 proposals for the guild as it is, and they join the
    /// table as pending; `guild` names the guild they are drafted for (seed 001's
    /// `{ guild?: string }`; blank is none, past [`MOST_NAME`] characters refused).
    /// Drafts that fail the contract are refused and none is stored.
    pub async fn propose(&self, guild: Option<&str>) -> Result<Vec<Proposal>, GameError> {
        let name = guild_name(guild)?;
        let board = self.board().await?;
        let Drafts(drafts) = self
            .council
            .draft(&board.guild, name)
            .await
            .map_err(GameError::Drafts)?;
        let store = Rc::clone(&self.store);
        self.alone(async move {
            let made = store
                .rpc(&call("guild_propose", json!({ "proposals": drafts })))
                .await?;
            typed(made)
        })
        .await
    }

    /// The oracle's conservative forecast for pending proposal `id`, recorded on it.
    pub async fn scry(&self, id: i64) -> Result<Proposal, GameError> {
        let board = self.board().await?;
        let proposal = board
            .proposals
            .iter()
            .find(|p| p.id == id)
            .ok_or(GameError::NoProposal(id))?;
        let Forecast {
            predicted_delta,
            risk_note,
        } = self
            .council
            .scry(&board.guild, proposal)
            .await
            .map_err(GameError::Forecast)?;
        let args = json!({
            "proposal_id": id, "predicted_delta": predicted_delta, "risk_note": risk_note,
        });
        self.write("guild_scry", args).await
    }

    /// The player's decree on pending proposal `id`.
    pub async fn decide(&self, id: i64, accept: bool) -> Result<Proposal, GameError> {
        self.write(
            "guild_decide",
            json!({ "proposal_id": id, "accept": accept }),
        )
        .await
    }

    /// The tick after `at_tick` (the tick the player saw): applied once, however often
    /// it is asked for; a repeat answers the tick's record with `fresh` false.
    pub async fn tick(&self, at_tick: i64) -> Result<Record, GameError> {
        self.write("guild_tick", json!({ "at_tick": at_tick }))
            .await
    }

    async fn write<T: DeserializeOwned + 'static>(
        &self,
        function: &'static str,
        args: Value,
    ) -> Result<T, GameError> {
        let store = Rc::clone(&self.store);
        self.alone(async move { typed(store.rpc(&call(function, args)).await?) })
            .await
    }
}

/// The guild's name as given, trimmed: none when blank, refused when too long.
fn guild_name(guild: Option<&str>) -> Result<Option<&str>, GameError> {
    let name = guild.map(str::trim).filter(|n| !n.is_empty());
    match name.map(|n| n.chars().count()) {
        Some(n) if n > MOST_NAME => Err(GameError::Name(n)),
        _ => Ok(name),
    }
}

async fn read_board(store: &dyn Store) -> Result<Board, GameError> {
    let guild: Guild = typed(store.rpc(&call("guild_open", json!({}))).await?)?;
    let owner = guild.owner.as_str();
    let proposals = Select::from("guild_proposals")
        .eq("owner", owner)
        .order("id", false)
        .limit(SHOWN_PROPOSALS);
    let mut proposals: Vec<Proposal> = rows(store.select(&proposals).await?)?;
    proposals.reverse();
    let history = Select::from("guild_history")
        .columns("tick,gold,food,morale,influence,applied,pressures")
        .eq("owner", owner)
        .order("tick", false)
        .limit(SHOWN_TICKS);
    let mut history: Vec<Record> = rows(store.select(&history).await?)?;
    history.reverse();
    Ok(Board {
        guild,
        proposals,
        history,
    })
}
