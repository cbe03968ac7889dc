//! The Leptos interface: the conversation with its steps, the composer, the
//! inspector, approvals and settings.
//!
//! Views only render signals and call [`Chat`]'s actions; the chat owns the
//! agent and turns driver events into those signals.

mod account;
mod chat;
mod composer;
mod follow;
mod guild;
mod inspector;
mod kept_models;
mod load_character;
mod markdown;
mod panel;
pub(crate) mod part;
mod settings;
mod shortcuts;
mod start;
mod steps;
mod talk_to;
mod top_bar;
mod turn;
mod world;

use leptos::prelude::*;

pub use chat::{Chat, TurnHandle};
pub use composer::{Completion, Composer};
pub use follow::Follow;
pub use guild::GuildView;
pub use inspector::{Inspector, InspectorButton, InspectorPanel};
pub use markdown::Markdown;
pub use settings::SettingsPanel;
pub use start::start;
pub use steps::StepList;
pub use turn::Turn;

use crate::demo::sample_prompts;
use panel::{close_on_escape, restore_scroll, reveal};
use part::{Part, preload};
use talk_to::TalkTo;
use top_bar::{MenuButton, TopMenu, focus_back};

/// Copies text to the clipboard (best effort: the page may not be allowed to).
fn copy_text(text: &str) {
    crate::web::copy_to_clipboard(text);
}

/// Which side panel is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Panel {
    None,
    Conversations,
    Settings,
    Guild,
}

