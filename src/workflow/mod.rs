//! Declarative character workflows (seed 002): guardrails for transactions in a
//! character's JSON file — a bartender takes an order, states the price, waits for
//! payment and serves. The layer runs around any agent's model call:
//! [`Character::before`] expires a stale transaction, detects the message's intent
//! (the pending transaction first — does the message advance or cancel it? — then
//! every workflow's first state) and returns the text to inject into the system
//! prompt; [`Character::after`] records the transaction once the model has answered.
//! The model's reply stays free and in character.

mod character;
mod transaction;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

pub use character::{
    Action, COMPLETED, Character, CharacterFile, Identity, Lines, LoadError, Matcher, State,
    Workflow, interpolate, placeholders,
};
pub use transaction::{Transaction, TransactionStatus, Transactions, parse_rfc3339};

use crate::clock::Clock;
use crate::json::{Contract, ask};
use crate::llm::{ChatRequest, Llm};
use crate::message::Message;
use crate::store::{Store, StoreError};

/// How strongly a matcher matched a message.
#[derive(Debug, Clone, PartialEq)]
pub enum Match {
    /// A pattern matched; its named groups.
    Pattern(Map<String, Value>),
    /// Only keywords matched: a weak signal.
    Keyword,
    No,
}

impl Matcher {
    pub fn check(&self, message: &str) -> Match {
        for pattern in &self.patterns {
            if !pattern.is_match(message) {
                continue;
            }
            if let Some(captures) = pattern.captures(message) {
                let mut groups = Map::new();
                groups.extend(pattern.capture_names().flatten().filter_map(|name| {
                    let value = captures.name(name)?.as_str().trim();
                    Some((name.to_owned(), Value::from(value)))
                }));
                return Match::Pattern(groups);
            }
        }
        let lower = message.to_lowercase();
        let words: Vec<&str> = lower
            .split(|c: char| !c.is_alphanumeric() && c != '\'')
            .collect();
        let hit = self.keywords.iter().any(|k| {
            if k.contains(' ') {
                lower.contains(k.as_str())
            } else {
                words.contains(&k.as_str())
            }
        });
        if hit { Match::Keyword } else { Match::No }
    }
}

/// What a message means for the character's workflows.
#[derive(Debug, Clone, PartialEq)]
pub enum Intent {
    /// Starts workflow `workflow`, with what the pattern extracted.
    Start {
        workflow: usize,
        extracted: Map<String, Value>,
    },
    /// Moves the pending transaction through state `state` of `workflow`.
    Advance {
        workflow: usize,
        state: usize,
        extracted: Map<String, Value>,
    },
    Cancel {
        workflow: usize,
    },
    None,
}

/// The outcome of pattern and keyword detection, before any model is asked.
#[derive(Debug, Clone, PartialEq)]
pub enum Detection {
    Sure(Intent),
    /// Only keywords matched a state that allows a model to decide.
    Unsure {
        intent: Intent,
        question: String,
    },
    Nothing,
}

/// What [`Character::before`] found, for the prompt and for [`Character::after`].
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    pub intent: Intent,
    /// The text for the system prompt, if the workflows have something to say.
    pub injection: Option<String>,
    /// The pending transaction the intent applies to.
    pub pending: Option<Transaction>,
    /// A transaction that expired before this message.
    pub expired: Option<Transaction>,
}

