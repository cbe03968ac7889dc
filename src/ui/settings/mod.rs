//! The settings panel: model source, temperature, step cap, reflection and goal
//! guessing, backend. It edits a copy; Save validates and shows each problem next to
//! its field (tied to it with `aria-invalid` and `aria-describedby`), and once a save
//! was tried each problem goes away as soon as its field is fixed; a save that fails
//! moves focus to the first field marked. Only the field at fault is marked: a proxy
//! problem is told apart (address, model name, window, header) by the check that
//! failed. Messages quote with “ ” rather than a programmer's backticks. Escape or
//! Close closes the panel. A saved proxy token is not sent to a changed proxy address
//! unless typed again.
//!
//! This module owns the form: reading it, saving it, the problems shown. Each
//! fieldset is a module of its own, with its fields, how they read into [`Settings`]
//! and its view: [`model`], [`agent`], [`world`], [`telemetry`], [`usage`].

mod agent;
mod loading;
mod model;
mod servers;
mod telemetry;
mod usage;
mod world;

use leptos::prelude::*;

use crate::app::settings::{Backend, FieldProblem, ModelSource, Settings};

super::part::part!(
    settings,
    preload,
    pub(super) fn open(chat: super::Chat, on_close: Callback<()>) {
        view! {
        <SettingsPanel current=chat.settings on_save=move |s| chat.apply_settings(s) on_close=on_close />
    }
    .into_any()
    }
);

/// The problems the last save (or, once one was tried, the last edit) found, and how
/// a field shows its own: marked, described, its message under it.
#[derive(Clone, Copy)]
struct Problems(RwSignal<Vec<FieldProblem>>);

impl Problems {
    /// `field`'s messages, each under it and announced.
    fn error(self, field: &'static str) -> impl IntoView {
        move || {
            self.0.with(|p| {
                p.iter()
                    .filter(|p| p.field == field)
                    .map(|p| {
                        view! {
                            <p class="field-error" id=error_id(field) role="alert">{readable(&p.message)}</p>
                        }
                    })
                    .collect_view()
            })
        }
    }

    /// `aria-invalid` of `field`'s input.
    fn invalid(self, field: &'static str) -> impl Fn() -> String + Copy {
        move || {
            self.0
                .with(|p| p.iter().any(|p| p.field == field))
                .to_string()
        }
    }

    /// `aria-describedby` of `field`'s input: errors first, then the field's hint, as a
    /// screen reader reads them with the field.
    fn described(self, field: &'static str, hint: &'static str) -> impl Fn() -> String {
        move || {
            let erred = self.0.with(|p| p.iter().any(|p| p.field == field));
            if erred {
                format!("{} {hint}", error_id(field)).trim_end().to_owned()
            } else {
                hint.to_owned()
            }
        }
    }
}

