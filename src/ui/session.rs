//! A chat session: the agent's seams, the conversation signal, and sending a message.

use std::rc::Rc;

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::clock::Clock;
use crate::driver::{Seams, drive};
use crate::interaction::Conversation;
use crate::rules::RulesModel;
use crate::run::{AgentRun, Observation};
use crate::tool::ToolRegistry;
use crate::web::{BrowserClock, demo};

struct Agent {
    llm: RulesModel,
    tools: ToolRegistry,
    clock: BrowserClock,
}

/// One conversation with the demo agent.
#[derive(Clone)]
pub struct Session {
    agent: Rc<Agent>,
    conversation: RwSignal<Conversation>,
    busy: RwSignal<bool>,
}

impl Session {
    /// The no-server demo: the rules model with the clock and page tools.
    pub fn demo() -> Self {
        Self {
            agent: Rc::new(Agent {
                llm: demo::rules_model(),
                tools: demo::tools(),
                clock: BrowserClock,
            }),
            conversation: RwSignal::new(Conversation::default()),
            busy: RwSignal::new(false),
        }
    }

    pub fn conversation(&self) -> ReadSignal<Conversation> {
        self.conversation.read_only()
    }

    /// True while a run is in flight.
    pub fn busy(&self) -> Signal<bool> {
        self.busy.into()
    }

    /// Starts a run on `text`; ignored while another run is in flight.
    pub fn send(&self, text: String) {
        let text = text.trim().to_owned();
        if text.is_empty() || self.busy.get_untracked() {
            return;
        }
        self.busy.set(true);
        let history = self.conversation.with_untracked(Conversation::history);
        let id = self
            .conversation
            .try_update(|c| c.begin(&text))
            .unwrap_or_default();
        let session = self.clone();
        spawn_local(async move {
            let agent = &session.agent;
            let observation = Observation::chat(text);
            let mut run = AgentRun::new(
                demo::SYSTEM_PROMPT,
                history,
                observation,
                agent.tools.catalogue(),
            )
            .with_id(format!("chat-{id}-{}", agent.clock.now().epoch_ms));
            let seams = Seams {
                llm: &agent.llm,
                tools: &agent.tools,
                clock: &agent.clock,
                host: None,
            };
            let conversation = session.conversation;
            drive(&mut run, &seams, &mut |event| {
                conversation.update(|c| c.apply(id, &event));
            })
            .await;
            session.busy.set(false);
        });
    }
}