/// The model's answer to "does this message mean that?".
#[derive(Debug, Deserialize, JsonSchema)]
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
    /// Patterns and keywords only: the pending transaction first, then every
    /// workflow's first state.
    pub fn detect(&self, message: &str, pending: Option<&Transaction>) -> Detection {
        let mut unsure = None;
        let mut consider =
            |intent: Intent, matcher: &Matcher, question: &str| -> Option<Detection> {
                match matcher.check(message) {
                    Match::Pattern(extracted) => Some(Detection::Sure(match intent {
                        Intent::Start { workflow, .. } => Intent::Start {
                            workflow,
                            extracted,
                        },
                        Intent::Advance {
                            workflow, state, ..
                        } => Intent::Advance {
                            workflow,
                            state,
                            extracted,
                        },
                        other => other,
                    })),
                    Match::Keyword if matcher.llm && unsure.is_none() => {
                        unsure = Some(Detection::Unsure {
                            intent,
                            question: question.to_owned(),
                        });
                        None
                    }
                    Match::Keyword | Match::No => None,
                }
            };
        if let Some(pending) = pending {
            let Some((w, workflow)) = self
                .workflows
                .iter()
                .enumerate()
                .find(|(_, w)| w.transaction_type == pending.transaction_type)
            else {
                return Detection::Nothing;
            };
            if let Some((matcher, _)) = &workflow.cancellation {
                let question = format!("cancel the {}", workflow.transaction_type);
                if let Some(found) = consider(Intent::Cancel { workflow: w }, matcher, &question) {
                    return found;
                }
            }
            if let Some((s, state)) = workflow
                .states
                .iter()
                .enumerate()
                .find(|(_, s)| s.name == pending.state)
            {
                let intent = Intent::Advance {
                    workflow: w,
                    state: s,
                    extracted: Map::new(),
                };
                let question = format!("{} (step `{}`)", workflow.description, state.name);
                if let Some(found) = consider(intent, &state.matcher, &question) {
                    return found;
                }
            }
        } else {
            for (w, workflow) in self.workflows.iter().enumerate() {
                let Some(first) = workflow.states.first() else {
                    continue;
                };
                let intent = Intent::Start {
                    workflow: w,
                    extracted: Map::new(),
                };
                if let Some(found) = consider(intent, &first.matcher, &workflow.description) {
                    return found;
                }
            }
        }
        unsure.unwrap_or(Detection::Nothing)
    }

    /// Before the model call: expires a stale transaction, detects the intent (asking
    /// `llm`, when given, about keyword-only matches), and says what to inject.
    pub async fn before(
        &self,
        store: &dyn Store,
        clock: &dyn Clock,
        llm: Option<&dyn Llm>,
        user: &str,
        message: &str,
    ) -> Result<Prepared, StoreError> {
        let now = clock.now();
        let mut notes = Vec::new();
        let (pending, expired) = self.current(store, now, user).await?;
        let injection = |lines: &Lines| lines.injection.clone();
        if let Some(text) = expired
            .as_ref()
            .and_then(|t| self.timeout_said(t, injection))
        {
            notes.push(text);
        }
        let intent = match self.detect(message, pending.as_ref()) {
            Detection::Sure(intent) => intent,
            Detection::Unsure { intent, question } => match llm {
                Some(llm) if classify(llm, &question, message).await => intent,
                _ => Intent::None,
            },
            Detection::Nothing => Intent::None,
        };
        if let Some(text) = self.injection(&intent, pending.as_ref()) {
            notes.push(text);
        }
        Ok(Prepared {
            intent,
            injection: (!notes.is_empty()).then(|| notes.join("\n")),
            pending,
            expired,
        })
    }

    /// Expires the user's pending transaction if it outlived its workflow's timeout,
    /// as a page does on load so a closed tab loses nothing; the expired one, if any.
    pub async fn expire_stale(
        &self,
        store: &dyn Store,
        clock: &dyn Clock,
        user: &str,
    ) -> Result<Option<Transaction>, StoreError> {
        Ok(self.current(store, clock.now(), user).await?.1)
    }

    /// The user's live pending transaction, and the one that just expired instead.
    async fn current(
        &self,
        store: &dyn Store,
        now: crate::clock::Instant,
        user: &str,
    ) -> Result<(Option<Transaction>, Option<Transaction>), StoreError> {
        let transactions = Transactions {
            store,
            character: &self.identity.name,
        };
        let mut pending = transactions.pending(user).await?;
        let Some(stale) = pending.take_if(|t| self.is_stale(t, now.epoch_ms)) else {
            return Ok((pending, None));
        };
        let context = stale.context.clone();
        let expired = transactions
            .change(
                &stale,
                &stale.state,
                TransactionStatus::Expired,
                context,
                now,
            )
            .await?;
        Ok((None, expired))
    }

    /// After the model answered: records what the intent does to the transaction.
    pub async fn after(
        &self,
        store: &dyn Store,
        clock: &dyn Clock,
        user: &str,
        prepared: &Prepared,
    ) -> Result<Option<Transaction>, StoreError> {
        let transactions = Transactions {
            store,
            character: &self.identity.name,
        };
        let now = clock.now();
        match (&prepared.intent, &prepared.pending) {
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
                let context = start_context(first, extracted);
                if first.next == COMPLETED {
                    return Ok(None);
                }
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
                transactions
                    .change(
                        pending,
                        &pending.state,
                        TransactionStatus::Cancelled,
                        context,
                        now,
                    )
                    .await
            }
            _ => Ok(None),
        }
    }

    /// What the character says about `prepared` with no model: the matched state's
    /// (or cancellation's, or timeout's) offline reply, else the character's own.
    pub fn offline_reply(&self, prepared: &Prepared) -> Option<String> {
        let reply = |lines: &Lines| lines.offline_reply.clone();
        let said = self.said(&prepared.intent, prepared.pending.as_ref(), reply);
        let expired = prepared
            .expired
            .as_ref()
            .and_then(|t| self.timeout_said(t, reply));
        match (expired, said) {
            (Some(e), Some(s)) => Some(format!("{e} {s}")),
            (e, s) => s.or(e).or_else(|| self.offline_reply.clone()),
        }
    }

    /// One of the lines (`pick`) of the step `intent` takes, interpolated with the
    /// context that step produces.
    fn said(
        &self,
        intent: &Intent,
        pending: Option<&Transaction>,
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
                let context = advance_context(state, &pending?.context, extracted);
                (pick(&state.lines)?, context)
            }
            Intent::Cancel { workflow } => {
                let (_, lines) = self.workflows.get(*workflow)?.cancellation.as_ref()?;
                (pick(lines)?, pending?.context.clone())
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
        self.workflows
            .iter()
            .find(|w| w.transaction_type == transaction.transaction_type)
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

    /// The injection for `intent`: the state's text with the context it produces, or
    /// a reminder of the pending transaction when the message did nothing to it.
    fn injection(&self, intent: &Intent, pending: Option<&Transaction>) -> Option<String> {
        if *intent != Intent::None {
            return self.said(intent, pending, |lines| lines.injection.clone());
        }
        let pending = pending?;
        let context = serde_json::to_string(&pending.context).unwrap_or_default();
        Some(format!(
            "A {} is pending, waiting for `{}`: {context}.",
            pending.transaction_type, pending.state
        ))
    }
}

/// The context a first state creates: its fields from the pattern, and the price.
fn start_context(state: &State, extracted: &Map<String, Value>) -> Map<String, Value> {
    let mut context = extracted.clone();
    if let Action::Create(create) = &state.action
        && (!create.price_lookup.is_empty() || create.context_fields.iter().any(|f| f == "price"))
    {
        let field = create
            .price_field
            .clone()
            .or_else(|| extracted.keys().next().cloned());
        let key = field
            .and_then(|f| context.get(&f)?.as_str().map(str::to_lowercase))
            .unwrap_or_default();
        let price = create
            .price_lookup
            .get(&key)
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
