//! Playing a character: its workflows run around the model call, and the inspector
//! shows the transaction.

use std::rc::Rc;

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::Session;
use crate::agent::Agent;
use crate::event::Event;
use crate::run::{AgentRun, ContextMemory, Observation};
use crate::store::Store;
use crate::web::{BrowserClock, demo};
use crate::workflow::{Character, Prepared, Transaction, TransactionStatus, inject};

impl Session {
    /// A message to a character: its workflows run first (intent, transaction,
    /// injection), then the model answers in character (with no model configured,
    /// the character's offline reply), then the transaction is recorded.
    pub(super) fn send_in_character(
        &self,
        id: u64,
        history: Vec<crate::message::Message>,
        text: String,
        character: Rc<Character>,
        world: Rc<dyn Store>,
    ) {
        let settings = self.settings.get_untracked();
        let session = *self;
        self.busy.set(true);
        spawn_local(async move {
            let proxy = match &settings.model {
                crate::settings::ModelSource::Proxy(_) => Some(demo::model_for(&settings.model)),
                crate::settings::ModelSource::Rules => None,
            };
            let prepared = character
                .before(
                    &*world,
                    &BrowserClock,
                    proxy.as_deref(),
                    demo::PLAYER,
                    &text,
                )
                .await;
            let prepared = match prepared {
                Ok(prepared) => prepared,
                Err(error) => {
                    let failed = crate::run::Outcome::Failed {
                        error: format!("the character's transactions are unavailable: {error}"),
                    };
                    session.on_event(id, &Event::Done(failed));
                    session.busy.set(false);
                    return session.save();
                }
            };
            let llm: Rc<dyn crate::llm::Llm> = proxy.unwrap_or_else(|| {
                Rc::new(crate::rules::RulesModel {
                    rules: Vec::new(),
                    fallback: character.offline_reply(&prepared).unwrap_or_default(),
                })
            });
            let system = inject(
                &demo::character_prompt(&character),
                prepared.injection.as_deref(),
            );
            let who = &character.identity;
            let agent = Rc::new(Agent::new(
                who.name.clone(),
                who.occupation.clone(),
                system,
                llm,
                Rc::new(crate::tool::ToolRegistry::new()),
            ));
            let run_id = format!("{}-{id}", session.conversation_id.get_untracked());
            let run = AgentRun::new(
                agent.system.clone(),
                history,
                Observation::chat(text),
                Vec::new(),
            )
            .with_id(run_id)
            .with_max_iterations(settings.max_iterations);
            session.inspector.update(|i| {
                i.trigger = format!("chat · message to {}", who.name);
                i.boundaries = run.observation().boundaries.clone();
                i.plan.clear();
                i.memory = ContextMemory::default();
                i.iterations = 0;
                i.cap = run.max_iterations();
                i.injection = prepared.injection.clone().unwrap_or_else(|| "—".into());
            });
            session.drive(id, run, agent, Some((character, prepared)));
        });
    }

    /// Records what the character's workflows did, once the model has answered.
    pub(super) async fn record(&self, character: &Character, prepared: &Prepared) {
        let Some(world) = self.world() else {
            return;
        };
        match character
            .after(&*world, &BrowserClock, demo::PLAYER, prepared)
            .await
        {
            Ok(Some(transaction)) => self
                .inspector
                .update(|i| i.transaction = describe(&transaction)),
            Ok(None) => {}
            Err(error) => self
                .inspector
                .update(|i| i.transaction = format!("not recorded: {error}")),
        }
    }
}

/// A transaction as the inspector shows it: type, state or status, and context.
pub(super) fn describe(transaction: &Transaction) -> String {
    let place = match transaction.status {
        TransactionStatus::Pending => transaction.state.clone(),
        status => format!("{status:?}").to_lowercase(),
    };
    let context: Vec<String> = transaction
        .context
        .iter()
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => format!("{k}={s}"),
            v => format!("{k}={v}"),
        })
        .collect();
    format!(
        "{} · {place} · {}",
        transaction.transaction_type,
        context.join(", ")
    )
}
