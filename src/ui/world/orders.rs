//! An agent's standing orders on its World card: what it may do without asking its
//! owner, whatever it has read. Read from where the world keeps them when the card
//! opens, saved there through `set_standing_orders` (which holds the agent's actions
//! to them), and handed to the session so its next run keeps the same bounds.

use leptos::prelude::*;
use leptos::task::spawn_local;
use serde_json::Value;

use crate::run::orders::StandingOrders;
use crate::world::ACTIONS;
use crate::world::orders::{self, Typed as Fields};
use crate::world::triggers::WorldAgent;

use super::super::Chat;

/// `send_message` as the form names it: "send message".
fn spoken(action: &str) -> String {
    action.replace('_', " ")
}

/// The standing orders of `who`, on its card; what happens is said in `status`.
#[component]
pub fn StandingOrdersForm(chat: Chat, who: WorldAgent, status: RwSignal<String>) -> impl IntoView {
    let fields = RwSignal::new(Fields::default());
    // Whether orders are in force: the summary says what the agent does without them.
    let given = RwSignal::new(false);
    let name = who.name.clone();
    if let Some(store) = chat.world_store() {
        let who = who.clone();
        spawn_local(async move {
            match orders::kept(&*store, std::slice::from_ref(&who)).await {
                Ok(kept) => {
                    if let Some((_, kept)) = kept.first() {
                        fields.set(Fields::of(kept));
                        given.set(true);
                    }
                }
                Err(error) => status.set(error.to_string()),
            }
        });
    }
    let keep = move |orders: Option<Value>| {
        let (Some(store), Some(app)) = (chat.world_store(), chat.session()) else {
            return;
        };
        let who = who.clone();
        spawn_local(async move {
            let lifted = orders.is_none();
            match store.rpc(&orders::set(who.id, orders)).await {
                Ok(kept) => {
                    let read = (!lifted).then(|| StandingOrders::read(kept)).transpose();
                    match read {
                        Ok(read) => {
                            given.set(read.is_some());
                            app.set_orders(&who.name, read);
                            status.set(if lifted {
                                format!(
                                    "{}'s standing orders are lifted: it asks you first.",
                                    who.name
                                )
                            } else {
                                format!("{}'s standing orders are saved.", who.name)
                            });
                        }
                        Err(error) => {
                            status.set(format!("{}'s standing orders: {error}", who.name))
                        }
                    }
                    if lifted {
                        fields.set(Fields::default());
                    }
                }
                Err(error) => status.set(format!(
                    "{}'s standing orders were not saved: {error}",
                    who.name
                )),
            }
        });
    };
    let save = {
        let keep = keep.clone();
        let name = name.clone();
        move |event: leptos::ev::SubmitEvent| {
            event.prevent_default();
            match fields.with_untracked(Fields::orders) {
                Ok(orders) => keep(Some(orders)),
                Err(error) => status.set(format!("{name}'s standing orders: {error}")),
            }
        }
    };
    let lift = move |_| keep(None);
    let text = |label: &'static str,
                class: &'static str,
                hint: &'static str,
                get: fn(&Fields) -> String,
                set: fn(&mut Fields, String)| {
        view! {
            <label class=class>
                <span>{label}</span>
                <input type="text" placeholder=hint
                    prop:value=move || fields.with(get)
                    on:input=move |e| fields.update(|f| set(f, event_target_value(&e))) />
            </label>
        }
    };
    view! {
        <details class="agent-orders">
            <summary>{let name = name.clone(); move || if given.get() {
                format!("{name}'s standing orders: acts on its own within them")
            } else {
                format!("{name}'s standing orders: none, it asks you first")
            }}</summary>
            <form on:submit=save aria-label=format!("{name}'s standing orders")>
                <fieldset>
                    <legend>"Actions it may take without asking"</legend>
                    {ACTIONS.into_iter().map(|action| view! {
                        <label class="order-action">
                            <input type="checkbox" value=action
                                prop:checked=move || fields.with(|f| f.actions.iter().any(|a| a == action))
                                on:change=move |e| {
                                    let on = event_target_checked(&e);
                                    fields.update(|f| {
                                        f.actions.retain(|a| a != action);
                                        if on { f.actions.push(action.to_owned()); }
                                    });
                                } />
                            {spoken(action)}
                        </label>
                    }).collect_view()}
                </fieldset>
                {text("Gold a day", "order-gold", "any", |f| f.gold.clone(), |f, v| f.gold = v)}
                {text("Energy a day", "order-energy", "any", |f| f.energy.clone(), |f, v| f.energy = v)}
                {text("Communities (ids)", "order-communities", "any", |f| f.communities.clone(), |f, v| f.communities = v)}
                {text("Battles (ids)", "order-battles", "any", |f| f.battles.clone(), |f, v| f.battles = v)}
                {text("May message (names or ids)", "order-message", "anyone", |f| f.message.clone(), |f, v| f.message = v)}
                <p class="order-note">"Within these it acts whatever it has read; for anything else it asks you. An empty field is no bound."</p>
                <div class="order-buttons">
                    <button type="submit" class="save-orders">"Save orders"</button>
                    <button type="button" class="lift-orders" on:click=lift>"Lift orders"</button>
                </div>
            </form>
        </details>
    }
}
