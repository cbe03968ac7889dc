//! Starting the app in a page: where it mounts (a host page's `#familiar` element, or
//! else the body), the shell in index.html it takes the place of, and the User Timing
//! marks `bench/ui` reads. What it mounts is [`crate::ui::App`].
//!
//! The shell is the first screen in plain HTML, and its composer takes a message while
//! the .wasm loads. Nothing typed there is lost: the text, the caret and the focus move
//! to the app's composer, and a message sent from the shell is sent by the app.

use wasm_bindgen::JsCast;
use web_sys::{Document, Element, Event, EventInit, HtmlElement, HtmlTextAreaElement};

/// Mounts the app and marks `familiar:start`, `familiar:mounted` and `familiar:frame`
/// (the first animation frame after mounting: the one that draws it).
pub fn start() {
    mark("familiar:start");
    let document = web_sys::window().and_then(|w| w.document());
    let shell = element(document.as_ref(), "familiar-loading");
    let draft = shell
        .as_ref()
        .zip(document.as_ref())
        .and_then(|(shell, document)| Draft::read(shell, document));
    let root = mount(document.as_ref());
    // Removed only once the app is in: had mounting failed, the shell would still be
    // there to say so (index.html's error handler writes into it).
    if let Some(shell) = shell {
        shell.remove();
    }
    if let (Some(draft), Some(root)) = (draft, root) {
        draft.hand_to(&root);
    }
    mark("familiar:mounted");
    leptos::prelude::request_animation_frame(|| mark("familiar:frame"));
}

/// Mounts the app into the page's `#familiar` element if it has one, else into the
/// body of a page that shows its shell (the demo's index.html); returns the element it
/// is in. A page with neither only uses the JavaScript API: nothing is mounted.
fn mount(document: Option<&Document>) -> Option<Element> {
    match element(document, "familiar").and_then(|e| e.dyn_into::<HtmlElement>().ok()) {
        Some(host) => {
            leptos::mount::mount_to(host.clone(), crate::ui::App).forget();
            Some(host.into())
        }
        None if element(document, "familiar-loading").is_some() => {
            leptos::mount::mount_to_body(crate::ui::App);
            document?.body().map(Into::into)
        }
        None => None,
    }
}

/// What the user did in the shell's composer before the app ran.
struct Draft {
    text: String,
    /// The caret or selection, as offsets into `text`.
    selection: (Option<u32>, Option<u32>),
    focused: bool,
    /// Sent with Enter or Send: the shell queued it (`data-queued` on its form).
    queued: bool,
}

impl Draft {
    fn read(shell: &Element, document: &Document) -> Option<Self> {
        let input = composer_input(shell)?;
        let focused = document
            .active_element()
            .is_some_and(|active| active.is_same_node(Some(&input)));
        let queued = input
            .form()
            .is_some_and(|form| form.has_attribute("data-queued"));
        Some(Self {
            text: input.value(),
            selection: (
                input.selection_start().ok().flatten(),
                input.selection_end().ok().flatten(),
            ),
            focused,
            queued,
        })
    }

    /// Puts the draft into the app's composer under `root` as if typed there, and
    /// sends it if it was sent.
    fn hand_to(self, root: &Element) {
        if self.text.is_empty() && !self.focused {
            return;
        }
        let Some(input) = composer_input(root) else {
            return;
        };
        input.set_value(&self.text);
        // The composer follows its text through `input` events, as when typing.
        let init = EventInit::new();
        init.set_bubbles(true);
        if let Ok(event) = Event::new_with_event_init_dict("input", &init) {
            let _ = input.dispatch_event(&event);
        }
        if self.focused {
            let _ = input.focus();
            if let (Some(start), Some(end)) = self.selection {
                let _ = input.set_selection_range(start, end);
            }
        }
        if self.queued
            && let Some(form) = input.form()
        {
            let _ = form.request_submit();
        }
    }
}

fn composer_input(root: &Element) -> Option<HtmlTextAreaElement> {
    root.query_selector(".composer-input")
        .ok()
        .flatten()?
        .dyn_into()
        .ok()
}

fn element(document: Option<&Document>, id: &str) -> Option<Element> {
    document?.get_element_by_id(id)
}

/// A User Timing mark, if the page has a `performance` object.
fn mark(name: &str) {
    if let Some(performance) = web_sys::window().and_then(|w| w.performance()) {
        let _ = performance.mark(name);
    }
}