/// The settings form.
#[component]
pub fn SettingsPanel(
    /// The settings in force.
    #[prop(into)]
    current: Signal<Settings>,
    /// Applies settings; returns the problems that stopped them.
    on_save: impl Fn(Settings) -> Vec<FieldProblem> + 'static,
    /// Closes the panel (Escape, or the Close button).
    #[prop(optional)]
    on_close: Option<Callback<()>>,
) -> impl IntoView {
    let initial = current.get_untracked();
    let model = model::Fields::new(&initial);
    let agent = agent::Fields::new(&initial);
    let world = world::Fields::new(&initial);
    let telemetry = telemetry::Fields::new(&initial);
    let usage = usage::Fields::new(&initial);
    let problems = Problems(RwSignal::new(Vec::<FieldProblem>::new()));
    let form = NodeRef::<leptos::html::Form>::new();
    let saved = RwSignal::new(false);
    // After a save was tried, problems follow the fields as they are edited.
    let tried = RwSignal::new(false);

    let collect = move || -> Result<Settings, Vec<FieldProblem>> {
        let mut found = Vec::new();
        // A field that does not parse is noted in `found` and a valid stand-in takes its
        // place, so the checks below don't report it twice; any problem stops the save.
        let mut settings = current.get_untracked();
        model.read(&mut settings, &mut found);
        agent.read(&mut settings, &mut found);
        world.read(&mut settings);
        telemetry.read(&mut settings);
        usage.read(&mut settings, &mut found);
        let proxy_field = model::proxy_field(&settings.model);
        found.extend(settings.problems().into_iter().map(|mut problem| {
            if problem.field == "model" {
                problem.field = proxy_field;
            }
            problem
        }));
        current.with_untracked(|before| {
            found.extend(model.moved_token(&settings, before));
            found.extend(telemetry.moved_headers(&settings, before));
        });
        if found.is_empty() {
            Ok(settings)
        } else {
            Err(found)
        }
    };
    Effect::new(move |_| {
        // Read every field, so an edit re-checks them.
        model.track();
        agent.track();
        world.track();
        if tried.get_untracked() {
            problems.0.set(collect().err().unwrap_or_default());
        }
    });
    // Applied or refused: "Saved." and the model loading, or the first field to fix.
    let on_save = std::rc::Rc::new(on_save);
    let finish = move |result: Result<Vec<FieldProblem>, Vec<FieldProblem>>| match result {
        Ok(found) if found.is_empty() => {
            model.saved(&current.get_untracked());
            problems.0.set(Vec::new());
            telemetry.saved();
            saved.set(true);
            // "Saved." in view: the person sees the save was taken.
            request_animation_frame(move || {
                let shown = form
                    .get_untracked()
                    .and_then(|f| f.query_selector(".settings-saved").ok().flatten());
                if let Some(shown) = shown {
                    shown.scroll_into_view_with_bool(false);
                }
            });
        }
        Ok(found) | Err(found) => {
            problems.0.set(found);
            // The person goes to the first field to fix.
            request_animation_frame(move || {
                let first = form
                    .get_untracked()
                    .and_then(|f| f.query_selector("[aria-invalid='true']").ok().flatten())
                    .and_then(|e| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(e).ok());
                if let Some(first) = first {
                    let _ = first.focus();
                    // In view even when it had focus already (Enter in it saved),
                    // where focusing scrolls nothing.
                    first.scroll_into_view_with_bool(false);
                }
            });
        }
    };
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        saved.set(false);
        tried.set(true);
        let settings = match collect() {
            Ok(settings) => settings,
            Err(found) => return finish(Err(found)),
        };
        // A weights address new to these settings is checked first (a picked file is
        // read by the worker itself).
        let unchecked = match &settings.model {
            ModelSource::Local(local)
                if !local.url.starts_with("file:")
                    && current.with_untracked(|c| c.model != settings.model) =>
            {
                Some(crate::web::local_model::page_address(&local.url))
            }
            _ => None,
        };
        // A Supabase project new to these settings is asked once whether it answers.
        let project = match &settings.backend {
            Backend::Supabase { url, anon_key }
                if current.with_untracked(|c| c.backend != settings.backend) =>
            {
                Some((url.clone(), anon_key.clone()))
            }
            _ => None,
        };
        if unchecked.is_none() && project.is_none() {
            return finish(Ok(on_save(settings)));
        }
        if let Some(url) = &unchecked {
            model
                .local_status
                .set(Some(format!("Checking the weights at {url}…")));
        }
        let on_save = std::rc::Rc::clone(&on_save);
        leptos::task::spawn_local(async move {
            if let Some((url, key)) = project
                && let Err(problem) =
                    crate::store::project::check(&crate::web::Fetch, &url, &key).await
            {
                let (field, message) = match problem {
                    crate::store::project::Problem::Url(m) => ("backend.url", m),
                    crate::store::project::Problem::Key(m) => ("backend.anon_key", m),
                };
                return finish(Err(vec![FieldProblem { field, message }]));
            }
            if let Some(url) = unchecked {
                let checked = crate::llm::weights::check(&crate::web::Fetch, &url).await;
                let _ = model.local_status.try_set(None);
                if let Err(message) = checked {
                    return finish(Err(vec![FieldProblem {
                        field: "model.local",
                        message,
                    }]));
                }
            }
            finish(Ok(on_save(settings)));
        });
    };
    let close = move || {
        if let Some(on_close) = on_close {
            on_close.run(());
        }
    };
    // Opened, the panel's heading takes focus, so its first field is a Tab away.
    form.on_load(|form| {
        match form
            .query_selector("#settings-heading")
            .ok()
            .flatten()
            .and_then(|h| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(h).ok())
        {
            Some(heading) => {
                let _ = heading.focus();
            }
            None => {
                let _ = form.focus();
            }
        }
    });
    view! {
        <form
            node_ref=form
            class="settings"
            aria-labelledby="settings-heading"
            tabindex="-1"
            novalidate
            on:submit=save
            on:keydown=move |ev| {
                if ev.key() == "Escape" {
                    ev.prevent_default();
                    close();
                }
            }
        >
            <h2 id="settings-heading" tabindex="-1">"Settings"</h2>
            {model.view(problems, current)}
            {agent.view(problems)}
            {world.view(problems)}
            {telemetry.view(problems)}
            {usage.view(problems)}
            <div class="settings-actions">
                <button type="submit" class="settings-save primary">"Save"</button>
                <button type="button" class="settings-close" on:click=move |_| close()>"Close"</button>
            </div>
            <p class="settings-saved" role="status">{move || if saved.get() { "Saved." } else { "" }}</p>
        </form>
    }
}

/// A message as a person reads it: quoted with “ ”, an empty quote said as such.
fn readable(message: &str) -> String {
    let mut out = String::new();
    let mut open = true;
    for (i, part) in message.replace("``", "nothing").split('`').enumerate() {
        if i > 0 {
            out.push(if open { '“' } else { '”' });
            open = !open;
        }
        out.push_str(part);
    }
    out
}

/// The id of `field`'s error message, for `aria-describedby`.
fn error_id(field: &str) -> String {
    format!("error-{}", field.replace('.', "-"))
}

/// `text` parsed as a `T`, or `None` with `message` noted as `field`'s problem.
fn parse<T: std::str::FromStr>(
    text: &str,
    field: &'static str,
    message: &str,
    found: &mut Vec<FieldProblem>,
) -> Option<T> {
    let parsed = text.trim().parse().ok();
    if parsed.is_none() {
        found.push(FieldProblem {
            field,
            message: message.into(),
        });
    }
    parsed
}
