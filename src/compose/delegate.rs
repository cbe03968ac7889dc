//! The delegate: routes each message to an agent. `/command rest` goes to the agent
//! the command names, `@agent rest` switches to that agent (and stays there; `@` and
//! the default agent's name switches back), plain text goes to the current agent; an
//! unknown command or agent falls back to chit-chat with the default agent, which gets
//! the whole message. Which agent is current is the caller's to keep (a session keeps
//! one per conversation); [`Delegate::chat`] keeps its own.

use crate::base::small_map::SmallMap;
use std::rc::Rc;

use crate::base::clock::Clock;
use crate::compose::agent::Agent;
use crate::run::Outcome;
use crate::run::driver::Stop;
use crate::run::event::Event;

/// How a message asks to be routed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route<'a> {
    Command { command: &'a str, rest: &'a str },
    Mention { agent: &'a str, rest: &'a str },
    Plain(&'a str),
}

/// Reads the routing prefix of `input`: `/word` or `@word` at its start.
pub fn route(input: &str) -> Route<'_> {
    let input = input.trim();
    let split = |text: &'static str| -> Option<(&str, &str)> {
        let body = input.strip_prefix(text)?;
        let end = body.find(char::is_whitespace).unwrap_or(body.len());
        let (word, rest) = body.split_at(end);
        (!word.is_empty()).then(|| (word, rest.trim()))
    };
    if let Some((command, rest)) = split("/") {
        return Route::Command { command, rest };
    }
    if let Some((agent, rest)) = split("@") {
        return Route::Mention { agent, rest };
    }
    Route::Plain(input)
}

/// Where a message went, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Routed {
    Command(String),
    Agent(String),
    Current(String),
    /// The default agent, for plain chat or an unknown command or agent.
    ChitChat,
}

/// Where [`Delegate::route_in`] sends a message.
pub struct Routing {
    pub agent: Rc<Agent>,
    /// What the agent is asked (empty: `@agent` alone, a switch only).
    pub text: String,
    pub routed: Routed,
    /// The agent a mention makes current: `Some(None)` is back to the default.
    pub switch: Option<Option<String>>,
}

/// A route a person can type, as seed 004 lists commands: `value` is what to type
/// (`/summary`, `@shop`), `label` what it does.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Command {
    pub value: String,
    pub label: String,
}

/// A router over agents, with a default for chit-chat.
pub struct Delegate {
    default: Rc<Agent>,
    agents: Vec<Rc<Agent>>,
    commands: SmallMap<String, String>,
    current: Option<String>,
}

impl Delegate {
    pub fn new(default: Rc<Agent>) -> Self {
        Self {
            default,
            agents: Vec::new(),
            commands: SmallMap::new(),
            current: None,
        }
    }

    /// Adds an agent that `@name` reaches.
    pub fn with_agent(mut self, agent: Rc<Agent>) -> Self {
        self.agents.push(agent);
        self
    }

    /// Makes `/command` go to the agent named `agent`.
    pub fn with_command(mut self, command: &str, agent: &str) -> Self {
        self.commands.insert(command.to_owned(), agent.to_owned());
        self
    }

    /// Every route a person can type, as seed 004 lists its commands (`{value,
    /// label}`): the `/command`s, the `@agent`s, and last `@` with the default agent's
    /// name, the way back to it once another agent is current.
    pub fn commands(&self) -> Vec<Command> {
        let label = |description: &str, otherwise: String| match description.trim() {
            "" => otherwise,
            said => said.to_owned(),
        };
        let mut commands: Vec<Command> = self
            .commands
            .iter()
            .filter_map(|(command, agent)| {
                let agent = self.agent(agent)?;
                Some(Command {
                    value: format!("/{command}"),
                    label: label(&agent.description, format!("Ask @{}", agent.name)),
                })
            })
            .collect();
        commands.extend(self.agents.iter().map(|a| Command {
            value: format!("@{}", a.name),
            label: label(&a.description, format!("Talk to @{}", a.name)),
        }));
        commands.push(Command {
            value: format!("@{}", self.default.name),
            label: format!("Back to @{}, the main agent", self.default.name),
        });
        commands
    }

    /// The agent plain chat and events go to when nothing else is chosen.
    pub fn default_agent(&self) -> Rc<Agent> {
        Rc::clone(&self.default)
    }

    /// The agent called `name`, the default one included.
    pub fn named(&self, name: &str) -> Option<Rc<Agent>> {
        if self.default.name == name {
            return Some(Rc::clone(&self.default));
        }
        self.agent(name)
    }

    fn agent(&self, name: &str) -> Option<Rc<Agent>> {
        self.agents.iter().find(|a| a.name == name).cloned()
    }

    /// The agent for `input`, the text it gets, and why; `@agent` switches the
    /// delegate's own current agent.
    pub fn resolve(&mut self, input: &str) -> (Rc<Agent>, String, Routed) {
        let routing = self.route_in(input, self.current.as_deref());
        if let Some(switch) = routing.switch {
            self.current = switch;
        }
        (routing.agent, routing.text, routing.routed)
    }