/// The whole demo page.
#[component]
pub fn App() -> impl IntoView {
    let chat = Chat::restore();
    chat.prepare();
    provide_context(chat);
    let focus = ComposerFocus::new();
    provide_context(focus);
    shortcuts::install(chat, focus);
    let settings_button = NodeRef::<leptos::html::Button>::new();
    let history_button = NodeRef::<leptos::html::Button>::new();
    let guild_button = NodeRef::<leptos::html::Button>::new();
    let world_button = NodeRef::<leptos::html::Button>::new();
    let inspector_panel = InspectorPanel::new();
    let menu = TopMenu::new();
    let panel = RwSignal::new(Panel::None);
    let toggle = move |which: Panel| {
        move |_| {
            panel.update(|p| *p = if *p == which { Panel::None } else { which });
            match panel.get_untracked() {
                Panel::Conversations => reveal("section.conversations"),
                Panel::Settings => reveal("#settings-heading"),
                Panel::Guild => reveal("section.guild h2"),
                Panel::None => restore_scroll(),
            }
        }
    };
    let empty = move || chat.turns.with(Vec::is_empty);
    let show_world = RwSignal::new(false);
    view! {
        <div class="familiar-app">
            <header class="familiar-header">
                <div>
                    <h1>"Familiar"</h1>
                    <p class="familiar-tagline">
                        // "No server" only while nothing is: a Supabase world is one.
                        {move || chat.settings.with(|s| {
                            let world = match s.backend {
                                crate::app::settings::Backend::Supabase { .. } => Some(" · Supabase world"),
                                crate::app::settings::Backend::Local => None,
                            };
                            let model = match s.model {
                                crate::app::settings::ModelSource::Rules => "rules model",
                                crate::app::settings::ModelSource::Proxy(_) => "model proxy",
                                crate::app::settings::ModelSource::Local(_) => "local model",
                            };
                            let served = matches!(s.model, crate::app::settings::ModelSource::Proxy(_)) || world.is_some();
                            format!("An agent that lives in this tab · {model}{}{}", world.unwrap_or_default(), if served { "" } else { " · no server" })
                        })}
                    </p>
                </div>
                <nav class="familiar-actions" aria-label="Conversation actions">
                    <TalkTo chat=chat />
                    <button type="button" class="new-conversation" aria-keyshortcuts=shortcuts::NEW title=format!("New conversation ({})", shortcuts::NEW) on:click=move |_| {
                        chat.new_conversation();
                        focus.give();
                    }>"New"</button>
                    <span class="top-menu-wrap" on:keydown=move |ev| menu.keydown(&ev) on:focusout=move |ev| menu.focusout(&ev)>
                        <MenuButton menu=menu />
                        <div node_ref=menu.list id=top_bar::MENU_ID class="top-menu" class:open=move || menu.is_open() on:click=move |ev| menu.clicked(&ev)>
                            <button node_ref=history_button type="button" class="show-conversations" aria-expanded=move || (panel.get() == Panel::Conversations).to_string() on:click=toggle(Panel::Conversations)>"History"</button>
                            <button node_ref=guild_button type="button" class="show-guild" aria-expanded=move || (panel.get() == Panel::Guild).to_string() on:click=toggle(Panel::Guild) on:pointerenter=|_| preload(guild::preload) on:focus=|_| preload(guild::preload)>"Guild"</button>
                            <button node_ref=world_button type="button" class="show-world" aria-expanded=move || show_world.get().to_string() on:pointerenter=|_| preload(world::preload) on:focus=|_| preload(world::preload) on:click=move |_| {
                                show_world.update(|w| *w = !*w);
                                if show_world.get_untracked() {
                                    reveal("section.world h2");
                                } else {
                                    restore_scroll();
                                }
                            }>"World"</button>
                            <button node_ref=settings_button type="button" class="show-settings" aria-expanded=move || (panel.get() == Panel::Settings).to_string() on:click=toggle(Panel::Settings) on:pointerenter=|_| preload(settings::preload) on:focus=|_| preload(settings::preload)>"Settings"</button>
                            <InspectorButton panel=inspector_panel />
                        </div>
                    </span>
                </nav>
            </header>
            <Show when=move || panel.get() == Panel::Conversations>
                <ConversationList chat=chat on_open=Callback::new(move |()| {
                    panel.set(Panel::None);
                    focus.give();
                }) on_close=Callback::new(move |()| {
                    panel.set(Panel::None);
                    restore_scroll();
                    focus_back(history_button.get_untracked().as_deref());
                }) />
            </Show>
            <Show when=move || panel.get() == Panel::Settings>
                <Part name="settings" open=move || settings::open(chat, Callback::new(move |()| {
                    panel.set(Panel::None);
                    restore_scroll();
                    focus_back(settings_button.get_untracked().as_deref());
                })) />
            </Show>
            <Show when=move || panel.get() == Panel::Guild>
                <div class="panel-keys" on:keydown=close_on_escape(move || panel.set(Panel::None), guild_button)>
                    <Part name="Guild" open=move || guild::open(chat.settings.get_untracked()) />
                </div>
            </Show>
            <Show when=move || chat.notices.with(|n| !n.is_empty())>
                <div class="familiar-notice" role="alert">
                    <ul>
                        {move || chat.notices.get().into_iter().map(|text| view! { <li>{text}</li> }).collect_view()}
                    </ul>
                    <button type="button" class="dismiss-notice" on:click=move |_| chat.dismiss_notices()>"Dismiss"</button>
                </div>
            </Show>
            {move || chat.interrupted.get().into_iter().map(|run| {
                let (resume, discard) = (run.conversation.clone(), run.conversation);
                view! {
                    <div class="familiar-notice" role="status">
                        "A reply was cut off when the page closed. "{run.refused.clone().map(|why| format!("It cannot be resumed: {why}. "))}
                        {run.refused.is_none().then(|| view! { <button type="button" on:click=move |_| chat.resume(&resume)>"Resume"</button> })}
                        <button type="button" on:click=move |_| chat.discard(&discard)>"Discard"</button>
                    </div>
                }
            }).collect_view()}
            <Show when=move || show_world.get()>
                <div class="panel-keys" on:keydown=close_on_escape(move || show_world.set(false), world_button)>
                    <Part name="World" open=move || world::open(chat) />
                </div>
            </Show>
            <div class="familiar-body">
                <main class="familiar">
                    <Show when=empty>
                        <div class="empty-state">
                            <p>{move || {
                                let character = chat.settings.with(|s| s.character.clone());
                                if sample_prompts(character.as_deref()).is_empty() {
                                    format!("Say hello to {}.", turn::speaker(chat))
                                } else {
                                    "Try one of these:".to_owned()
                                }
                            }}</p>
                            <ul class="sample-prompts">
                                {move || {
                                    let character = chat.settings.with(|s| s.character.clone());
                                    sample_prompts(character.as_deref()).iter().map(|prompt| view! {
                                        <li><button type="button" class="sample-prompt" on:click=move |_| {
                                            chat.send((*prompt).to_owned());
                                            focus.give();
                                        }>{*prompt}</button></li>
                                    }).collect_view()
                                }}
                            </ul>
                            // The demo's own page links its example game (README: A game
                            // with NPC agents); a host's page has its own links.
                            <Show when=|| !crate::web::in_host_page()>
                                <p class="familiar-examples">
                                    "Or play " <a href="public/examples/market.html">"Mossbrook Market"</a>
                                    ", a game whose NPCs are agents, or build a story with the "
                                    <a href="public/examples/copilot.html">"story copilot"</a> "."
                                </p>
                            </Show>
                        </div>
                    </Show>
                    <Chat chat=chat />
                </main>
                <Inspector state=chat.inspector panel=inspector_panel character=Signal::derive(move || chat.settings.with(|s| s.character.is_some())) />
            </div>
        </div>
    }
}

