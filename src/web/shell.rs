//! The page the app starts in: where it may mount (a host page's `#familiar` element,
//! or the body of a page showing index.html's shell), the shell it takes the place of,
//! and the User Timing marks `bench/ui` reads. Mounting itself is the UI's
//! (`ui::start`); this only reads and hands over the page.
//!
//! The shell is the first screen in plain HTML, and its composer takes a message while
//! the .wasm loads. Nothing typed there is lost: the text, the caret and the focus move
//! to the app's composer, and a message sent from the shell is sent by the app.

use wasm_bindgen::JsCast;
use web_sys::{Document, Element, Event, EventInit, HtmlElement, HtmlTextAreaElement};

/// Where the app goes in the page.
pub enum MountPoint {
    /// The host page's `#familiar` element: the widget lives in it.
    Host(HtmlElement),
    /// The body of the demo's own page (it shows the shell).
    Body,
}

/// The page as the app finds it when it starts.
pub struct Page {
    document: Option<Document>,
    shell: Option<Element>,
    draft: Option<Draft>,
}

impl Page {
    /// Reads the page: its shell and what was typed into it.
    pub fn read() -> Self {
        let document = web_sys::window().and_then(|w| w.document());
        let shell = element(document.as_ref(), "familiar-loading");
        let draft = shell
            .as_ref()
            .zip(document.as_ref())
            .and_then(|(shell, document)| Draft::read(shell, document));
        Self {
            document,
            shell,
            draft,
        }
    }

    /// Where to mount: `#familiar` if the page has one, else the body of a page that
    /// shows the shell; `None` for a page that only uses the JavaScript API.
    pub fn mount_point(&self) -> Option<MountPoint> {
        let host = element(self.document.as_ref(), "familiar");
        match host.and_then(|e| e.dyn_into::<HtmlElement>().ok()) {
            Some(host) => Some(MountPoint::Host(host)),
            None => self.shell.as_ref().map(|_| MountPoint::Body),
        }
    }

    /// The app is mounted at `point`: the shell goes (only now: had mounting failed,
    /// it would still be there to say so), and what was typed into it moves to the app.
    pub fn started(self, point: Option<&MountPoint>) {
        if let Some(shell) = &self.shell {
            shell.remove();
        }
        let root: Option<Element> = match point {
            Some(MountPoint::Host(host)) => Some(host.clone().into()),
            Some(MountPoint::Body) => self
                .document
                .as_ref()
                .and_then(Document::body)
                .map(Into::into),
            None => None,
        };
        if let (Some(draft), Some(root)) = (self.draft, root) {
            draft.hand_to(&root);
        }
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
pub fn mark(name: &str) {
    if let Some(performance) = web_sys::window().and_then(|w| w.performance()) {
        let _ = performance.mark(name);
    }
}
