//! The guild council's view: the guild's resources, the council's proposals with
//! Propose (for the guild's name, when given), Scry, Accept and Reject, the Tick, and
//! the history as one SVG chart on a shared, labelled scale (each tick's values on
//! hover and by the arrow keys) with a table of the same numbers. Focus stays on the control a move started from, or
//! goes to its result when that control is gone. With no model set up it says that the
//! council plays by its own rules (seed 001's fallback).
//! It renders the [`Board`] the game returns and calls the game's moves; the rules,
//! the council and the store are below (`crate::guild`, `crate::demo::guild`).

use std::rc::Rc;

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::app::settings::Settings;
use crate::demo;
use crate::guild::{Board, Game, GameError, Proposal, RESOURCES, Record, Resource, Status};

/// The plot area, in the chart's own units, and the margins its axes are drawn in.
const CHART_WIDTH: i64 = 300;
const CHART_HEIGHT: i64 = 120;
const LEFT: i64 = 40;
const TOP: i64 = 8;
const BOTTOM: i64 = 34;

/// A move of the player.
#[derive(Clone, Copy)]
enum Move {
    Propose,
    Scry(i64),
    Decide(i64, bool),
    Tick(i64),
}

/// What a finished move says to the player; `name` is the guild's name the player
/// gave, which Propose drafts for.
async fn play(game: &Game, action: Move, name: &str) -> Result<String, GameError> {
    Ok(match action {
        Move::Propose => {
            let made = game.propose(Some(name)).await?;
            let by = if game.offline() {
                " It played by its own rules: no model is set up."
            } else {
                ""
            };
            format!("The council drafted {}.{by}", proposals(made.len()))
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
                    "Tick {}: {} applied.",
                    record.tick,
                    proposals(record.applied.len())
                ),
            }
        }
    })
}