/// A host's agent as a chat widget: its conversation, approvals and composer.
#[component]
pub fn Widget(
    /// The chat to show.
    chat: Chat,
) -> impl IntoView {
    provide_context(chat);
    view! {
        <div class="familiar-app familiar-widget">
            <main class="familiar">
                <Chat chat=chat />
            </main>
        </div>
    }
}

/// The message box, for the views that hand focus back to it after their action
/// (approve, stop, retry, a sample prompt, a new or reopened conversation).
#[derive(Clone, Copy)]
pub struct ComposerFocus(NodeRef<leptos::html::Textarea>);

impl ComposerFocus {
    fn new() -> Self {
        Self(NodeRef::new())
    }

    /// Puts the caret in the composer.
    pub fn give(self) {
        if let Some(input) = self.0.get_untracked() {
            let _ = input.focus();
        }
    }

    /// Replaces the composer's text with `text` (as typing would: the composer hears an
    /// `input` event) and puts the caret at its end.
    pub fn fill(self, text: &str) {
        if let Some(input) = self.0.get_untracked() {
            input.set_value(text);
            if let Ok(event) = web_sys::Event::new("input") {
                let _ = input.dispatch_event(&event);
            }
            let _ = input.focus();
        }
    }
}

/// Hands focus to the composer, when the view is inside a chat.
fn focus_composer() {
    if let Some(focus) = use_context::<ComposerFocus>() {
        focus.give();
    }
}

