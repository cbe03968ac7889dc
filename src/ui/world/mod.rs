//! The World view: seed 000's world as a game in the page. It shows the agents (their
//! stats, identity, inventory, community and loyalty, relationships, and their own
//! memory: the turns of each one's own conversation), the battles, the market, jobs,
//! messages, posts and proposals, read again whenever a run acts; fires the world's
//! triggers at the agents from buttons (a message, a leader's call, a battle starting,
//! the market check, a proposal). The market check is also each agent's schedule in
//! the session, made when the view first opens: it goes on with the view closed and
//! across reloads, and the view shows when it fires next and pauses it. The runs are
//! the controller's, each in its agent's own conversation; the change log below names
//! the agent, the turn and the step that made each change.

use leptos::prelude::*;
use leptos::task::spawn_local;
use serde_json::json;

mod change;
mod orders;
mod snapshot;

use super::Chat;
use crate::app::{Decision, Missed, Storage, Update as SessionUpdate};
use crate::demo::roster;
use crate::run::event::{Event, Thought};
use crate::store::{Row, Rpc};
use crate::world::policy::is_lookup;
use crate::world::triggers::{INVITE, WorldAgent, WorldEvent};
use change::{Change, change_sentence};
use snapshot::{
    Snapshot, capitalised, community_of, effects, embedded_name, int, int_of, inventory_of,
    leaning, name_of, proposal_status, relationships_of, snapshot, text,
};

/// Seconds between an agent's scheduled market checks.
const MARKET_EVERY_S: u64 = 60;

/// Where the view remembers that the person paused the market checks.
const MARKET_PAUSED_KEY: &str = "familiar.world.market_paused";

/// The id of `who`'s market-check schedule.
fn market_schedule(who: &WorldAgent) -> String {
    format!("market:{}", who.name)
}

