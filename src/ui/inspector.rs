//! The inspector: what the latest run knows — its trigger and boundaries, plan and
//! context memory, iterations against the cap — and the world it acts on.
//!
//! Beside the conversation when the pane is wide; at 900 px and less it is a panel
//! the person opens ([`InspectorButton`]) over the page, never content under the
//! composer (the conversation's end stays the page's end). Opened, it takes focus;
//! Escape or Close shuts it and gives focus back to its button (or the top bar's menu
//! holding it, `top_bar`). **Download trace**
//! saves the open conversation's trace as an OTLP JSON file (`app::telemetry`).

use leptos::prelude::*;

use super::chat::Inspector as State;

/// The id its button controls.
const PANEL_ID: &str = "familiar-inspector";

/// Keeps Tab and Shift+Tab inside `panel`: from its last control to its first, and
/// back, and from the panel itself (focused as it opens) to one of them.
fn trap_tab(panel: &web_sys::HtmlElement, ev: &leptos::ev::KeyboardEvent) {
    use wasm_bindgen::JsCast;
    let selector =
        "button:not([disabled]), [href], input, select, textarea, summary, [tabindex='0']";
    let Ok(found) = panel.query_selector_all(selector) else {
        return;
    };
    let controls: Vec<web_sys::HtmlElement> = (0..found.length())
        .filter_map(|i| found.item(i)?.dyn_into::<web_sys::HtmlElement>().ok())
        .filter(|e| e.offset_parent().is_some())
        .collect();
    let (Some(first), Some(last)) = (controls.first(), controls.last()) else {
        ev.prevent_default();
        return;
    };
    let active = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.active_element());
    let on = |e: &web_sys::HtmlElement| {
        active
            .as_ref()
            .is_some_and(|a| a == e.as_ref() as &web_sys::Element)
    };
    let on_panel = active
        .as_ref()
        .is_some_and(|a| a == panel.as_ref() as &web_sys::Element);
    let to = if ev.shift_key() && (on(first) || on_panel) {
        Some(last)
    } else if !ev.shift_key() && on(last) {
        Some(first)
    } else {
        None
    };
    if let Some(to) = to {
        ev.prevent_default();
        let _ = to.focus();
    }
}

/// Whether the inspector is open as a panel (narrow panes only), and the button that
/// opens it, to give focus back to.
#[derive(Clone, Copy)]
pub struct InspectorPanel {
    open: RwSignal<bool>,
    button: NodeRef<leptos::html::Button>,
}

impl Default for InspectorPanel {
    fn default() -> Self {
        Self::new()
    }
}

impl InspectorPanel {
    /// Closed.
    pub fn new() -> Self {
        Self {
            open: RwSignal::new(false),
            button: NodeRef::new(),
        }
    }

    fn close(self) {
        self.open.set(false);
        super::focus_back(self.button.get_untracked().as_deref());
    }
}

/// Opens the inspector as a panel; shown only where the pane is narrow (main.css).
#[component]
pub fn InspectorButton(
    /// The panel it opens.
    panel: InspectorPanel,
) -> impl IntoView {
    view! {
        <button
            node_ref=panel.button
            type="button"
            class="show-inspector"
            aria-controls=PANEL_ID
            aria-expanded=move || panel.open.get().to_string()
            on:click=move |_| panel.open.update(|o| *o = !*o)
        >
            "Inspector"
        </button>
    }
}

