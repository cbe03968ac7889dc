//! Declarative character workflows (seed 002): guardrails for transactions in a
//! character's file — a bartender takes an order, states the price, waits for payment
//! and serves. The layer runs around any agent's model call: [`Character::before`]
//! expires stale transactions, detects the message's intent ([`detect`]: each pending
//! transaction first — does the message advance or cancel it? — then the first state
//! of every workflow with none pending) and returns the text to inject into the system
//! prompt; [`Character::after`] records the transaction once the model has answered.
//! The model's reply stays free and in character.
//!
//! **One pending transaction per workflow type.** A pending drink order does not
//! block a food order; each workflow's cancellation and timeout apply to its own
//! transaction. When several could be cancelled or advanced ("never mind"), the one
//! the message names goes first ("cancel the stew"), else the newest.
//!
//! **Keywords.** A pattern match is sure. A keyword-only match (a `keywords` entry as
//! a whole word or phrase, no pattern) *triggers when no classifier can decide*: when
//! its triggers do not ask for `llm_classification`, or when no model is there to ask
//! (the rules model, offline play). With a model and `llm_classification`, the model
//! is asked one strict-JSON question and decides; a "no" or an unreadable answer
//! means no. So "nevermind", a cancellation keyword, cancels offline. Patterns beat
//! keywords wherever they match, and a keyword-only *start* of a workflow with a
//! price list needs an item on that list in the message ("I have a question" orders
//! nothing).
//!
//! **Extraction.** A pattern's named groups become the transaction's context. When
//! the group a price is looked up by captured something the price list lacks (the
//! seed's `(I'll have|give me|order) (?<drink>\w+)` captures `a` in "I'll have a
//! whiskey"), the item on the list the message names wins: the author's intent holds.

mod character;
mod detect;
mod file;
pub mod limits;
mod outcomes;
mod transaction;

use crate::base::json::Read;
use schemars::JsonSchema;
use serde_json::{Map, Value};

pub use character::{
    Action, COMPLETED, Character, Lines, Matcher, State, Workflow, interpolate, placeholders,
};
pub use detect::{Detection, Intent, Match};
pub use file::{
    ActionsDef, CancellationDef, CharacterFile, CreateDef, Identity, LoadError, Note, StateDef,
    TimeoutDef, TriggersDef, UpdateDef, WorkflowDef,
};
pub use outcomes::{MAX_COUNTED, Outcomes};
pub use transaction::{Transaction, TransactionStatus, Transactions, parse_rfc3339};

use crate::base::clock::Clock;
use crate::base::json::Contract;
use crate::llm::contract::ask;
use crate::llm::message::Message;
use crate::llm::{ChatRequest, Llm};
use crate::store::{Store, StoreError};

/// What [`Character::before`] found, for the prompt and for [`Character::after`].
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    pub intent: Intent,
    /// The text for the system prompt, if the workflows have something to say.
    pub injection: Option<String>,
    /// The user's live pending transactions, one per workflow type, newest first.
    pub pending: Vec<Transaction>,
    /// Transactions that expired before this message.
    pub expired: Vec<Transaction>,
}

/// The model's answer to "does this message mean that?".
#[derive(Debug, JsonSchema, Read)]
struct Classification {
    matches: bool,
}

impl Contract for Classification {}

/// The heading the injection goes under in the system prompt.
pub const HEADING: &str = "## Transaction context";

/// `system` with the workflows' injection appended under [`HEADING`].
pub fn inject(system: &str, injection: Option<&str>) -> String {
    match injection {
        Some(text) => format!("{system}\n\n{HEADING}\n{text}"),
        None => system.to_owned(),
    }
}

impl Character {
    /// Before the model call: expires stale transactions, detects the intent (asking
    /// `llm`, when given, about keyword-only matches that want it), and says what to
    /// inject.
    pub async fn before(
        &self,
        store: &dyn Store,
        clock: &dyn Clock,
        llm: Option<&dyn Llm>,
        user: &str,
        message: &str,
    ) -> Result<Prepared, StoreError> {
        let (pending, expired) = self.current(store, clock.now(), user).await?;
        let injection = |lines: &Lines| lines.injection.clone();
        let mut notes: Vec<String> = expired
            .iter()
            .filter_map(|t| self.timeout_said(t, injection))
            .collect();
        let intent = match self.detect(message, &pending) {
            Detection::Sure(intent) => intent,
            Detection::Unsure { intent, question } => match llm {
                None => intent,
                Some(llm) if classify(llm, &question, message).await => intent,
                Some(_) => Intent::None,
            },
            Detection::Nothing => Intent::None,
        };
        notes.extend(self.injection(&intent, &pending));
        Ok(Prepared {
            intent,
            injection: (!notes.is_empty()).then(|| notes.join("\n")),
            pending,
            expired,
        })
    }