    /// Where `input` goes in a conversation whose current agent is `current` (none,
    /// or one no longer known: the default).
    pub fn route_in(&self, input: &str, current: Option<&str>) -> Routing {
        let to = |agent: Rc<Agent>, text: &str, routed: Routed| Routing {
            agent,
            text: text.to_owned(),
            routed,
            switch: None,
        };
        match route(input) {
            Route::Command { command, rest } => {
                match self.commands.get(command).and_then(|a| self.agent(a)) {
                    // A bare `/command` asks the agent for the command itself.
                    Some(agent) if rest.is_empty() => {
                        to(agent, command, Routed::Command(command.into()))
                    }
                    Some(agent) => to(agent, rest, Routed::Command(command.into())),
                    None => self.chit_chat(input),
                }
            }
            Route::Mention { agent, rest } if agent == self.default.name => Routing {
                switch: Some(None),
                ..to(self.default_agent(), rest, Routed::Agent(agent.into()))
            },
            Route::Mention { agent, rest } => match self.agent(agent) {
                Some(found) => Routing {
                    switch: Some(Some(found.name.clone())),
                    ..to(found, rest, Routed::Agent(agent.into()))
                },
                None => self.chit_chat(input),
            },
            Route::Plain(text) => match current.and_then(|name| self.agent(name)) {
                Some(current) => {
                    let name = current.name.clone();
                    to(current, text, Routed::Current(name))
                }
                None => self.chit_chat(input),
            },
        }
    }

    fn chit_chat(&self, input: &str) -> Routing {
        Routing {
            agent: Rc::clone(&self.default),
            text: input.trim().to_owned(),
            routed: Routed::ChitChat,
            switch: None,
        }
    }

    /// Routes `input` and runs the chosen agent; `@agent` alone only switches.
    pub async fn chat(
        &mut self,
        run_id: &str,
        input: &str,
        clock: &dyn Clock,
        emit: &mut dyn FnMut(Event),
    ) -> (Routed, Stop) {
        let (agent, text, routed) = self.resolve(input);
        if text.is_empty() {
            let outcome = Outcome::Answered {
                text: format!("You are now talking to {}.", agent.name),
            };
            emit(Event::Done(outcome.clone()));
            return (routed, Stop::Done(outcome));
        }
        let stop = agent.chat(run_id, &text, clock, emit).await;
        (routed, stop)
    }
}

/// Whether `route` (a `/command` or `@agent`) continues what a person is typing: the
/// message so far is one word starting with `/` or `@`, and not the whole route yet.
pub fn continues(typed: &str, route: &str) -> bool {
    let word = typed.trim_start();
    begins_route(typed) && route.starts_with(word) && route != word
}

/// Whether what a person is typing may be the start of a route: one word starting
/// with `/` or `@`. Anything else is continued by none, so the routes need not be
/// asked for (the chat pane builds its controller to list them).
pub fn begins_route(typed: &str) -> bool {
    let word = typed.trim_start();
    (word.starts_with('/') || word.starts_with('@')) && !word.contains(char::is_whitespace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slash_or_at_word_is_continued_by_the_routes_it_begins() {
        assert!(continues("/", "/time"));
        assert!(continues(" /ti", "/time"));
        assert!(continues("@", "@dotty"));
        assert!(!continues("/ti", "@dotty"));
    }

    #[test]
    fn nothing_continues_a_whole_route_or_a_message() {
        assert!(!continues("/time", "/time"));
        assert!(!continues("/time now", "/time"));
        assert!(!continues("hello /", "/time"));
        assert!(!continues("", "/time"));
    }

    #[test]
    fn the_commands_list_every_route_and_last_the_way_back_to_the_main_agent() {
        let llm: Rc<dyn crate::llm::Llm> = Rc::new(
            crate::llm::rules::RulesModel::from_json(r#"{"fallback": "", "rules": []}"#).unwrap(),
        );
        let tools = Rc::new(crate::tool::ToolRegistry::new());
        let agent = |name: &str, description: &str| {
            Rc::new(Agent::new(
                name,
                description,
                "",
                Rc::clone(&llm),
                Rc::clone(&tools),
            ))
        };
        let mut delegate = Delegate::new(agent("guide", ""))
            .with_agent(agent("shop", "Runs the shop"))
            .with_agent(agent("bank", ""))
            .with_command("buy", "shop");
        let listed: Vec<(String, String)> = delegate
            .commands()
            .into_iter()
            .map(|c| (c.value, c.label))
            .collect();
        let pairs = |list: &[(&str, &str)]| -> Vec<(String, String)> {
            list.iter()
                .map(|(v, l)| ((*v).to_owned(), (*l).to_owned()))
                .collect()
        };
        assert_eq!(
            listed,
            pairs(&[
                ("/buy", "Runs the shop"),
                ("@shop", "Runs the shop"),
                ("@bank", "Talk to @bank"),
                ("@guide", "Back to @guide, the main agent"),
            ])
        );
        // The way back does what it says: from the shop, `@guide` makes the main
        // agent current again.
        let (to_shop, ..) = delegate.resolve("@shop");
        assert_eq!(to_shop.name, "shop");
        let back = delegate.commands().pop().unwrap().value;
        let (agent, ..) = delegate.resolve(&back);
        assert_eq!(agent.name, "guide");
        let (plain, ..) = delegate.resolve("hello");
        assert_eq!(plain.name, "guide");
    }

    #[test]
    fn prefixes_route_and_everything_else_is_plain() {
        assert_eq!(
            route("/search python tutorials"),
            Route::Command {
                command: "search",
                rest: "python tutorials"
            }
        );
        assert_eq!(
            route("  @page summarize this"),
            Route::Mention {
                agent: "page",
                rest: "summarize this"
            }
        );
        assert_eq!(
            route("@page"),
            Route::Mention {
                agent: "page",
                rest: ""
            }
        );
        assert_eq!(route("/ nothing"), Route::Plain("/ nothing"));
        assert_eq!(route("mail me @ noon"), Route::Plain("mail me @ noon"));
    }
}