/// "1 proposal", "2 proposals".
fn proposals(n: usize) -> String {
    if n == 1 {
        "1 proposal".to_owned()
    } else {
        format!("{n} proposals")
    }
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

/// The top of the shared scale: the largest value any resource reached, rounded up to
/// a multiple of 50 (at least 50), so the axis reads in round numbers.
fn scale_top(history: &[Record]) -> i64 {
    let most = history
        .iter()
        .flat_map(|h| RESOURCES.map(|r| h.resources.get(r)))
        .max()
        .unwrap_or(0)
        .max(1);
    (most + 49) / 50 * 50
}

/// Where the `i`th of `n` ticks sits on the x axis.
fn x_of(i: usize, n: usize) -> i64 {
    let steps = (n as i64 - 1).max(1);
    LEFT + i as i64 * CHART_WIDTH / steps
}

/// Where `value` sits on the y axis of a scale up to `top`.
fn y_of(value: i64, top: i64) -> i64 {
    TOP + CHART_HEIGHT - value.clamp(0, top) * CHART_HEIGHT / top.max(1)
}

/// The polyline points of one resource over the history, on the scale every line
/// shares, so lines compare.
fn points(history: &[Record], resource: Resource) -> String {
    let top = scale_top(history);
    history
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let x = x_of(i, history.len());
            let y = y_of(h.resources.get(resource), top);
            format!("{x},{y}")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// One tick's values, said: "Tick 2: gold 100, food 80, morale 55, influence 10".
fn tick_text(record: &Record) -> String {
    let values: Vec<String> = RESOURCES
        .into_iter()
        .map(|r| format!("{} {}", r.name(), record.resources.get(r)))
        .collect();
    format!("Tick {}: {}", record.tick, values.join(", "))
}

/// The ticks the x axis labels: all of them up to 8, else about 6 evenly spaced and
/// the last.
fn labelled_ticks(n: usize) -> Vec<usize> {
    if n <= 8 {
        return (0..n).collect();
    }
    let every = n.div_ceil(6);
    let mut shown: Vec<usize> = (0..n).step_by(every).collect();
    if shown.last() != Some(&(n - 1)) {
        shown.push(n - 1);
    }
    shown
}

/// Gives focus to the first element `selector` finds in the guild panel, once drawn.
fn focus_after(selector: String) {
    request_animation_frame(move || {
        let found = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| {
                d.query_selector(&format!("section.guild {selector}"))
                    .ok()
                    .flatten()
            })
            .and_then(|e| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(e).ok());
        if let Some(element) = found {
            let _ = element.focus();
        }
    });
}

/// Where focus goes once `action` is done: the control it came from when it is still
/// there (Propose, Tick, a proposal's Scry), else its result (the decided proposal's
/// status).
fn focus_for(action: Move) -> String {
    match action {
        Move::Propose => ".guild-propose".into(),
        Move::Tick(_) => ".guild-next-tick".into(),
        Move::Scry(id) => format!(".guild-proposal[data-id='{id}'] .guild-scry"),
        Move::Decide(id, _) => format!(".guild-proposal[data-id='{id}'] .guild-status"),
    }
}

/// Whether the table shows `proposal`: undecided, awaiting the tick, or decided or
/// applied at the current tick.
fn shown(proposal: &Proposal, tick: i64) -> bool {
    matches!(proposal.status, Status::Pending | Status::Accepted)
        || proposal.tick == tick
        || proposal.applied_tick == Some(tick)
}

super::part::part!(
    guild,
    preload,
    pub(super) fn open(settings: Settings) {
        view! { <GuildView settings=settings /> }.into_any()
    }
);

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
    let offline = game.offline();
    let game = StoredValue::new_local(game);
    let board = RwSignal::new(None::<Board>);
    // The guild's name Propose drafts for (seed 001's `{ guild?: string }`), read
    // from its field when a move starts.
    let name = NodeRef::<leptos::html::Input>::new();
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
    // A busy control says so (aria-disabled) and keeps focus, where `disabled` would
    // drop it to the page.
    let act = move |action: Move| {
        if busy.get_untracked() {
            return;
        }
        busy.set(true);
        message.set(String::new());
        let named = name.get_untracked().map(|field| field.value());
        spawn_local(async move {
            let said = play(&game.get_value(), action, named.as_deref().unwrap_or("")).await;
            reload(said.unwrap_or_else(|error| error.to_string())).await;
            focus_after(focus_for(action));
        });
    };
    let busy_text = move || busy.get().to_string();
    // The tick the chart reads out (hover or arrow keys); `None`: the latest.
    let picked = RwSignal::new(None::<usize>);
    let history_len = move || board.with(|b| b.as_ref().map_or(0, |b| b.history.len()));
    let readout = move || {
        board.with(|b| {
            let history = &b.as_ref()?.history;
            let at = picked.get().unwrap_or(history.len().saturating_sub(1));
            history.get(at).map(tick_text)
        })
    };
    let chart_keys = move |ev: leptos::ev::KeyboardEvent| {
        let n = history_len();
        if n == 0 {
            return;
        }
        let at = picked.get_untracked().unwrap_or(n - 1);
        let next = match ev.key().as_str() {
            "ArrowLeft" | "ArrowDown" => at.saturating_sub(1),
            "ArrowRight" | "ArrowUp" => (at + 1).min(n - 1),
            "Home" => 0,
            "End" => n - 1,
            _ => return,
        };
        ev.prevent_default();
        picked.set(Some(next));
    };
    let tick_now = move || board.with(|b| b.as_ref().map_or(0, |b| b.guild.tick));
    view! {
        <section class="guild" aria-label="Guild council">
            <h2 tabindex="-1">"Guild council"</h2>
            <p class="guild-offline" hidden=!offline>"No model is set up, so the council drafts and forecasts by its own rules. Choose a model in Settings to have it asked."</p>
            <p class="guild-tick">{move || format!("Tick {}", tick_now())}</p>
            <dl class="guild-resources">
                {RESOURCES.into_iter().map(|r| view! {
                    <div class="guild-resource" data-resource=r.name()>
                        <dt>{r.name()}</dt>
                        <dd>{move || board.with(|b| b.as_ref().map(|b| b.guild.resources.get(r).to_string()))}</dd>
                    </div>
                }).collect_view()}
            </dl>
            <figure class="guild-history">
                <figcaption id="guild-chart-caption">"Resources over the ticks"</figcaption>
                <svg class="guild-chart" role="img" tabindex="0"
                    aria-labelledby="guild-chart-caption guild-readout"
                    aria-keyshortcuts="ArrowLeft ArrowRight Home End"
                    viewBox=format!("0 0 {} {}", LEFT + CHART_WIDTH + 12, TOP + CHART_HEIGHT + BOTTOM)
                    on:keydown=chart_keys
                    on:mouseleave=move |_| picked.set(None)>
                    {move || board.with(|b| b.as_ref().map(|b| {
                        let top = scale_top(&b.history);
                        let n = b.history.len();
                        let bottom = TOP + CHART_HEIGHT;
                        let grid = [0, top / 2, top].map(|v| view! {
                            <g class="guild-axis-y">
                                <line class="guild-grid" x1=LEFT y1=y_of(v, top) x2=LEFT + CHART_WIDTH y2=y_of(v, top) />
                                <text x=LEFT - 6 y=y_of(v, top) + 4 text-anchor="end">{v.to_string()}</text>
                            </g>
                        });
                        let ticks = labelled_ticks(n).into_iter().filter_map(|i| {
                            let record = b.history.get(i)?;
                            Some(view! {
                                <text class="guild-axis-x" x=x_of(i, n) y=bottom + 14 text-anchor="middle">{record.tick.to_string()}</text>
                            })
                        }).collect_view();
                        // Hover targets, one column per tick.
                        let width = (CHART_WIDTH / (n as i64 - 1).max(1)).max(8);
                        let columns = (0..n).map(|i| view! {
                            <rect class="guild-hover" x=x_of(i, n) - width / 2 y=TOP width=width height=CHART_HEIGHT
                                on:mouseenter=move |_| picked.set(Some(i)) />
                        }).collect_view();
                        view! {
                            {grid}
                            <line class="guild-axis" x1=LEFT y1=bottom x2=LEFT + CHART_WIDTH y2=bottom />
                            <line class="guild-axis" x1=LEFT y1=TOP x2=LEFT y2=bottom />
                            {ticks}
                            <text class="guild-axis-title" x=LEFT + CHART_WIDTH / 2 y=bottom + 30 text-anchor="middle">"Tick"</text>
                            <text class="guild-axis-title" x=-(TOP + CHART_HEIGHT / 2) y="10" text-anchor="middle" transform="rotate(-90)">"Amount"</text>
                            {columns}
                        }
                    }))}
                    {RESOURCES.into_iter().map(|r| view! {
                        <polyline class="guild-line" data-resource=r.name() fill="none"
                            points=move || board.with(|b| b.as_ref().map(|b| points(&b.history, r)).unwrap_or_default()) />
                    }).collect_view()}
                    {move || board.with(|b| b.as_ref().and_then(|b| {
                        let n = b.history.len();
                        let at = picked.get().unwrap_or(n.checked_sub(1)?);
                        let record = b.history.get(at)?;
                        let top = scale_top(&b.history);
                        let x = x_of(at, n);
                        Some(view! {
                            <g class="guild-cursor">
                                <line x1=x y1=TOP x2=x y2=TOP + CHART_HEIGHT />
                                {RESOURCES.into_iter().map(|r| view! {
                                    <circle class="guild-dot" data-resource=r.name() cx=x cy=y_of(record.resources.get(r), top) r="3.5" />
                                }).collect_view()}
                            </g>
                        })
                    }))}
                </svg>
                <p id="guild-readout" class="guild-readout" aria-live="polite">{readout}</p>
                <details class="guild-table">
                    <summary>"The history as a table"</summary>
                    <div class="guild-table-scroll" tabindex="0" role="region" aria-label="The history as a table">
                        <table>
                            <thead><tr>
                                <th scope="col">"Tick"</th>
                                {RESOURCES.into_iter().map(|r| view! { <th scope="col">{r.name()}</th> }).collect_view()}
                            </tr></thead>
                            <tbody>{move || board.with(|b| b.as_ref().map(|b| b.history.iter().map(|h| view! {
                                <tr>
                                    <th scope="row">{h.tick.to_string()}</th>
                                    {RESOURCES.into_iter().map(|r| view! { <td>{h.resources.get(r).to_string()}</td> }).collect_view()}
                                </tr>
                            }).collect_view()))}</tbody>
                        </table>
                    </div>
                </details>
            </figure>
            <div class="guild-actions">
                <label class="guild-name">"Guild name (optional) "
                    <input type="text" maxlength=crate::guild::game::MOST_NAME.to_string() autocomplete="off" node_ref=name />
                </label>
                <button type="button" class="guild-propose" aria-disabled=busy_text
                    on:click=move |_| act(Move::Propose)>"Propose"</button>
                <button type="button" class="guild-next-tick" aria-disabled=move || (busy.get() || board.with(Option::is_none)).to_string()
                    on:click=move |_| if board.with_untracked(Option::is_some) { act(Move::Tick(tick_now())) }>"Tick"</button>
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
                            <li class="guild-proposal" data-status=status data-id=id>
                                <h3>{p.title.clone()}</h3>
                                <p>{p.description.clone()}</p>
                                <p class="guild-delta">{delta_text(&p)}</p>
                                {p.risk_note.clone().map(|note| view! { <p class="guild-risk">{note}</p> })}
                                {if pending {
                                    view! {
                                        <div class="guild-decree">
                                            <button type="button" class="guild-scry" aria-disabled=busy_text on:click=move |_| act(Move::Scry(id))>"Scry"</button>
                                            <button type="button" class="guild-accept" aria-disabled=busy_text on:click=move |_| act(Move::Decide(id, true))>"Accept"</button>
                                            <button type="button" class="guild-reject" aria-disabled=busy_text on:click=move |_| act(Move::Decide(id, false))>"Reject"</button>
                                        </div>
                                    }.into_any()
                                } else {
                                    view! { <p class="guild-status" tabindex="-1">{label}</p> }.into_any()
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