/// The side panel, updating live.
#[component]
pub fn Inspector(
    /// The state to show.
    #[prop(into)]
    state: Signal<State>,
    /// Whether it is open as a panel, on narrow panes.
    #[prop(optional)]
    panel: Option<InspectorPanel>,
    /// Whether a character is played: its section shows only then.
    #[prop(into, optional)]
    character: Signal<bool>,
) -> impl IntoView {
    let field = move |f: fn(&State) -> String| move || state.with(f);
    let panel = panel.unwrap_or_default();
    let chat = use_context::<super::Chat>();
    let aside = NodeRef::<leptos::html::Aside>::new();
    // Opened as a panel, it takes focus (its heading's Close button is a Tab away).
    Effect::new(move |_| {
        if panel.open.get()
            && let Some(aside) = aside.get_untracked()
        {
            let _ = aside.focus();
        }
    });
    view! {
        <aside
            node_ref=aside
            id=PANEL_ID
            class="inspector"
            class:open=move || panel.open.get()
            aria-label="Inspector"
            tabindex="-1"
            on:keydown=move |ev| {
                if ev.key() == "Escape" && panel.open.get_untracked() {
                    ev.prevent_default();
                    panel.close();
                }
                // Open over the page, it keeps focus until closed: Tab cycles inside.
                if ev.key() == "Tab" && panel.open.get_untracked()
                    && let Some(aside) = aside.get_untracked()
                {
                    trap_tab(&aside, &ev);
                }
            }
        >
            <div class="inspector-heading">
                <h2>"Inspector"</h2>
                <button type="button" class="close-inspector" on:click=move |_| panel.close()>"Close"</button>
            </div>
            <dl>
                <dt>"Trigger"</dt>
                <dd class="inspector-trigger">{field(|s| if s.trigger.is_empty() { "—".into() } else { s.trigger.clone() })}</dd>
                <dt>"Allowed actions"</dt>
                <dd class="inspector-boundaries">{field(|s| match &s.boundaries.allowed_actions {
                    None => "all".into(),
                    Some(list) if list.is_empty() => "none".into(),
                    Some(list) => list.join(", "),
                })}</dd>
                <dt>"Iterations"</dt>
                <dd class="inspector-iterations">{field(|s| if s.cap == 0 { "—".into() } else { format!("{} / {}", s.iterations, s.cap) })}</dd>
                <dt>"Plan"</dt>
                <dd class="inspector-plan">{field(|s| if s.plan.is_empty() { "—".into() } else { s.plan.join(" → ") })}</dd>
                <dt>"Context memory"</dt>
                <dd class="inspector-memory">{field(|s| {
                    let facts = s.memory.facts.iter().map(|(k, v)| format!("{k} = {v}"));
                    let owed = s.memory.owed.iter().map(|f| format!("owed: {}", f.note));
                    let all: Vec<String> = facts.chain(owed).collect();
                    if all.is_empty() { "—".into() } else { all.join("; ") }
                })}</dd>
            </dl>
            <Show when=move || character.get()>
            <h3>"Character"</h3>
            <dl>
                <dt>"Transaction"</dt>
                <dd class="inspector-transaction">{field(|s| if s.transaction.is_empty() { "—".into() } else { s.transaction.clone() })}</dd>
                <dt>"Pending"</dt>
                <dd class="inspector-pending">{field(|s| if s.pending.is_empty() { "none".into() } else { s.pending.join("; ") })}</dd>
                <dt>"Injected"</dt>
                <dd class="inspector-injection">{field(|s| if s.injection.is_empty() { "—".into() } else { s.injection.clone() })}</dd>
            </dl>
            </Show>
            <h3>"Memories in the world"</h3>
            <ul class="inspector-world">
                {move || state.with(|s| s.world.clone()).into_iter().map(|m| view! { <li>{m}</li> }).collect_view()}
            </ul>
            <Show when=move || state.with(|s| s.world.is_empty())>
                <p class="inspector-none">"None yet."</p>
            </Show>
            <h3>"Trace"</h3>
            <p>
                <button type="button" class="download-trace" on:click=move |_| download_trace(chat)>
                    "Download trace"
                </button>
            </p>
        </aside>
    }
}

/// Saves the open conversation's trace (its spans as the GenAI conventions name them)
/// as an OTLP JSON export request, `trace-<conversation>.json`.
fn download_trace(chat: Option<super::Chat>) {
    let Some(session) = chat.and_then(|chat| chat.session()) else {
        return;
    };
    let id = session.conversation_id();
    let resource = crate::trace::Resource {
        service_name: "familiar-demo".into(),
        attributes: Vec::new(),
    };
    let request = crate::trace::export_request(&session.trace_of(&id), &resource);
    if let Err(error) = crate::web::download(&format!("trace-{id}.json"), &request.to_string()) {
        web_sys::console::warn_1(&format!("familiar: the trace was not saved: {error}").into());
    }
}
