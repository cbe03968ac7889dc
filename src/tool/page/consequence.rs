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
use crate::tool::{Judge, Reach};

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
        Act::Fill(_) | Act::ScrollTo | Act::Highlight | Act::Hover => None,
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
    let tokens = tokens(text);
    let next = tokens.get(1).map(String::as_str);
    let noun = matches!(
        next,
        Some("by" | "history" | "details" | "status" | "summary" | "number" | "date")
    );
    (tokens.first().map(String::as_str) == Some(word) && !noun).then_some(word)
}

/// The first of `words` (phrases apart by `|`) that `text` says, as whole words.
fn says(text: &str, words: &'static str) -> Option<&'static str> {
    let tokens = tokens(text);
    words.split('|').find(|phrase| {
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

/// `text` in lower-case words: split at everything but letters and digits, with
/// invisible characters dropped first (so "De\u{200b}lete" is "delete").
fn tokens(text: &str) -> Vec<String> {
    clean(text)
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_owned)
        .collect()
}

/// `text` without the invisible characters a name may hide words behind.
fn clean(text: &str) -> String {
    text.chars()
        .filter(|c| !matches!(c, '\u{ad}' | '\u{200b}'..='\u{200f}' | '\u{2060}'..='\u{2064}' | '\u{feff}'))
        .collect()
}

/// The site a page is on, from its location: its scheme and host, lower case
/// (`https://shop.example`); `None` for a location with no host.
pub fn site(location: &str) -> Option<String> {
    let (scheme, rest) = location.trim().split_once("://")?;
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    (!host.is_empty() && !scheme.is_empty())
        .then(|| format!("{}://{}", scheme.to_lowercase(), host.to_lowercase()))
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
        Reach {
            site: snapshot.and_then(|s| site(&s.location)),
            always_asks,
            standing: HARMLESS.contains(&tool),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn control(id: u32, role: &str, name: &str) -> Control {
        Control {
            id,
            role: role.into(),
            name: name.into(),
            value: None,
            checked: None,
            disabled: false,
            visible: true,
            options: Vec::new(),
            href: None,
            form: None,
            sensitive: false,
            focused: false,
            frame: None,
        }
    }

    fn in_form(mut control: Control, form: u32) -> Control {
        control.form = Some(form);
        control
    }

    fn form(id: u32, name: &str, method: &str, action: &str) -> Form {
        Form {
            id,
            name: name.into(),
            action: action.into(),
            method: method.into(),
            visible: true,
        }
    }

    fn page(controls: Vec<Control>, forms: Vec<Form>) -> Snapshot {
        Snapshot {
            location: "https://shop.example/cart".into(),
            controls,
            forms,
            ..Snapshot::default()
        }
    }

    /// Whether a click on a lone control of `role` named `name` always asks.
    fn click_asks(role: &str, name: &str) -> bool {
        always_asks(&page(vec![control(1, role, name)], vec![]), 1, &Act::Click).is_some()
    }

    #[test]
    fn buttons_that_buy_pay_delete_send_or_sign_out_always_ask() {
        for name in [
            "Place order",
            "Buy now",
            "Pay $20.00",
            "Checkout",
            "Proceed to check out",
            "Confirm payment",
            "Delete",
            "Delete item 3",
            "Remove from cart",
            "Discard draft",
            "Send",
            "Send feedback",
            "Post",
            "Post comment",
            "Publish",
            "Submit",
            "Sign out",
            "Log out",
            "Unsubscribe",
            "Order now",
            "Order",
            "SEND",
        ] {
            assert!(click_asks("button", name), "{name} should always ask");
        }
    }

    #[test]
    fn the_same_words_in_other_languages_always_ask() {
        for name in [
            "Senden",
            "Jetzt kaufen",
            "Löschen",
            "Zahlungspflichtig bestellen",
            "Abmelden",
            "Envoyer",
            "Supprimer",
            "Acheter",
            "Se déconnecter",
            "Valider",
            "Enviar",
            "Eliminar",
            "Comprar",
            "Cerrar sesión",
            "Invia",
            "Verwijderen",
        ] {
            assert!(click_asks("button", name), "{name} should always ask");
        }
    }

    #[test]
    fn harmless_buttons_and_words_inside_other_words_do_not_ask() {
        for name in [
            "Next",
            "Back",
            "Add to list",
            "Show more",
            "Sort order",
            "Order by date",
            "Order history",
            "Blog post",
            "Posts",
            "Sender",
            "Display",
            "Payment methods",
            "Removed items",
            "Buying guide",
            "Deleted messages",
            "Resend code later",
            "Open menu",
            "",
        ] {
            assert!(!click_asks("button", name), "{name} should not always ask");
        }
    }

    #[test]
    fn a_link_asks_when_it_deletes_buys_or_signs_out_but_not_when_it_leads_to_a_form() {
        assert!(click_asks("link", "Log out"));
        assert!(click_asks("link", "Delete this post"));
        assert!(click_asks("link", "Checkout"));
        assert!(!click_asks("link", "Send feedback"));
        assert!(!click_asks("link", "Submit a request"));
        assert!(!click_asks("link", "Register"));
        assert!(!click_asks("link", "Pricing"));
        let mut link = control(1, "link", "My account");
        link.href = Some("https://shop.example/account/logout?next=/".into());
        let snapshot = page(vec![link.clone()], vec![]);
        assert_eq!(
            always_asks(&snapshot, 1, &Act::Click).as_deref(),
            Some("its address says \"logout\"")
        );
        link.href = Some("https://shop.example/account?from=logout".into());
        assert_eq!(always_asks(&page(vec![link], vec![]), 1, &Act::Click), None);
    }

    #[test]
    fn fields_named_like_a_sending_word_are_filled_checked_and_clicked_freely() {
        let sender = control(1, "textbox", "Sender");
        let send_copy = control(2, "checkbox", "Send me a copy");
        let delete = control(3, "textbox", "Delete reason");
        let snapshot = page(vec![sender, send_copy, delete], vec![]);
        assert_eq!(always_asks(&snapshot, 1, &Act::Fill("Ann".into())), None);
        assert_eq!(always_asks(&snapshot, 1, &Act::Click), None);
        assert_eq!(always_asks(&snapshot, 2, &Act::Check(true)), None);
        assert_eq!(always_asks(&snapshot, 2, &Act::Click), None);
        assert_eq!(always_asks(&snapshot, 3, &Act::Click), None);
    }

    #[test]
    fn turning_a_switch_or_box_named_like_a_consequential_action_on_or_off_asks() {
        let snapshot = page(
            vec![
                control(1, "switch", "Delete my data"),
                control(2, "checkbox", "Auto-renew"),
                control(3, "checkbox", "Delete after 30 days"),
                control(4, "radio", "Buy the yearly plan"),
                control(5, "checkbox", "Remember me"),
            ],
            vec![],
        );
        for id in 1..=4 {
            for act in [
                Act::Check(true),
                Act::Check(false),
                Act::Click,
                Act::Press(" ".into()),
            ] {
                assert!(
                    always_asks(&snapshot, id, &act).is_some(),
                    "[{id}] {act:?} should always ask"
                );
            }
        }
        assert_eq!(
            always_asks(&snapshot, 2, &Act::Check(true)).as_deref(),
            Some("its name says \"renew\"")
        );
        assert_eq!(always_asks(&snapshot, 5, &Act::Check(true)), None);
        assert_eq!(always_asks(&snapshot, 5, &Act::Click), None);
        assert!(always_asks(&snapshot, 9, &Act::Check(true)).is_some());
    }

    #[test]
    fn a_button_of_a_form_that_posts_submits_it_and_asks_whatever_its_name() {
        let snapshot = page(
            vec![in_form(control(1, "button", "Continue"), 9)],
            vec![form(9, "Shipping", "post", "/checkout/shipping")],
        );
        assert_eq!(
            always_asks(&snapshot, 1, &Act::Click).as_deref(),
            Some("it submits the form \"Shipping\"")
        );
    }

    #[test]
    fn a_button_of_a_form_sent_by_get_submits_it_and_asks_as_submit_and_enter_do() {
        let snapshot = page(
            vec![
                in_form(control(1, "button", "Next"), 9),
                in_form(control(2, "textbox", "Email"), 9),
                in_form(control(3, "searchbox", "Search"), 8),
                in_form(control(4, "button", "Go"), 8),
            ],
            vec![
                form(9, "Sign-up step 1", "get", "this page"),
                form(8, "", "get", "/results"),
            ],
        );
        let submits = Some("it submits the form \"Sign-up step 1\"");
        assert_eq!(always_asks(&snapshot, 1, &Act::Click).as_deref(), submits);
        assert_eq!(always_asks(&snapshot, 9, &Act::Submit).as_deref(), submits);
        let enter = Act::Press("Enter".into());
        assert_eq!(always_asks(&snapshot, 2, &enter).as_deref(), submits);
        // A search's button, its Enter and its submit look something up.
        assert_eq!(always_asks(&snapshot, 4, &Act::Click), None);
        assert_eq!(always_asks(&snapshot, 3, &enter), None);
        assert_eq!(always_asks(&snapshot, 8, &Act::Submit), None);
    }

    #[test]
    fn submitting_a_form_asks_unless_it_only_searches() {
        let snapshot = page(
            vec![
                in_form(control(1, "textbox", "Email"), 9),
                in_form(control(2, "searchbox", "Search products"), 8),
                in_form(control(3, "textbox", "Terms"), 7),
            ],
            vec![
                form(9, "Newsletter", "post", "/subscribe"),
                form(8, "", "get", "/search"),
                form(7, "Site search", "post", "/search"),
            ],
        );
        assert!(always_asks(&snapshot, 9, &Act::Submit).is_some());
        assert!(always_asks(&snapshot, 1, &Act::Submit).is_some());
        assert_eq!(always_asks(&snapshot, 8, &Act::Submit), None);
        assert_eq!(always_asks(&snapshot, 2, &Act::Submit), None);
        // A search that posts changes something on the server as far as anyone can tell.
        assert!(always_asks(&snapshot, 7, &Act::Submit).is_some());
    }

    #[test]
    fn enter_in_a_field_of_a_form_asks_but_enter_in_an_apps_own_field_does_not() {
        let snapshot = page(
            vec![
                in_form(control(1, "textbox", "Card holder"), 9),
                control(2, "textbox", "What needs to be done?"),
                control(3, "textbox", "Write a message"),
                in_form(control(4, "searchbox", "Search"), 8),
            ],
            vec![form(9, "Payment", "post", "/pay"), form(8, "", "get", "/")],
        );
        let enter = Act::Press("Enter".into());
        assert!(always_asks(&snapshot, 1, &enter).is_some());
        assert_eq!(always_asks(&snapshot, 2, &enter), None);
        assert!(always_asks(&snapshot, 3, &enter).is_some());
        assert_eq!(always_asks(&snapshot, 4, &enter), None);
        assert_eq!(always_asks(&snapshot, 1, &Act::Press("Tab".into())), None);
        assert_eq!(always_asks(&snapshot, 1, &Act::Press("a".into())), None);
    }

    #[test]
    fn enter_or_space_on_a_button_is_its_click_and_delete_on_an_item_asks() {
        let snapshot = page(
            vec![
                control(1, "button", "Place order"),
                control(2, "button", "Next"),
                control(3, "option", "Inbox item"),
                control(4, "textbox", "Note"),
            ],
            vec![],
        );
        assert!(always_asks(&snapshot, 1, &Act::Press("Enter".into())).is_some());
        assert!(always_asks(&snapshot, 1, &Act::Press("Space".into())).is_some());
        assert_eq!(always_asks(&snapshot, 2, &Act::Press("Enter".into())), None);
        assert!(always_asks(&snapshot, 3, &Act::Press("Delete".into())).is_some());
        assert_eq!(
            always_asks(&snapshot, 4, &Act::Press("Backspace".into())),
            None
        );
    }

    #[test]
    fn every_name_of_enter_or_space_on_place_order_asks_and_control_characters_press_nothing() {
        let snapshot = page(vec![control(1, "button", "Place order")], vec![]);
        for name in [
            " ", "Space", "space", "Enter", "enter", " Enter ", "\r", "\n", "\t",
        ] {
            let press = Act::Press(name.into());
            assert!(
                always_asks(&snapshot, 1, &press).is_some(),
                "{name:?} on Place order should always ask"
            );
        }
        assert_eq!(
            always_asks(&snapshot, 1, &Act::Press("\r".into())).as_deref(),
            Some("\"\\r\" is not a key it knows")
        );
        assert_eq!(
            always_asks(&snapshot, 1, &Act::Press(" ".into())).as_deref(),
            Some("its name says \"place order\"")
        );
        assert_eq!(always_asks(&snapshot, 1, &Act::Press("Tab".into())), None);
    }

    #[test]
    fn a_character_whose_key_code_is_deletes_asks_on_an_item_as_delete_does() {
        let snapshot = page(vec![control(3, "option", "Inbox item")], vec![]);
        // "." is sent with keyCode 46, which apps read as Delete.
        assert!(always_asks(&snapshot, 3, &Act::Press(".".into())).is_some());
        assert_eq!(always_asks(&snapshot, 3, &Act::Press("j".into())), None);
    }

    #[test]
    fn showing_moving_to_or_typing_never_asks_and_choosing_a_delete_option_does() {
        let snapshot = page(vec![control(1, "button", "Delete account")], vec![]);
        for act in [Act::ScrollTo, Act::Highlight, Act::Hover] {
            assert_eq!(always_asks(&snapshot, 1, &act), None);
        }
        let list = page(vec![control(2, "combobox", "Bulk action")], vec![]);
        assert!(always_asks(&list, 2, &Act::Select("Delete selected".into())).is_some());
        assert_eq!(always_asks(&list, 2, &Act::Select("Archive".into())), None);
    }

    #[test]
    fn any_action_inside_another_sites_frame_asks_even_one_a_grant_would_cover() {
        let mut ad = control(1, "button", "Next");
        ad.frame = Some("https://ads.example".into());
        let mut field = in_form(control(2, "searchbox", "Search"), 8);
        field.frame = Some("https://ads.example".into());
        let snapshot = page(
            vec![ad, field, control(3, "button", "Next")],
            vec![form(8, "", "get", "/search")],
        );
        let reason = Some("it is inside a frame of https://ads.example, another site");
        for act in [
            Act::Click,
            Act::Hover,
            Act::ScrollTo,
            Act::Press("Tab".into()),
        ] {
            assert_eq!(
                always_asks(&snapshot, 1, &act).as_deref(),
                reason,
                "{act:?}"
            );
        }
        assert_eq!(
            always_asks(&snapshot, 2, &Act::Fill("shoes".into())).as_deref(),
            reason
        );
        assert_eq!(always_asks(&snapshot, 8, &Act::Submit).as_deref(), reason);
        assert_eq!(
            always_asks(&snapshot, 3, &Act::Click),
            None,
            "the page's own"
        );
    }

    #[test]
    fn the_frame_the_extensions_panel_names_is_read_from_its_snapshot_and_judged() {
        let merged = serde_json::json!({
            "location": "https://shop.example/cart",
            "controls": [
                {"id": 1, "role": "button", "name": "Next", "value": null, "checked": null,
                 "disabled": false, "visible": true, "options": [], "href": null,
                 "form": null, "frame": "https://ads.example"},
                {"id": 2, "role": "button", "name": "Next", "value": null, "checked": null,
                 "disabled": false, "visible": true, "options": [], "href": null,
                 "form": null},
            ],
        });
        let snapshot: Snapshot = crate::base::json::from_value(merged).unwrap();
        assert_eq!(
            snapshot.controls[0].frame.as_deref(),
            Some("https://ads.example")
        );
        assert_eq!(snapshot.controls[1].frame, None);
        assert!(always_asks(&snapshot, 1, &Act::Click).is_some());
        assert_eq!(always_asks(&snapshot, 2, &Act::Click), None);
    }

    #[test]
    fn an_element_not_on_the_page_as_read_asks() {
        let snapshot = page(vec![control(1, "button", "Next")], vec![]);
        assert!(always_asks(&snapshot, 7, &Act::Click).is_some());
        assert!(always_asks(&snapshot, 7, &Act::Submit).is_some());
    }

    #[test]
    fn invisible_characters_do_not_hide_a_word() {
        assert!(click_asks("button", "De\u{200b}lete"));
        assert!(click_asks("button", "Pl\u{ad}ace order"));
    }

    #[test]
    fn a_site_is_the_scheme_and_host_of_the_location() {
        assert_eq!(
            site("https://Shop.Example:8443/cart").as_deref(),
            Some("https://shop.example:8443")
        );
        assert_eq!(
            site("http://localhost/").as_deref(),
            Some("http://localhost")
        );
        assert_eq!(site("about:blank"), None);
        assert_eq!(site("file:///home/a.html"), None);
    }

    #[test]
    fn a_standing_permission_may_cover_scrolling_and_highlighting_but_not_hover() {
        let dom: Rc<dyn PageDom> = Rc::new(Read(page(vec![control(1, "button", "Menu")], vec![])));
        let reach = |tool| judge(tool, Rc::clone(&dom))(&serde_json::json!({"element": 1}));
        assert!(reach("scroll_to").standing);
        assert!(reach("highlight").standing);
        let hover = reach("hover");
        assert_eq!((hover.standing, hover.always_asks), (false, None));
        assert_eq!(hover.site.as_deref(), Some("https://shop.example"));
    }

    /// A page that was read once and is never acted on.
    struct Read(Snapshot);

    impl PageDom for Read {
        fn snapshot(&self) -> futures::future::LocalBoxFuture<'_, Result<Snapshot, String>> {
            Box::pin(async { Ok(self.0.clone()) })
        }
        fn last(&self) -> Option<Snapshot> {
            Some(self.0.clone())
        }
        fn perform<'a>(
            &'a self,
            _: u32,
            _: &'a Act,
        ) -> futures::future::LocalBoxFuture<'a, Result<(), String>> {
            Box::pin(async { Err("a read page is not acted on".into()) })
        }
        fn settle(&self) -> futures::future::LocalBoxFuture<'static, ()> {
            Box::pin(async {})
        }
    }

    #[test]
    fn the_act_is_read_from_each_actions_arguments() {
        let args = serde_json::json!({"element": 4, "key": "Enter"});
        assert_eq!(
            act_of("press", &args),
            Some((4, Act::Press("Enter".into())))
        );
        let args = serde_json::json!({"element": 4, "checked": true});
        assert_eq!(act_of("check", &args), Some((4, Act::Check(true))));
        assert_eq!(act_of("click", &serde_json::json!({})), None);
        assert_eq!(act_of("launch", &serde_json::json!({"element": 1})), None);
    }
}