    /// Expires the user's pending transactions that outlived their workflow's
    /// timeout, as a page does when it loads or opens the character, so nothing shows
    /// an order that already timed out; the expired ones.
    pub async fn expire_stale(
        &self,
        store: &dyn Store,
        clock: &dyn Clock,
        user: &str,
    ) -> Result<Vec<Transaction>, StoreError> {
        Ok(self.current(store, clock.now(), user).await?.1)
    }

    /// The user's live pending transactions, after expiring the stale ones: (live,
    /// expired now).
    pub async fn current(
        &self,
        store: &dyn Store,
        now: crate::base::clock::Instant,
        user: &str,
    ) -> Result<(Vec<Transaction>, Vec<Transaction>), StoreError> {
        let transactions = self.transactions(store);
        let (stale, live): (Vec<_>, Vec<_>) = transactions
            .all_pending(user)
            .await?
            .into_iter()
            .partition(|t| self.is_stale(t, now.epoch_ms));
        let mut expired = Vec::new();
        for stale in stale {
            let context = stale.context.clone();
            let status = TransactionStatus::Expired;
            let changed = transactions
                .change(&stale, &stale.state, status, context, now)
                .await?;
            expired.extend(changed);
        }
        Ok((live, expired))
    }

    /// The character's transactions in `store`.
    pub fn transactions<'a>(&'a self, store: &'a dyn Store) -> Transactions<'a> {
        Transactions {
            store,
            character: &self.identity.name,
        }
    }

    /// After the model answered: records what the intent does to its workflow's
    /// transaction; the transaction as recorded.
    pub async fn after(
        &self,
        store: &dyn Store,
        clock: &dyn Clock,
        user: &str,
        prepared: &Prepared,
    ) -> Result<Option<Transaction>, StoreError> {
        let transactions = self.transactions(store);
        let now = clock.now();
        let pending = prepared
            .intent
            .workflow()
            .and_then(|w| self.pending_of(w, &prepared.pending));
        match (&prepared.intent, pending) {
            (
                Intent::Start {
                    workflow,
                    extracted,
                },
                None,
            ) => {
                let Some(workflow) = self.workflows.get(*workflow) else {
                    return Ok(None);
                };
                let Some(first) = workflow.states.first() else {
                    return Ok(None);
                };
                if first.next == COMPLETED {
                    return Ok(None);
                }
                let context = start_context(first, extracted);
                let created = transactions
                    .create(user, &workflow.transaction_type, &first.next, context, now)
                    .await?;
                Ok(Some(created))
            }
            (
                Intent::Advance {
                    workflow,
                    state,
                    extracted,
                },
                Some(pending),
            ) => {
                let Some(state) = self
                    .workflows
                    .get(*workflow)
                    .and_then(|w| w.states.get(*state))
                else {
                    return Ok(None);
                };
                let context = advance_context(state, &pending.context, extracted);
                let status = if state.next == COMPLETED {
                    TransactionStatus::Completed
                } else {
                    TransactionStatus::Pending
                };
                transactions
                    .change(pending, &state.next, status, context, now)
                    .await
            }
            (Intent::Cancel { .. }, Some(pending)) => {
                let context = pending.context.clone();
                let status = TransactionStatus::Cancelled;
                transactions
                    .change(pending, &pending.state, status, context, now)
                    .await
            }
            _ => Ok(None),
        }
    }

    /// What the character says about `prepared` with no model: the timeouts' offline
    /// replies, then the matched step's (or cancellation's), else the character's own.
    pub fn offline_reply(&self, prepared: &Prepared) -> Option<String> {
        let reply = |lines: &Lines| lines.offline_reply.clone();
        let mut said: Vec<String> = prepared
            .expired
            .iter()
            .filter_map(|t| self.timeout_said(t, reply))
            .collect();
        said.extend(self.said(&prepared.intent, &prepared.pending, reply));
        if said.is_empty() {
            self.offline_reply.clone()
        } else {
            Some(said.join(" "))
        }
    }