/// The conversation's turns and the composer under them. The list follows its
/// bottom while the reader is there; a finished answer is announced once, apart.
#[component]
fn Chat(
    /// The chat whose conversation to show and send to.
    chat: Chat,
) -> impl IntoView {
    let focus = use_context::<ComposerFocus>().unwrap_or_else(|| {
        let focus = ComposerFocus::new();
        provide_context(focus);
        focus
    });
    let list = NodeRef::<leptos::html::Ol>::new();
    let (following, set_following) = signal(true);
    let follow = StoredValue::new_local(None::<Follow>);
    list.on_load(move |list| {
        follow.set_value(Some(Follow::new(&list, move |on| {
            set_following.set(on);
        })));
    });
    on_cleanup(move || follow.set_value(None));
    let jump = move || follow.with_value(|f| f.as_ref().map(Follow::jump));
    // Earlier turns are drawn above the first one on screen, which stays where it was;
    // focus stays on the button, or moves to the list once nothing is left to show.
    let show_earlier = move |_| {
        let first = list
            .get_untracked()
            .and_then(|list| list.query_selector(":scope > li.turn").ok().flatten());
        let before = first.as_ref().map(|f| f.get_bounding_client_rect().top());
        chat.show_earlier();
        request_animation_frame(move || {
            if chat.hidden.get_untracked() == 0
                && let Some(list) = list.get_untracked()
            {
                let _ = list.focus();
            }
            // Measured after focus moved, which may have scrolled too.
            if let (Some(first), Some(before)) = (first, before) {
                let moved = first.get_bounding_client_rect().top() - before;
                follow.with_value(|f| f.as_ref().map(|f| f.scroll_by(moved)));
            }
        });
    };
    view! {
        <Show when=move || { chat.earlier_messages() > 0 }>
            <button type="button" class="show-earlier" on:click=show_earlier>
                {move || format!("Show {} earlier messages", chat.earlier_messages())}
            </button>
        </Show>
        <ol node_ref=list class="conversation" aria-label="Messages" tabindex="-1">
            <For each=move || chat.shown_turns() key=|turn| (turn.id, turn.interaction) let:turn>
                <Turn interaction=turn.interaction />
            </For>
            {move || chat.queued.get().into_iter().map(|text| view! {
                <li class="turn turn-queued" data-status="queued">
                    <div class="message message-user">
                        <span class="sr-only">"You said:"</span>
                        <p>{text}</p>
                        <span class="message-time">"Sends after your decision"</span>
                    </div>
                </li>
            }).collect_view()}
        </ol>
        // The conversation's tokens and cost, as its turns' model calls were counted.
        {move || {
            let total = chat.turns.with(|turns| {
                let mut total = crate::llm::usage::Tally::default();
                for turn in turns {
                    turn.interaction.with(|i| total.add(&i.usage));
                }
                total
            });
            (!total.is_empty()).then(|| view! {
                <p class="conversation-usage">"This conversation: " {total.words()}</p>
            })
        }}
        <p class="sr-only" role="status" aria-live="polite">{move || chat.announcement.get()}</p>
        <Show when=move || chat.allowed.with(|a| !a.is_empty())>
            <ul class="always-allowed" aria-label="Allowed without asking in this conversation">
                {move || chat.allowed.get().into_iter().map(|(agent, tool)| {
                    let label = format!("Ask again before {tool}");
                    let (a, t) = (agent.clone(), tool.clone());
                    view! {
                        <li>
                            "Allowed without asking here: " <code>{tool}</code> " (" {agent} ") "
                            <button type="button" class="ask-again" aria-label=label on:click=move |_| chat.ask_again(&a, &t)>
                                "Ask again"
                            </button>
                        </li>
                    }
                }).collect_view()}
            </ul>
        </Show>
        // The composer and the way back to the end share an opaque dock at the window's
        // bottom: the button never floats over a message.
        <div class="composer-dock" on:keydown=move |ev| {
            // Escape leaves an edit (unless the composer's list took it first).
            if ev.key() == "Escape" && !ev.default_prevented() && chat.editing.get_untracked().is_some() {
                ev.prevent_default();
                chat.cancel_editing();
                focus.fill("");
            }
        }>
            <Show when=move || !following.get() && !chat.turns.with(Vec::is_empty)>
                <button type="button" class="jump-to-latest" on:click=move |_| {
                    jump();
                    focus.give();
                }>"Jump to latest ↓"</button>
            </Show>
            <Show when=move || chat.editing.with(Option::is_some)>
                <div class="editing-note">
                    <p role="status">{move || chat.editing_note().unwrap_or_default()}</p>
                    <button type="button" class="cancel-edit" on:click=move |_| {
                        chat.cancel_editing();
                        focus.fill("");
                    }>"Cancel editing"</button>
                </div>
            </Show>
            <Composer
                busy=chat.busy
                on_send=move |text| {
                    jump();
                    chat.submit(text)
                }
                on_stop=Callback::new(move |()| {
                    chat.stop();
                    focus.give();
                })
                completions=Signal::derive(move || chat.completions())
                recall=Callback::new(move |()| chat.edit_last())
                placeholder=Signal::derive(move || match chat.settings.with(|s| s.character.is_some()) {
                    true => format!("Say something to {}…", turn::speaker(chat)),
                    false => "Ask something — “What time is it?”".to_owned(),
                })
                input=focus.0
            />
        </div>
    }
}

/// A widget in a host's element; dropping it stops its updates and takes it out.
pub struct Mounted {
    app: crate::app::Session,
    listener: std::rc::Rc<std::cell::Cell<Option<crate::app::ListenerId>>>,
    _handle: Box<dyn std::any::Any>,
}

