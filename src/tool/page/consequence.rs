//! Which page actions always ask a person: the ones that submit, buy, delete, send or
//! sign out, judged from the element as the page was last read — its role and name,
//! a link's address, the form a button or a field's Enter submits — so that neither
//! "Allow for this task" nor a standing permission ever covers them. Also which
//! actions are harmless enough for a per-site standing permission ([`HARMLESS`]),
//! and the site a page is on.
//!
//! A judgement by names serves honest pages, whose "Place order" says what it does;
//! a page that names its buy button "Next" is judged by that name, as the person
//! reading the card would be. When in doubt (no page read yet, an element not on it)
//! it asks.

use std::rc::Rc;

use serde_json::Value;

use super::{Act, Control, Form, PageDom, Snapshot};
pub use crate::base::site::site;
use crate::base::words::{clean, words};
use crate::tool::{Judge, Reach, Valued};

/// The actions a per-site standing permission may cover ("Always allow scrolling and
/// highlighting on this site"): they show or move to an element and change nothing on
/// the page. Not `hover`: it fires the page's pointer and mouse handlers, which may
/// act as a click does (a task's grant covers it, as it covers a click).
pub const HARMLESS: [&str; 2] = ["scroll_to", "highlight"];

/// Words (or phrases) that say an element buys, pays, deletes or signs out, on a
/// button, a menu item or a link alike (links do these too, by their address or a
/// script). Lower case, whole words, apart by `|` (one string: no table of slices in
/// the page build).
const CONSEQUENTIAL: &str = concat!(
    // English
    "buy|",
    "pay|",
    "purchase|",
    "checkout|",
    "check out|",
    "place order|",
    "place your order|",
    "confirm order|",
    "confirm payment|",
    "delete|",
    "remove|",
    "discard|",
    "erase|",
    "destroy|",
    "trash|",
    "sign out|",
    "log out|",
    "log off|",
    "logout|",
    "signout|",
    "unsubscribe|",
    "close account|",
    "cancel subscription|",
    "cancel order|",
    "transfer|",
    "donate|",
    "renew|",
    // German
    "kaufen|",
    "bestellen|",
    "bezahlen|",
    "zahlen|",
    "löschen|",
    "entfernen|",
    "abmelden|",
    "ausloggen|",
    "abonnement kündigen|",
    "verlängern|",
    // French
    "acheter|",
    "commander|",
    "payer|",
    "supprimer|",
    "effacer|",
    "déconnexion|",
    "déconnecter|",
    "désabonner|",
    "renouveler|",
    // Spanish and Portuguese
    "comprar|",
    "pagar|",
    "eliminar|",
    "borrar|",
    "excluir|",
    "cerrar sesión|",
    "finalizar compra|",
    "realizar pedido|",
    "renovar|",
    // Italian
    "acquista|",
    "compra|",
    "paga|",
    "elimina|",
    "cancella|",
    "esci|",
    "rinnova|",
    // Dutch
    "kopen|",
    "betalen|",
    "verwijderen|",
    "afmelden",
);

/// Words that say a button sends or submits something. On a link they say where it
/// leads ("Send feedback" opens a form), so only buttons and menu items are judged
/// by them.
const SENDING: &str = concat!(
    "send|",
    "submit|",
    "publish|",
    "confirm|",
    "sign up|",
    "register|",
    "create account|",
    "subscribe|",
    "tweet|",
    "senden|",
    "absenden|",
    "abschicken|",
    "veröffentlichen|",
    "bestätigen|",
    "envoyer|",
    "publier|",
    "valider|",
    "confirmer|",
    "enviar|",
    "publicar|",
    "confirmar|",
    "invia|",
    "pubblica|",
    "conferma|",
    "verzenden|",
    "versturen",
);

/// Words of a field's name that say Enter in it sends what it holds (a chat's box, a
/// comment field).
const MESSAGE_FIELD: &str = concat!(
    "message|",
    "comment|",
    "reply|",
    "chat|",
    "nachricht|",
    "kommentar|",
    "mensaje|",
    "commentaire",
);

/// Words of a form's name or address that say it searches or filters (a query: it
/// changes nothing).
const SEARCH: &str = concat!(
    "search|",
    "query|",
    "filter|",
    "find|",
    "suche|",
    "recherche|",
    "buscar|",
    "cerca",
);