/// Makes each agent's market-check schedule that is missing.
fn schedule_market(app: &crate::app::Session, agents: &[WorldAgent]) -> Result<(), String> {
    let have = app.schedules();
    for who in agents {
        let id = market_schedule(who);
        if have.iter().all(|s| s.id != id) {
            let every = MARKET_EVERY_S * 1_000;
            let check = WorldEvent::MarketCheck.observe(who);
            app.schedule(Some(&id), every, check, Missed::Skip)
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// The newest turns of `who`'s own conversation, as "what happened → what it did".
fn memory_of(app: &crate::app::Session, who: &WorldAgent) -> Vec<String> {
    let own = crate::app::Session::own_conversation(&who.name);
    let Some(conversation) = app.conversation_of(&own) else {
        return Vec::new();
    };
    let turns = conversation.interactions.iter().rev().take(4);
    turns
        .map(|turn| {
            let answer = crate::world::told::told(turn);
            match answer {
                Some(answer) if !answer.is_empty() => format!("{} → {answer}", turn.input),
                _ => turn.input.clone(),
            }
        })
        .collect()
}

super::part::part!(
    world,
    preload,
    pub(super) fn open(chat: Chat) {
        view! { <WorldView chat=chat /> }.into_any()
    }
);

/// The World panel, drawn anew for each session the settings make (signing in makes
/// one, with the player's agents): its roster, its listener on the runs and its timer
/// are the session's.
#[component]
pub fn WorldView(
    /// The chat whose controller runs the triggers, and whose world is shown.
    chat: Chat,
) -> impl IntoView {
    move || {
        chat.settings.track();
        view! { <WorldPanel chat=chat /> }
    }
}

/// The World panel of the chat's current session.
#[component]
fn WorldPanel(chat: Chat) -> impl IntoView {
    // The agents the person plays: the seed's in the page's world, their own copies
    // in a Supabase project (read when the view opens, after signing in).
    let agents = StoredValue::new(chat.settings.with_untracked(|s| roster(&s.backend)));
    // The player, named "you" wherever the world names users.
    let me = chat
        .settings
        .with_untracked(|s| crate::demo::identity_for(&s.backend).me);
    let agents = move || agents.get_value();
    let world = RwSignal::new(Snapshot::default());
    let changes = RwSignal::new(Vec::<Change>::new());
    let status = RwSignal::new(String::new());
    // Bumped when an agent's own conversation changes: its memory is read again.
    let remembered = RwSignal::new(0u64);
    // The calls the agents wait on their owner's decision about, each on its card.
    let asks = RwSignal::new(chat.session().map(|app| app.pending()).unwrap_or_default());
    let refresh = move || {
        if let Some(store) = chat.world_store() {
            spawn_local(async move {
                let read = snapshot(store).await;
                // The chat's approval cards name the people a resident's action concerns.
                chat.people.set(
                    read.users
                        .iter()
                        .map(|u| (int(u, "id"), text(u, "username")))
                        .collect(),
                );
                world.set(read);
            });
        }
    };
    refresh();
    // Read the world again after every action a run takes, and log it.
    let listener = chat.session().map(|app| {
        let session = app.clone();
        let id = app.on(move |update| {
            if let SessionUpdate::Event { event, .. } = update
                && matches!(
                    event,
                    Event::ApprovalNeeded { .. } | Event::Decided { .. } | Event::Done(_)
                )
            {
                asks.set(session.pending());
            }
            if let SessionUpdate::Event {
                conversation,
                event: Event::Done(_),
                ..
            } = update
                && conversation.starts_with("agent:")
            {
                remembered.update(|n| *n += 1);
            }
            if let SessionUpdate::Event {
                conversation,
                turn,
                event:
                    Event::Thought(Thought::ToolReturn {
                        call_id,
                        tool,
                        result,
                        ..
                    }),
            } = update
                && tool != "plan"
                && !is_lookup(tool)
            {
                let agent = conversation.strip_prefix("agent:").unwrap_or("Familiar");
                let sentence =
                    change_sentence(&session, agent, conversation, *turn, call_id, tool, result);
                changes.update(|c| {
                    let step = c.iter().filter(|x| x.turn == *turn).count() + 1;
                    c.insert(
                        0,
                        Change {
                            agent: agent.to_owned(),
                            turn: *turn,
                            step,
                            tool: tool.to_string(),
                            sentence,
                        },
                    );
                    c.truncate(20);
                });
                refresh();
            }
        });
        (app, id)
    });
    let listener = StoredValue::new_local(listener);
    on_cleanup(move || {
        if let Some(Some((app, id))) = listener.try_with_value(Clone::clone) {
            app.off(id);
        }
    });
    let fire = move |who: WorldAgent, event: WorldEvent| {
        let Some(app) = chat.session() else { return };
        let said = fired(&event, &who);
        status.set(said.clone());
        spawn_local(async move {
            match app.trigger(event.observe(&who)).await {
                Ok(_) => status.set(format!("{} done.", said.trim_end_matches('…'))),
                Err(error) => status.set(error.to_string()),
            }
            refresh();
        });
    };
    // A message from the player to `who`: sent as the player, then the trigger.
    let say = move |who: WorldAgent, content: &'static str, mention: bool| {
        let (Some(store), Some(app)) = (chat.world_store(), chat.session()) else {
            return;
        };
        spawn_local(async move {
            let sent = store.rpc(&send_message(who.id, content)).await;
            let (from, message_id) = match sent {
                Ok(row) => (int_of(&row, "sender_id"), int_of(&row, "id")),
                Err(error) => return status.set(error.to_string()),
            };
            let text = content.to_owned();
            let event = if mention {
                WorldEvent::Mention {
                    leader: from,
                    message_id,
                    text,
                }
            } else {
                WorldEvent::Message {
                    from,
                    message_id,
                    text,
                }
            };
            let said = fired(&event, &who);
            status.set(said.clone());
            match app.trigger(event.observe(&who)).await {
                Ok(_) => status.set(format!("{} done.", said.trim_end_matches('…'))),
                Err(error) => status.set(error.to_string()),
            }
            refresh();
        });
    };
    let battle_starts = move |_| {
        let active = world.with_untracked(|w| {
            w.battles
                .iter()
                .find(|b| text(b, "status") == "active")
                .map(|b| int(b, "id"))
        });
        let Some(battle_id) = active else {
            return status.set("no battle is active".into());
        };
        for who in agents() {
            fire(who, WorldEvent::BattleStarted { battle_id });
        }
    };
    // The market check is each agent's schedule in the session (made here the first
    // time, unless the person paused it); the view only shows when it fires next.
    let storage = crate::web::BrowserStorage;
    let (paused, set_paused) = signal(storage.load(MARKET_PAUSED_KEY).is_some());
    if let Some(app) = chat.session()
        && !paused.get_untracked()
        && let Err(error) = schedule_market(&app, &agents())
    {
        status.set(error);
    }
    let next_check = move || {
        let app = chat.session()?;
        let next = app
            .schedules()
            .iter()
            .filter(|s| s.id.starts_with("market:"))
            .map(|s| s.next_ms)
            .min()?;
        let now = js_sys::Date::now() as i64;
        Some(
            u64::try_from((next - now).max(0))
                .unwrap_or(0)
                .div_ceil(1_000),
        )
    };
    let (left, set_left) = signal(next_check());
    let toggle_market = move |_| {
        let Some(app) = chat.session() else { return };
        if paused.get_untracked() {
            storage.remove(MARKET_PAUSED_KEY);
            if let Err(error) = schedule_market(&app, &agents()) {
                status.set(error);
            }
            set_paused.set(false);
            set_left.set(next_check());
        } else {
            for who in agents() {
                app.unschedule(&market_schedule(&who));
            }
            if let Err(error) = storage.save(MARKET_PAUSED_KEY, "true") {
                status.set(error);
            }
            set_paused.set(true);
        }
    };

    let tick = set_interval_with_handle(
        move || set_left.set(next_check()),
        std::time::Duration::from_secs(1),
    )
    .ok();
    on_cleanup(move || {
        if let Some(tick) = tick {
            tick.clear();
        }
    });
    let names = move |id: i64| world.with(|w| name_of(w, id, me));
    view! {
        <section class="world" aria-labelledby="world-heading">
            <header class="world-header">
                <h2 id="world-heading" tabindex="-1">"World"</h2>
                <div class="world-controls">
                    <p class="market-timer" role="timer">
                        <span>{move || match (paused.get(), left.get()) {
                            (true, _) => "Market check paused".to_owned(),
                            (false, Some(left)) => format!("Next market check in {left} s"),
                            (false, None) => "No market check scheduled".to_owned(),
                        }}</span>
                        " "
                        <button type="button" class="pause-market" on:click=toggle_market>
                            {move || if paused.get() { "Resume" } else { "Pause" }}
                        </button>
                    </p>
                    <button type="button" class="battle-starts" on:click=battle_starts>"A battle starts"</button>
                </div>
                <p class="world-status" role="status">{move || status.get()}</p>
            </header>
            {agents().is_empty().then(|| view! {
                <p class="no-agents">"You have no agents in this world yet: sign in (Settings) to get yours."</p>
            })}
            <ul class="world-agents" aria-label="Your agents">
                {agents().into_iter().map(|who| {
                    let id = who.id;
                    let (a, b, c, d, e) = (who.clone(), who.clone(), who.clone(), who.clone(), who.clone());
                    let row = move || world.with(|w| w.users.iter().find(|u| int(u, "id") == id).cloned().unwrap_or_default());
                    let stat = move |column: &'static str| move || int(&row(), column);
                    let initial = who.name.chars().next().map(|c| c.to_uppercase().to_string()).unwrap_or_default();
                    view! {
                        <li class="world-agent" data-agent=who.name.clone()>
                            <div class="agent-head">
                                <span class="portrait" aria-hidden="true">{initial}</span>
                                <div>
                                    <h3>{who.name.clone()}</h3>
                                    <p class="identity">
                                        {format!("Loyalty {} · {} · {}",
                                            who.identity.loyalty.unwrap_or_default(),
                                            who.identity.temperament,
                                            leaning(who.identity.order_chaos))}
                                    </p>
                                    <p class="community">{move || world.with(|w| community_of(w, id))}</p>
                                </div>
                            </div>
                            <dl class="stats">
                                {STATS.into_iter().map(|(column, label, bounded)| view! {
                                    <div class="stat" data-stat=column>
                                        <dt>{label}</dt>
                                        <dd class=column>
                                            <span class="stat-value">{move || stat(column)().to_string()}</span>
                                            {bounded.then(|| bar(Signal::derive(stat(column))))}
                                        </dd>
                                    </div>
                                }).collect_view()}
                            </dl>
                            <h4>"Carries"</h4>
                            <ul class="inventory">{move || world.with(|w| {
                                let items = inventory_of(w, id);
                                if items.is_empty() {
                                    return view! { <li class="empty">"nothing"</li> }.into_any();
                                }
                                items.into_iter().map(|item| view! { <li>{item}</li> }).collect_view().into_any()
                            })}</ul>
                            <h4>"Standing"</h4>
                            <ul class="relationships">{move || world.with(|w| relationships_of(w, id, me)
                                .into_iter().map(|r| view! { <li>{r}</li> }).collect_view())}</ul>
                            {let own = crate::app::Session::own_conversation(&who.name); let name = who.name.clone(); move || {
                                asks.get().into_iter().filter(|p| p.conversation == own).map(|p| {
                                    let key = p.key();
                                    let (yes, no) = (key.clone(), key);
                                    // In names and words: "send a message to Mira: “Hi”".
                                    let what = crate::world::told::request(&p.call.name, &p.call.arguments, |id| {
                                        world.with_untracked(|w| w.users.iter().find(|u| int(u, "id") == id).map(|u| text(u, "username")))
                                    });
                                    let decide = move |key: crate::app::ApprovalKey, decision: Decision| {
                                        if let Some(app) = chat.session()
                                            && let Err(error) = app.decide(&key, decision)
                                        {
                                            status.set(error.to_string());
                                        }
                                    };
                                    view! {
                                        <div class="agent-asks" role="group" aria-label=format!("{name} asks first")>
                                            <p>{format!("{name} asks to {what}.").replace("”.", "”")}</p>
                                            {p.always_asks.clone().map(|why| view! { <p class="agent-asks-why">{format!("It asks because {why}.")}</p> })}
                                            <div class="agent-asks-actions">
                                                <button type="button" class="approve" on:click=move |_| decide(yes.clone(), Decision::Approve)>"Approve"</button>
                                                <button type="button" class="deny" on:click=move |_| decide(no.clone(), Decision::Deny { reason: "the owner said no".into() })>"Deny"</button>
                                            </div>
                                        </div>
                                    }
                                }).collect_view()
                            }}
                            <div class="triggers" role="group" aria-label=format!("Events for {}", who.name)>
                                <button type="button" class="market-check" on:click=move |_| fire(a.clone(), WorldEvent::MarketCheck)>"Market check"</button>
                                <button type="button" class="say-hi" on:click=move |_| say(b.clone(), "Hi", false)>"Say hi"</button>
                                <button type="button" class="leaders-call" on:click=move |_| say(c.clone(), "Everyone fight in battle 1!", true)>"Call to battle"</button>
                                <button type="button" class="invite" on:click=move |_| say(e.clone(), INVITE, false)>"Join my community"</button>
                                <button type="button" class="proposal" on:click=move |_| {
                                    let latest = world.with_untracked(|w| w.proposals.first().map(|p| (int(p, "id"), text(p, "title"))));
                                    if let Some((proposal_id, title)) = latest {
                                        fire(d.clone(), WorldEvent::Proposal { proposal_id, title });
                                    }
                                }>"Proposal"</button>
                            </div>
                            <orders::StandingOrdersForm chat=chat who=who.clone() status=status />
                            <button type="button" class="open-memory" on:click={let own = crate::app::Session::own_conversation(&who.name); move |_| chat.view(&own)}>
                                {format!("Open {}'s conversation", who.name)}
                            </button>
                            <details class="agent-memory">
                                <summary>{format!("{}'s memory", who.name)}</summary>
                                <ol>
                                    {let me = who.clone(); move || {
                                        remembered.track();
                                        let turns = chat.session().map(|app| memory_of(&app, &me)).unwrap_or_default();
                                        if turns.is_empty() {
                                            return view! { <li class="empty">"Nothing yet."</li> }.into_any();
                                        }
                                        turns.into_iter().map(|t| view! { <li>{t}</li> }).collect_view().into_any()
                                    }}
                                </ol>
                            </details>
                        </li>
                    }
                }).collect_view()}
            </ul>
            <div class="world-tables">
                <table class="battles">
                    <caption>"Battles"</caption>
                    <thead><tr><th scope="col">"Battle (status): damage dealt"</th><th scope="col">"Sides"</th></tr></thead>
                    <tbody>{move || world.with(|w| w.battles.iter().map(|b| view! {
                        <tr>
                            <th scope="row">{format!("Battle {} ({}): {} – {}", int(b, "id"), text(b, "status"),
                                int(b, "community1_damage"), int(b, "community2_damage"))}</th>
                            <td>{format!("{} – {}", embedded_name(b, "community1"), embedded_name(b, "community2"))}</td>
                        </tr>
                    }).collect_view())}</tbody>
                </table>
                <table class="market">
                    <caption>"Market"</caption>
                    <thead><tr><th scope="col">"Item"</th><th scope="col">"Price"</th><th scope="col">"Effect"</th></tr></thead>
                    <tbody>{move || world.with(|w| w.market.iter().map(|m| view! {
                        <tr>
                            <th scope="row">{text(m, "name")}</th>
                            <td class="number">{format!("{} gold", int(m, "price"))}</td>
                            <td>{effects(m.get("effects"))}</td>
                        </tr>
                    }).collect_view())}</tbody>
                </table>
                <table class="jobs">
                    <caption>"Jobs"</caption>
                    <thead><tr><th scope="col">"Job"</th><th scope="col">"Pay"</th><th scope="col">"Energy"</th></tr></thead>
                    <tbody>{move || world.with(|w| w.jobs.iter().map(|j| view! {
                        <tr>
                            <th scope="row">{text(j, "name")}</th>
                            <td class="number">{format!("+{} gold", int(j, "pay"))}</td>
                            <td class="number">{format!("−{}", int(j, "energy_cost"))}</td>
                        </tr>
                    }).collect_view())}</tbody>
                </table>
                <div class="world-feed">
                    <h3>"Messages"</h3>
                    <ul class="messages">{move || world.with(|w| w.messages.iter().map(|m| view! {
                        <li>{format!("{} → {}: “{}”", capitalised(&names(int(m, "sender_id"))), names(int(m, "receiver_id")), text(m, "content"))}</li>
                    }).collect_view())}</ul>
                    <h3>"Posts"</h3>
                    <ul class="posts">{move || world.with(|w| w.posts.iter().map(|p| view! {
                        <li>{format!("{}: “{}”", capitalised(&names(int(p, "author_id"))), text(p, "content"))}</li>
                    }).collect_view())}</ul>
                    <h3>"Proposals"</h3>
                    <ul class="proposals">{move || world.with(|w| w.proposals.iter().map(|p| view! {
                        <li>{format!("{} ({})", text(p, "title"), proposal_status(p))}</li>
                    }).collect_view())}</ul>
                </div>
            </div>
            <h3 class="world-changes-heading">"What your agents did"</h3>
            <ol class="world-changes" aria-label="Changes">
                {move || {
                    let list = changes.get();
                    if list.is_empty() {
                        return view! { <li class="empty">"Nothing yet: fire an event at an agent above."</li> }.into_any();
                    }
                    list.into_iter().map(|c| {
                        let own = crate::app::Session::own_conversation(&c.agent);
                        view! {
                            <li data-tool=c.tool.clone()>
                                <p class="change-text">{c.sentence.clone()}</p>
                                <button type="button" class="change-open" on:click=move |_| chat.view(&own)>
                                    {format!("See it in {}'s conversation (turn {}, step {})", c.agent, c.turn, c.step)}
                                </button>
                            </li>
                        }
                    }).collect_view().into_any()
                }}
            </ol>
        </section>
    }
}

/// The stats a card shows: column, label, and whether it is out of 100 (a bar).
const STATS: [(&str, &str, bool); 4] = [
    ("health", "Health", true),
    ("energy", "Energy", true),
    ("morale", "Morale", true),
    ("gold", "Gold", false),
];

/// A stat out of 100 as a bar (its number is beside it, in words for everyone).
fn bar(value: Signal<i64>) -> impl IntoView {
    view! {
        <svg class="stat-bar" viewBox="0 0 100 8" preserveAspectRatio="none" aria-hidden="true" focusable="false">
            <rect class="stat-track" width="100" height="8" rx="4" />
            <rect class="stat-fill" width=move || value.get().clamp(0, 100).to_string() height="8" rx="4" />
        </svg>
    }
}

/// What the status line says as an event is fired: "Market check for Mira…".
fn fired(event: &WorldEvent, who: &WorldAgent) -> String {
    let name = crate::world::told::event_name("", event.event());
    format!("{name} for {}…", who.name)
}

/// The player's own `send_message` (no ledger key: a person's click, not a run's step).
/// The key is left out, not sent as `null`: postrust reads a JSON `null` for a text
/// argument as `''`, and every later message of the player then answered the first
/// one's row from the ledger instead of being sent (e2e/world_supabase.test.mjs).
fn send_message(to: i64, content: &str) -> Rpc {
    let mut args = Row::new();
    args.insert("user_id".into(), json!(to));
    args.insert("content".into(), json!(content));
    Rpc {
        function: "send_message".into(),
        args,
    }
}