impl Drop for Mounted {
    fn drop(&mut self) {
        if let Some(listener) = self.listener.take() {
            self.app.off(listener);
        }
    }
}

/// Context: the views are a widget in a host's page (`mount_widget`), whose scripts
/// may dispatch clicks; a decision takes a trusted one.
#[derive(Clone, Copy)]
pub struct InHostPage;

/// Mounts a widget showing `app` into `element`.
pub fn mount_widget(element: web_sys::HtmlElement, app: crate::app::Session) -> Mounted {
    let listener = std::rc::Rc::new(std::cell::Cell::new(None));
    let (shown, id) = (app.clone(), std::rc::Rc::clone(&listener));
    let handle = leptos::mount::mount_to(element, move || {
        provide_context(InHostPage);
        let (chat, listener) = Chat::attach(shown);
        id.set(Some(listener));
        view! { <Widget chat=chat /> }
    });
    Mounted {
        app,
        listener,
        _handle: Box::new(handle),
    }
}

/// Past conversations: open or delete one (with an undo for the last deleted), each
/// with when it was last changed. Escape closes the list; after a deletion focus
/// goes to the next conversation (or the composer, when none is left).
#[component]
fn ConversationList(
    /// The chat whose conversations to list.
    chat: Chat,
    /// Called after a conversation is opened.
    on_open: Callback<()>,
    /// Closes the list (Escape).
    on_close: Callback<()>,
) -> impl IntoView {
    let section = NodeRef::<leptos::html::Section>::new();
    let composer = use_context::<ComposerFocus>();
    // Opened, the list takes focus: its first conversation is a Tab away.
    section.on_load(|section| {
        let _ = section.focus();
    });
    let focus_after_delete = move |index: u32| {
        request_animation_frame(move || {
            // The one that took the deleted one's place, or the new last one.
            let next = section.get_untracked().and_then(|section| {
                let at = format!("ul > li:nth-child({}) .open-conversation", index + 1);
                let node = section.query_selector(&at).ok().flatten().or_else(|| {
                    section
                        .query_selector("ul > li:last-child .open-conversation")
                        .ok()
                        .flatten()
                })?;
                wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(node).ok()
            });
            match next {
                Some(item) => {
                    let _ = item.focus();
                }
                None => {
                    if let Some(composer) = composer {
                        composer.give();
                    }
                }
            }
        });
    };
    view! {
        <section
            node_ref=section
            class="conversations"
            aria-label="Past conversations"
            tabindex="-1"
            on:keydown=move |ev| {
                if ev.key() == "Escape" {
                    ev.prevent_default();
                    on_close.run(());
                }
            }
        >
            <Show when=move || chat.deleted.with(Option::is_some)>
                <p class="deleted-note" role="status">
                    {move || chat.deleted.with(|d| d.as_ref().map(|d| format!("Deleted “{}”.", d.entry.title)))}
                    " "
                    <button type="button" class="undo-delete" on:click=move |_| chat.undo_delete()>"Undo"</button>
                </p>
            </Show>
            <Show when=move || chat.saved.with(Vec::is_empty)>
                <p class="no-conversations">"No saved conversations yet."</p>
            </Show>
            <ul>
                {move || chat.saved.get().into_iter().enumerate().map(|(index, c)| {
                    let open_id = c.id.clone();
                    let delete_id = c.id.clone();
                    let current = chat.conversation_id.get() == c.id;
                    let delete_label = format!("Delete “{}”", c.title);
                    let index = u32::try_from(index).unwrap_or(u32::MAX);
                    view! {
                        <li class:current=current>
                            <button
                                type="button"
                                class="open-conversation"
                                aria-current=current.then_some("true")
                                on:click=move |_| {
                                    chat.open(&open_id);
                                    on_open.run(());
                                }
                            >
                                <span class="conversation-title">{c.title}</span>
                                <time class="conversation-date">{turn::when(c.updated_ms)}</time>
                            </button>
                            <button type="button" class="delete-conversation" aria-label=delete_label on:click=move |_| {
                                chat.delete(&delete_id);
                                focus_after_delete(index);
                            }>"Delete"</button>
                        </li>
                    }
                }).collect_view()}
            </ul>
        </section>
    }
}