/// Roles whose click toggles, types or chooses rather than does: judged by the act
/// (Enter in one sends its form), and a toggle ([`TOGGLES`]) by its name too.
const FIELD_ROLES: &str = concat!(
    "textbox|",
    "searchbox|",
    "spinbutton|",
    "slider|",
    "combobox|",
    "listbox|",
    "checkbox|",
    "radio|",
    "switch|",
    "tab",
);

/// Roles a click or a check turns on or off: a setting whose name says it buys,
/// deletes or renews ("Delete my data", "Auto-renew") does so once it is on.
const TOGGLES: &str = "checkbox|radio|switch";

/// Pieces of a link's address that say it signs out, deletes or unsubscribes.
const CONSEQUENTIAL_PATHS: &str = concat!(
    "logout|",
    "log-out|",
    "signout|",
    "sign-out|",
    "sign_out|",
    "delete|",
    "unsubscribe",
);

/// Why `act` on `element` always asks a person, whatever they granted before; `None`
/// when a grant may cover it. Judged from `snapshot`, the page as last read.
pub fn always_asks(snapshot: &Snapshot, element: u32, act: &Act) -> Option<String> {
    let control = snapshot.controls.iter().find(|c| c.id == element);
    let form = |id: Option<u32>| id.and_then(|id| snapshot.forms.iter().find(|f| f.id == id));
    if let Some(origin) = framed(snapshot, element) {
        return Some(format!(
            "it is inside a frame of {}, another site",
            clean(origin)
        ));
    }
    match act {
        Act::Fill(_) | Act::ScrollTo | Act::Highlight | Act::Hover | Act::Leave => None,
        Act::Check(_) => match control {
            Some(control) => toggles(control),
            None => unknown(element),
        },
        Act::Select(option) => consequential(option)
            .or_else(|| sending(option))
            .map(|word| format!("the option it chooses says \"{word}\"")),
        Act::Submit => match (control, form(Some(element))) {
            (_, Some(form)) => submits(snapshot, form, None),
            (Some(control), None) => match form(control.form) {
                Some(form) => submits(snapshot, form, Some(control)),
                None => Some("it submits a form".into()),
            },
            (None, None) => unknown(element),
        },
        Act::Click | Act::DoubleClick => match control {
            Some(control) => clicks(control, form(control.form), snapshot),
            None => unknown(element),
        },
        Act::Press(key) => match control {
            Some(control) => presses(control, key, form(control.form), snapshot),
            None => unknown(element),
        },
    }
}

/// The origin of the other site's frame `element` is in (for a form, the frame of its
/// fields), when it is in one: the page's grants are for the page's site, not for an
/// advertisement or a widget another site draws inside it.
fn framed(snapshot: &Snapshot, element: u32) -> Option<&str> {
    let in_form = |c: &&Control| c.id == element || c.form == Some(element);
    let control = snapshot
        .controls
        .iter()
        .filter(in_form)
        .find(|c| c.frame.is_some());
    control.and_then(|c| c.frame.as_deref())
}

fn unknown(element: u32) -> Option<String> {
    Some(format!(
        "element {element} is not on the page as last read, so what it does is unknown"
    ))
}

/// A toggle turned on or off: by its name, when it names a consequential action.
fn toggles(control: &Control) -> Option<String> {
    let toggle = listed(TOGGLES, &control.role);
    let word = consequential(&control.name).filter(|_| toggle)?;
    Some(format!("its name says \"{word}\""))
}

/// A click on `control`: by its name (and a link's address), and as a button of a
/// form that it submits (as `submit` and Enter in its fields do, unless it searches).
/// A field's click types or chooses nothing; a toggle's is judged by its name.
fn clicks(control: &Control, form: Option<&Form>, snapshot: &Snapshot) -> Option<String> {
    if listed(FIELD_ROLES, &control.role) {
        return toggles(control);
    }
    let named = |judge: fn(&str) -> Option<&'static str>| {
        judge(&control.name).map(|word| format!("its name says \"{word}\""))
    };
    if control.role == "link" {
        let address = control.href.as_deref().unwrap_or_default().to_lowercase();
        let path = address.split(['?', '#']).next().unwrap_or_default();
        return named(consequential).or_else(|| {
            CONSEQUENTIAL_PATHS
                .split('|')
                .find(|piece| path.contains(piece))
                .map(|piece| format!("its address says \"{piece}\""))
        });
    }
    named(consequential).or_else(|| named(sending)).or_else(|| {
        let form = form?;
        if control.role == "button" && !searches(snapshot, form, Some(control)) {
            return submits(snapshot, form, Some(control));
        }
        consequential(&form.name)
            .map(|word| format!("it is a button of the form \"{}\" ({word})", form.name))
    })
}

