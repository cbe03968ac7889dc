//! Settings → World: the world in this page, or a Supabase project (its address, its
//! public anon key, and signing in).

use leptos::prelude::*;

use super::Problems;
use crate::app::settings::{Backend, Settings};
use crate::ui::account::AccountPanel;

/// The World fieldset's fields, as typed.
#[derive(Clone, Copy)]
pub(super) struct Fields {
    use_supabase: RwSignal<bool>,
    supabase_url: RwSignal<String>,
    anon_key: RwSignal<String>,
}

impl Fields {
    pub(super) fn new(initial: &Settings) -> Self {
        let (supabase_url, anon_key) = match &initial.backend {
            Backend::Supabase { url, anon_key } => (url.clone(), anon_key.clone()),
            Backend::Local => (String::new(), String::new()),
        };
        Self {
            use_supabase: RwSignal::new(matches!(initial.backend, Backend::Supabase { .. })),
            supabase_url: RwSignal::new(supabase_url),
            anon_key: RwSignal::new(anon_key),
        }
    }

    /// Reads the fields whose edits re-check the form.
    pub(super) fn track(&self) {
        let _ = (
            self.use_supabase.get(),
            self.supabase_url.get(),
            self.anon_key.get(),
        );
    }

    /// The backend, into `settings`.
    pub(super) fn read(&self, settings: &mut Settings) {
        settings.backend = if self.use_supabase.get_untracked() {
            Backend::Supabase {
                url: self.supabase_url.get_untracked(),
                anon_key: self.anon_key.get_untracked(),
            }
        } else {
            Backend::Local
        };
    }

    /// The World fieldset.
    pub(super) fn view(self, problems: Problems) -> impl IntoView {
        let Self {
            use_supabase,
            supabase_url,
            anon_key,
        } = self;
        view! {
            <fieldset>
                <legend>"World"</legend>
                <label><input type="radio" name="backend" prop:checked=move || !use_supabase.get() on:change=move |_| use_supabase.set(false) />" In this page"</label>
                <label><input type="radio" name="backend" class="use-supabase" prop:checked=move || use_supabase.get() on:change=move |_| use_supabase.set(true) />" Supabase"</label>
                <div hidden=move || !use_supabase.get()>
                    <label>"Project URL"<input class="supabase-url" type="url" bind:value=supabase_url placeholder="https://xyz.supabase.co" aria-invalid=problems.invalid("backend.url") aria-describedby=problems.described("backend.url", "hint-supabase") /></label>
                    <p class="field-hint" id="hint-supabase">"https://, or http:// on this machine"</p>
                    {problems.error("backend.url")}
                    <label>"Anon key"<input class="anon-key" bind:value=anon_key placeholder="the public anon key" aria-invalid=problems.invalid("backend.anon_key") aria-describedby=problems.described("backend.anon_key", "hint-anon") /></label>
                    <p class="field-hint" id="hint-anon">"The public anon key — never the service-role key"</p>
                    {problems.error("backend.anon_key")}
                    <AccountPanel />
                </div>
            </fieldset>
        }
    }
}
