//! The sign-in control for a Supabase project: one click signs in anonymously (the
//! default); an email and password sign up or sign in instead; sign-out ends the
//! login. Signing in enters the world as that user, then rebuilds the chat so the
//! agent's tools act as them. The auth logic lives in `crate::store::auth`; the page's
//! storage of the login in `demo`.

use std::rc::Rc;

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::Chat;
use crate::app::settings::Backend;
use crate::demo;
use crate::store::auth::{Account, AuthError, AuthUser};

/// Who is signed in, said for a person.
fn describe(user: Option<&AuthUser>) -> String {
    match user {
        None => "Not signed in: the world is read-only until you sign in.".into(),
        Some(user) => match &user.email {
            Some(email) => format!("Signed in as {email}."),
            None => "Signed in anonymously.".into(),
        },
    }
}

/// The project the saved settings name, if it is a Supabase one.
fn project(chat: Chat) -> Option<(String, String)> {
    chat.settings.with_untracked(|s| match &s.backend {
        Backend::Supabase { url, anon_key } => Some((url.clone(), anon_key.clone())),
        Backend::Local => None,
    })
}

/// What to do with the account.
#[derive(Clone)]
enum Step {
    Anonymous,
    SignIn(String, String),
    SignUp(String, String),
    SignOut,
}

/// Runs `step`, enters the world as the signed-in user, and rebuilds the chat.
async fn run(account: Rc<Account>, url: String, key: String, step: Step) -> Result<(), AuthError> {
    let signed_in = match step {
        Step::Anonymous => account.sign_in_anonymously().await?,
        Step::SignIn(email, password) => account.sign_in(&email, &password).await?,
        Step::SignUp(email, password) => account.sign_up(&email, &password).await?,
        Step::SignOut => return account.sign_out().await,
    };
    let world = demo::signed_in_world(&url, &key, account);
    demo::enter_world(&world, &signed_in.user.id)
        .await
        .map_err(|e| AuthError::Refused(format!("could not enter the world: {e}")))?;
    Ok(())
}

/// The sign-in control, for the Supabase project in the saved settings.
#[component]
pub fn AccountPanel() -> impl IntoView {
    let Some(chat) = use_context::<Chat>() else {
        return ().into_any();
    };
    let signed_in = move || {
        project(chat)
            .map(|(url, key)| demo::account(&url, &key))
            .and_then(|a| a.login())
            .map(|s| s.user)
    };
    let user = RwSignal::new(signed_in());
    // Saving another backend signs out of the old one: say so at once.
    Effect::new(move |_| {
        chat.settings.track();
        user.set(signed_in());
    });
    let email = RwSignal::new(String::new());
    let password = RwSignal::new(String::new());
    let busy = RwSignal::new(false);
    let error = RwSignal::new(String::new());
    let act = move |step: Step| {
        let Some((url, key)) = project(chat) else {
            error.set("Save a Supabase project first.".into());
            return;
        };
        let account = Rc::new(demo::account(&url, &key));
        busy.set(true);
        error.set(String::new());
        spawn_local(async move {
            let result = run(Rc::clone(&account), url, key, step).await;
            busy.set(false);
            user.set(account.login().map(|s| s.user));
            if let Err(problem) = result {
                error.set(problem.to_string());
            }
            // The agent's tools act as whoever is signed in now.
            chat.apply_settings(chat.settings.get_untracked());
        });
    };
    let credentials = move || (email.get_untracked(), password.get_untracked());
    view! {
        <div class="account" aria-label="Account">
            <p class="account-status" role="status">{move || describe(user.get().as_ref())}</p>
            <button type="button" class="sign-in-anonymously" disabled=move || busy.get()
                on:click=move |_| act(Step::Anonymous)>"Sign in anonymously"</button>
            <details class="account-email">
                <summary>"Or with an email and password"</summary>
                <label>"Email"<input class="auth-email" type="email" autocomplete="email" bind:value=email /></label>
                <label>"Password"<input class="auth-password" type="password" autocomplete="current-password" bind:value=password /></label>
                <button type="button" class="auth-sign-in" disabled=move || busy.get()
                    on:click=move |_| { let (e, p) = credentials(); act(Step::SignIn(e, p)) }>"Sign in"</button>
                <button type="button" class="auth-sign-up" disabled=move || busy.get()
                    on:click=move |_| { let (e, p) = credentials(); act(Step::SignUp(e, p)) }>"Sign up"</button>
            </details>
            <button type="button" class="auth-sign-out" hidden=move || user.with(Option::is_none)
                disabled=move || busy.get() on:click=move |_| act(Step::SignOut)>"Sign out"</button>
            <p class="account-error field-error" role="alert">{move || error.get()}</p>
        </div>
    }
    .into_any()
}