/// A key pressed on `control`, judged by the key the page will hear (its `key` and
/// the legacy `keyCode` apps read, as [`familiar_page::key`] resolves the name): Enter
/// in a field sends its form (or its message); Enter or Space on a button or link
/// clicks it; Delete or Backspace on an item may delete it. A name that is no key
/// presses nothing, but asks all the same: what it would do is unknown.
fn presses(
    control: &Control,
    name: &str,
    form: Option<&Form>,
    snapshot: &Snapshot,
) -> Option<String> {
    let Some(key) = familiar_page::key(name) else {
        return Some(format!("{} is not a key it knows", quoted_key(name)));
    };
    let typed = listed(FIELD_ROLES, &control.role);
    let enter = key.key == "Enter" || key.key_code == 13;
    let space = key.key == " " || key.key_code == 32;
    let deletes =
        matches!(key.key.as_str(), "Delete" | "Backspace") || matches!(key.key_code, 8 | 46);
    if enter && typed {
        return match form {
            Some(form) => submits(snapshot, form, Some(control)),
            None => says(&control.name, MESSAGE_FIELD)
                .or_else(|| sending(&control.name))
                .map(|word| format!("Enter in a field named \"{word}\" sends it")),
        };
    }
    if enter || space {
        return clicks(control, form, snapshot);
    }
    (deletes && !typed).then(|| {
        format!(
            "{} on \"{}\" may delete it",
            quoted_key(&key.key),
            clean(&control.name)
        )
    })
}

/// A key's name for a reason: as JSON quotes it, so a space or an invisible
/// character shows.
fn quoted_key(name: &str) -> String {
    Value::from(familiar_page::clip(name, 20)).to_string()
}

/// Submitting `form` (from `field`, when a field or button sends it): always asks,
/// unless it only searches.
fn submits(snapshot: &Snapshot, form: &Form, field: Option<&Control>) -> Option<String> {
    if searches(snapshot, form, field) {
        return None;
    }
    Some(if form.name.trim().is_empty() {
        "it submits a form".to_owned()
    } else {
        format!("it submits the form \"{}\"", clean(&form.name))
    })
}

/// Whether `form` only looks something up: sent by `get`, and named, addressed or
/// made of a search field as a search is.
fn searches(snapshot: &Snapshot, form: &Form, field: Option<&Control>) -> bool {
    if form.method != "get" {
        return false;
    }
    let by_words = [form.name.as_str(), form.action.as_str()]
        .iter()
        .any(|text| SEARCH.split('|').any(|w| text.to_lowercase().contains(w)));
    let search_field = field
        .is_some_and(|c| c.role == "searchbox" || says(&c.name, SEARCH).is_some())
        || snapshot
            .controls
            .iter()
            .any(|c| c.form == Some(form.id) && c.role == "searchbox");
    by_words || search_field
}

/// Whether `text` says something is bought, paid, deleted or signed out: one of
/// [`CONSEQUENTIAL`], or "order" as its first word (a verb: not "Sort order").
fn consequential(text: &str) -> Option<&'static str> {
    says(text, CONSEQUENTIAL).or_else(|| verb(text, "order"))
}

/// Whether `text` says something is sent: one of [`SENDING`], or "post" as its first
/// word (not "Blog post").
fn sending(text: &str) -> Option<&'static str> {
    says(text, SENDING).or_else(|| verb(text, "post"))
}

