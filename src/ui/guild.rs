//! The guild council's view: the guild's resources, the council's proposals with
//! Propose, Scry, Accept and Reject, the Tick, and the history as a small SVG chart.
//! It renders the [`Board`] the game returns and calls the game's moves; the rules,
//! the council and the store are below (`crate::guild`, `crate::demo::guild`).

use std::rc::Rc;

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::app::settings::Settings;
use crate::demo;
use crate::guild::{Board, Game, GameError, Proposal, RESOURCES, Record, Resource, Status};

const CHART_WIDTH: i64 = 240;
const CHART_HEIGHT: i64 = 80;

/// A move of the player.
#[derive(Clone, Copy)]
enum Move {
    Propose,
    Scry(i64),
    Decide(i64, bool),
    Tick(i64),
}

/// What a finished move says to the player.
async fn play(game: &Game, action: Move) -> Result<String, GameError> {
    Ok(match action {
        Move::Propose => {
            let made = game.propose().await?;
            format!("The council drafted {} proposals.", made.len())
        }
        Move::Scry(id) => {
            let scried = game.scry(id).await?;
            format!("The oracle has spoken on “{}”.", scried.title)
        }
        Move::Decide(id, accept) => {
            let decided = game.decide(id, accept).await?;
            let verb = if accept { "Accepted" } else { "Rejected" };
            format!("{verb}: “{}”.", decided.title)
        }
        Move::Tick(at) => {
            let record = game.tick(at).await?;
            match record.fresh {
                Some(false) => format!(
                    "Tick {} had already been taken (in another tab?); nothing changed.",
                    record.tick
                ),
                _ => format!(
                    "Tick {}: {} proposals applied.",
                    record.tick,
                    record.applied.len()
                ),
            }
        }
    })
}

/// A delta said briefly: `food +20, gold −5`.
fn delta_text(proposal: &Proposal) -> String {
    let parts: Vec<String> = RESOURCES
        .into_iter()
        .filter_map(|r| {
            let change = proposal.change(r);
            (change != 0).then(|| {
                let sign = if change > 0 { "+" } else { "−" };
                format!("{} {sign}{}", r.name(), change.abs())
            })
        })
        .collect();
    if parts.is_empty() {
        "no change".into()
    } else {
        parts.join(", ")
    }
}

/// The polyline points of one resource over the history, scaled to its own largest
/// value so every line moves visibly.
fn points(history: &[Record], resource: Resource) -> String {
    let most = history
        .iter()
        .map(|h| h.resources.get(resource))
        .max()
        .unwrap_or(0)
        .max(1);
    let steps = (history.len() as i64 - 1).max(1);
    history
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let x = i as i64 * CHART_WIDTH / steps;
            let y = CHART_HEIGHT - h.resources.get(resource) * CHART_HEIGHT / most;
            format!("{x},{y}")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether the table shows `proposal`: undecided, awaiting the tick, or decided or
/// applied at the current tick.
fn shown(proposal: &Proposal, tick: i64) -> bool {
    matches!(proposal.status, Status::Pending | Status::Accepted)
        || proposal.tick == tick
        || proposal.applied_tick == Some(tick)
}

/// The guild council, over the store and model `settings` name.
#[component]
pub fn GuildView(
    /// The settings naming the guild's store and the council's model.
    settings: Settings,
) -> impl IntoView {
    let game = match demo::guild::game(&settings) {
        Ok(game) => Rc::new(game),
        Err(error) => {
            return view! {
                <section class="guild" aria-label="Guild council">
                    <p class="guild-message" role="alert">{format!("The guild cannot be opened: {error}")}</p>
                </section>
            }
            .into_any();
        }
    };
    let game = StoredValue::new_local(game);
    let board = RwSignal::new(None::<Board>);
    let message = RwSignal::new(String::new());
    let busy = RwSignal::new(true);
    // The board is read again after every move, and the move's words shown with it.
    let reload = move |said: String| async move {
        match game.get_value().board().await {
            Ok(now) => {
                board.set(Some(now));
                message.set(said);
            }
            Err(error) => message.set(format!("{said} {error}").trim_start().to_owned()),
        }
        busy.set(false);
    };
    spawn_local(reload(String::new()));
    let act = move |action: Move| {
        busy.set(true);
        message.set(String::new());
        spawn_local(async move {
            let said = play(&game.get_value(), action).await;
            reload(said.unwrap_or_else(|error| error.to_string())).await;
        });
    };
    let tick_now = move || board.with(|b| b.as_ref().map_or(0, |b| b.guild.tick));
    view! {
        <section class="guild" aria-label="Guild council">
            <h2>"Guild council"</h2>
            <p class="guild-tick">{move || format!("Tick {}", tick_now())}</p>
            <dl class="guild-resources">
                {RESOURCES.into_iter().map(|r| view! {
                    <div class="guild-resource" data-resource=r.name()>
                        <dt>{r.name()}</dt>
                        <dd>{move || board.with(|b| b.as_ref().map(|b| b.guild.resources.get(r).to_string()))}</dd>
                    </div>
                }).collect_view()}
            </dl>
            <svg class="guild-chart" role="img" aria-label="The resources over the ticks"
                viewBox=format!("-2 -2 {} {}", CHART_WIDTH + 4, CHART_HEIGHT + 4)>
                {RESOURCES.into_iter().map(|r| view! {
                    <polyline class="guild-line" data-resource=r.name() fill="none"
                        points=move || board.with(|b| b.as_ref().map(|b| points(&b.history, r)).unwrap_or_default()) />
                }).collect_view()}
            </svg>
            <div class="guild-actions">
                <button type="button" class="guild-propose" disabled=move || busy.get()
                    on:click=move |_| act(Move::Propose)>"Propose"</button>
                <button type="button" class="guild-next-tick" disabled=move || busy.get() || board.with(Option::is_none)
                    on:click=move |_| act(Move::Tick(tick_now()))>"Tick"</button>
            </div>
            <p class="guild-message" role="status">{move || message.get()}</p>
            <ol class="guild-proposals">
                {move || board.get().map(|b| {
                    let tick = b.guild.tick;
                    b.proposals.into_iter().filter(|p| shown(p, tick)).map(|p| {
                        let id = p.id;
                        let pending = p.status == Status::Pending;
                        let status = format!("{:?}", p.status).to_lowercase();
                        let label = status.clone();
                        view! {
                            <li class="guild-proposal" data-status=status>
                                <h3>{p.title.clone()}</h3>
                                <p>{p.description.clone()}</p>
                                <p class="guild-delta">{delta_text(&p)}</p>
                                {p.risk_note.clone().map(|note| view! { <p class="guild-risk">{note}</p> })}
                                {if pending {
                                    view! {
                                        <div class="guild-decree">
                                            <button type="button" class="guild-scry" disabled=move || busy.get() on:click=move |_| act(Move::Scry(id))>"Scry"</button>
                                            <button type="button" class="guild-accept" disabled=move || busy.get() on:click=move |_| act(Move::Decide(id, true))>"Accept"</button>
                                            <button type="button" class="guild-reject" disabled=move || busy.get() on:click=move |_| act(Move::Decide(id, false))>"Reject"</button>
                                        </div>
                                    }.into_any()
                                } else {
                                    view! { <p class="guild-status">{label}</p> }.into_any()
                                }}
                            </li>
                        }
                    }).collect_view()
                })}
            </ol>
        </section>
    }
    .into_any()
}