    /// The pending transaction of workflow `workflow`, if any.
    fn pending_of<'a>(
        &self,
        workflow: usize,
        pending: &'a [Transaction],
    ) -> Option<&'a Transaction> {
        let workflow = self.workflows.get(workflow)?;
        pending
            .iter()
            .find(|t| t.transaction_type == workflow.transaction_type)
    }

    /// A workflow by transaction type, with its index.
    fn workflow_index(&self, transaction_type: &str) -> Option<(usize, &Workflow)> {
        self.workflows
            .iter()
            .enumerate()
            .find(|(_, w)| w.transaction_type == transaction_type)
    }

    /// One of the lines (`pick`) of the step `intent` takes, interpolated with the
    /// context that step produces.
    fn said(
        &self,
        intent: &Intent,
        pending: &[Transaction],
        pick: impl Fn(&Lines) -> Option<String>,
    ) -> Option<String> {
        let (text, context) = match intent {
            Intent::Start {
                workflow,
                extracted,
            } => {
                let first = self.workflows.get(*workflow)?.states.first()?;
                (pick(&first.lines)?, start_context(first, extracted))
            }
            Intent::Advance {
                workflow,
                state,
                extracted,
            } => {
                let state = self.workflows.get(*workflow)?.states.get(*state)?;
                let pending = self.pending_of(*workflow, pending)?;
                let context = advance_context(state, &pending.context, extracted);
                (pick(&state.lines)?, context)
            }
            Intent::Cancel { workflow } => {
                let (_, lines) = self.workflows.get(*workflow)?.cancellation.as_ref()?;
                let pending = self.pending_of(*workflow, pending)?;
                (pick(lines)?, pending.context.clone())
            }
            Intent::None => return None,
        };
        Some(interpolate(&text, &context))
    }

    /// One of the lines of `transaction`'s timeout, interpolated with its context.
    fn timeout_said(
        &self,
        transaction: &Transaction,
        pick: impl Fn(&Lines) -> Option<String>,
    ) -> Option<String> {
        let (_, lines) = self.workflow_of(transaction)?.timeout.as_ref()?;
        Some(interpolate(&pick(lines)?, &transaction.context))
    }

    fn workflow_of(&self, transaction: &Transaction) -> Option<&Workflow> {
        Some(self.workflow_index(&transaction.transaction_type)?.1)
    }

    fn is_stale(&self, transaction: &Transaction, now_ms: i64) -> bool {
        let Some((minutes, ..)) = self
            .workflow_of(transaction)
            .and_then(|w| w.timeout.as_ref())
        else {
            return false;
        };
        let updated = transaction.updated_ms().unwrap_or(now_ms);
        now_ms - updated > i64::from(*minutes) * 60_000
    }

    /// The injection for `intent`: the step's text with the context it produces, and
    /// a reminder of every other pending transaction (the model always knows them).
    fn injection(&self, intent: &Intent, pending: &[Transaction]) -> Option<String> {
        let acted_on = intent.workflow().and_then(|w| self.workflows.get(w));
        let mut lines: Vec<String> = self
            .said(intent, pending, |lines| lines.injection.clone())
            .into_iter()
            .collect();
        lines.extend(
            pending
                .iter()
                .filter(|t| acted_on.is_none_or(|w| w.transaction_type != t.transaction_type))
                .map(|t| {
                    let context = serde_json::to_string(&t.context).unwrap_or_default();
                    format!(
                        "A {} is pending, waiting for `{}`: {context}.",
                        t.transaction_type, t.state
                    )
                }),
        );
        (!lines.is_empty()).then(|| lines.join("\n"))
    }
}

/// The context a first state creates: its fields from the pattern, and the price.
fn start_context(state: &State, extracted: &Map<String, Value>) -> Map<String, Value> {
    let mut context = extracted.clone();
    if let Action::Create(create) = &state.action
        && (!create.price_lookup.is_empty() || create.context_fields.iter().any(|f| f == "price"))
    {
        let item = state
            .item_field
            .as_ref()
            .and_then(|f| context.get(f)?.as_str());
        let price = item
            .and_then(|item| detect::lookup(&create.price_lookup, item))
            .cloned()
            .unwrap_or_else(|| create.default_price.clone());
        context.insert("price".into(), price);
    }
    context
}

/// The pending context, with what this message extracted and the state's updates.
fn advance_context(
    state: &State,
    pending: &Map<String, Value>,
    extracted: &Map<String, Value>,
) -> Map<String, Value> {
    let mut context = pending.clone();
    context.extend(extracted.clone());
    if let Action::Update(updates) | Action::Complete(updates) = &state.action {
        context.extend(updates.clone());
    }
    context
}

/// One small strict-JSON question; any failure counts as "no".
async fn classify(llm: &dyn Llm, question: &str, message: &str) -> bool {
    let request = ChatRequest {
        system: "You decide whether a customer's message means a given step of a \
                 transaction. Reply with JSON only: {\"matches\": true} or \
                 {\"matches\": false}."
            .into(),
        messages: vec![Message::user(format!(
            "Step: {question}\nMessage: {message}\nDoes the message mean this step?"
        ))]
        .into(),
        temperature: Some(0.0),
        max_tokens: Some(20),
        ..ChatRequest::default()
    };
    matches!(
        ask::<Classification>(llm, request, 1, &mut |_| {}).await,
        Ok(Classification { matches: true })
    )
}