/// `word` when it is the first word of `text` and no noun follows it ("Order now",
/// not "Order history").
fn verb(text: &str, word: &'static str) -> Option<&'static str> {
    let tokens = words(text);
    let next = tokens.get(1).map(String::as_str);
    let noun = matches!(
        next,
        Some("by" | "history" | "details" | "status" | "summary" | "number" | "date")
    );
    (tokens.first().map(String::as_str) == Some(word) && !noun).then_some(word)
}

/// The first of `phrases` (apart by `|`) that `text` says, as whole words.
fn says(text: &str, phrases: &'static str) -> Option<&'static str> {
    let tokens = words(text);
    phrases.split('|').find(|phrase| {
        let wanted: Vec<&str> = phrase.split(' ').collect();
        tokens
            .windows(wanted.len())
            .any(|window| window.iter().map(String::as_str).eq(wanted.iter().copied()))
    })
}

/// Whether `item` is one of `list` (apart by `|`).
fn listed(list: &str, item: &str) -> bool {
    list.split('|').any(|entry| entry == item)
}

/// Words of a button's name that say it only shows, hides or moves through what is
/// on the page (a menu, a month, a page of results): pressing it commits nothing.
const SHOWING: &str = concat!(
    "next|previous|prev|back|close|cancel|dismiss|open|show|hide|expand|collapse|",
    "more|less|menu|options|actions|details|view|toggle|sort|filter|search|today|",
    "month|year|zoom|scroll|page|tab|weiter|zurück|schließen|suivant|précédent|fermer|",
    "siguiente|anterior|cerrar"
);

/// What `act` on `element` acts with, for [`crate::run::provenance`] to trace: the
/// text typed, the option chosen, the name of a button or menu item that commits
/// something (it is not a field, a toggle, a tab, nor named as showing or moving
/// through the page), and a link's destination on another site.
pub fn acts_with(snapshot: &Snapshot, element: u32, act: &Act) -> Vec<Valued> {
    let Some(control) = snapshot.controls.iter().find(|c| c.id == element) else {
        return Vec::new();
    };
    let named = clean(&control.name);
    let value = |means: String, value: &str, target: bool| Valued {
        means,
        value: value.to_owned(),
        target,
    };
    match act {
        Act::Fill(text) if !text.trim().is_empty() => {
            vec![value(format!("text typed into \"{named}\""), text, false)]
        }
        Act::Select(option) => vec![value(
            format!("option chosen in \"{named}\""),
            option,
            false,
        )],
        Act::Click | Act::DoubleClick => pressed(snapshot, control),
        Act::Press(key) => match familiar_page::key(key) {
            Some(k)
                if matches!(k.key.as_str(), "Enter" | " ")
                    && !listed(FIELD_ROLES, &control.role) =>
            {
                pressed(snapshot, control)
            }
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// What pressing `control` acts with: its name when it commits something, a link's
/// destination when it leads to another site.
fn pressed(snapshot: &Snapshot, control: &Control) -> Vec<Valued> {
    if control.role == "link" {
        let href = control.href.as_deref().unwrap_or_default();
        let elsewhere = site(href).is_some_and(|to| Some(to) != site(&snapshot.location));
        return if elsewhere {
            vec![Valued {
                means: format!("destination of the link \"{}\"", clean(&control.name)),
                value: href.to_owned(),
                target: false,
            }]
        } else {
            Vec::new()
        };
    }
    let commits = matches!(
        control.role.as_str(),
        "button" | "menuitem" | "menuitemcheckbox" | "menuitemradio"
    ) && says(&control.name, SHOWING).is_none();
    if !commits {
        return Vec::new();
    }
    vec![Valued {
        means: format!("{} pressed", control.role),
        value: clean(&control.name),
        target: true,
    }]
}

/// The act a page action's arguments ask for, read as the tool reads them.
fn act_of(tool: &str, args: &Value) -> Option<(u32, Act)> {
    let element = u32::try_from(args.get("element")?.as_u64()?).ok()?;
    let text = |key: &str| args.get(key).and_then(Value::as_str).map(str::to_owned);
    let act = match tool {
        "click" => Act::Click,
        "double_click" => Act::DoubleClick,
        "fill" => Act::Fill(text("text")?),
        "select_option" => Act::Select(text("option")?),
        "check" => Act::Check(args.get("checked")?.as_bool()?),
        "scroll_to" => Act::ScrollTo,
        "highlight" => Act::Highlight,
        "hover" => Act::Hover,
        "press" => Act::Press(text("key")?),
        "submit" => Act::Submit,
        _ => return None,
    };
    Some((element, act))
}

/// The judge of the page action `tool` over `dom`: the site of the page as last read,
/// whether the call always asks, and whether a standing permission may cover it.
pub fn judge(tool: &'static str, dom: Rc<dyn PageDom>) -> Judge {
    Rc::new(move |args: &Value| {
        let snapshot = dom.last();
        let always_asks = match (&snapshot, act_of(tool, args)) {
            (Some(snapshot), Some((element, act))) => always_asks(snapshot, element, &act),
            (None, _) => Some("the page has not been read yet".into()),
            (Some(_), None) => Some("its arguments name no element to judge".into()),
        };
        let values = match (&snapshot, act_of(tool, args)) {
            (Some(snapshot), Some((element, act))) => acts_with(snapshot, element, &act),
            _ => Vec::new(),
        };
        Reach {
            site: snapshot.as_ref().and_then(|s| site(&s.location)),
            always_asks,
            standing: HARMLESS.contains(&tool),
            values,
        }
    })
}

#[cfg(test)]
mod tests;
