//! The page actions as the registry offers them: ten actions on an element by its
//! number (click, fill, select_option, check, scroll_to, highlight, press, submit,
//! double_click, hover), each asking a person first, each checked against the page
//! before it runs (and against the page its approval was judged on: an element that
//! changed since is not acted on) and reporting what changed after; a field is held
//! to what was asked of it once the page settled (`settled`), and one that does not
//! show it is a failed action. Their arguments' schemas are text written at compile
//! time (`SchemaText`; a test in `tools` holds them to what schemars derives).

use std::cell::RefCell;
use std::rc::Rc;

use schemars::JsonSchema;
use serde::Serialize;

use super::consequence::always_asks;
use super::settled::{judge, leaves, read_only};
use super::{Act, PageDom, Snapshot, changes, clip, prepare};
use crate::base::json::schema::parameters;
use crate::base::json::{Read, SchemaText};
use crate::tool::{ToolKind, ToolRegistry};

/// The actions' names.
pub const ACTIONS: [&str; 10] = [
    "click",
    "fill",
    "select_option",
    "check",
    "scroll_to",
    "highlight",
    "press",
    "submit",
    "double_click",
    "hover",
];

/// The longest text `fill` types.
pub(super) const FILL_LIMIT: usize = 5_000;

#[derive(Debug, JsonSchema, Read, SchemaText)]
#[serde(deny_unknown_fields)]
pub(super) struct ElementArgs {
    /// The element's number from page_elements.
    element: u32,
}

#[derive(Debug, JsonSchema, Read, SchemaText)]
#[serde(deny_unknown_fields)]
pub(super) struct FillArgs {
    /// The element's number from page_elements.
    element: u32,
    /// The text the field should hold (replaces what it holds).
    text: String,
}

#[derive(Debug, JsonSchema, Read, SchemaText)]
#[serde(deny_unknown_fields)]
pub(super) struct SelectArgs {
    /// The element's number from page_elements.
    element: u32,
    /// The option's text, as page_elements lists it.
    option: String,
}

#[derive(Debug, JsonSchema, Read, SchemaText)]
#[serde(deny_unknown_fields)]
pub(super) struct CheckArgs {
    /// The element's number from page_elements.
    element: u32,
    /// true to check, false to uncheck.
    checked: bool,
}

#[derive(Debug, JsonSchema, Read, SchemaText)]
#[serde(deny_unknown_fields)]
pub(super) struct PressArgs {
    /// The element's number from page_elements.
    element: u32,
    /// Enter, Escape, Tab, ArrowUp, ArrowDown, ArrowLeft, ArrowRight, Home, End, Space, Backspace, Delete, PageUp, PageDown, or one character.
    key: String,
}

#[derive(Debug, Serialize)]
struct Done {
    done: String,
    changes: Vec<String>,
}

/// Adds the actions over `dom`.
pub(super) fn register_actions(registry: &mut ToolRegistry, dom: &Rc<dyn PageDom>) {
    let opened = Opened::default();
    act_tool(
        registry,
        dom,
        &opened,
        "click",
        "Clicks an element of the page (a button, a link, a tab, a menu item, …) by its number.",
        |a: ElementArgs| Ok((a.element, Act::Click)),
    );
    act_tool(
        registry,
        dom,
        &opened,
        "fill",
        "Types text into a field of the page by its number (an input, a textarea, a contenteditable editor), replacing what it holds, with the events a person's typing fires (frameworks' controlled inputs hear them). Never into a sensitive field (a password, a payment card's details, a one-time code): the person types those. Not into a read-only field (a date or time picker's): work its widget's own controls.",
        |a: FillArgs| {
            if a.text.chars().count() > FILL_LIMIT {
                return Err(format!("the text is longer than {FILL_LIMIT} characters"));
            }
            Ok((a.element, Act::Fill(a.text)))
        },
    );
    act_tool(
        registry,
        dom,
        &opened,
        "select_option",
        "Chooses an option of a list of the page by the list's number and the option's text: a select, or an ARIA combobox or listbox (opened first, then its option clicked).",
        |a: SelectArgs| Ok((a.element, Act::Select(a.option))),
    );
    act_tool(
        registry,
        dom,
        &opened,
        "check",
        "Checks or unchecks a checkbox, or checks a radio button, of the page by its number.",
        |a: CheckArgs| Ok((a.element, Act::Check(a.checked))),
    );
    act_tool(
        registry,
        dom,
        &opened,
        "scroll_to",
        "Scrolls the page so an element (by its number) is in view.",
        |a: ElementArgs| Ok((a.element, Act::ScrollTo)),
    );
    act_tool(
        registry,
        dom,
        &opened,
        "highlight",
        "Outlines an element of the page (by its number) for a few seconds, to show it to the user.",
        |a: ElementArgs| Ok((a.element, Act::Highlight)),
    );
    act_tool(
        registry,
        dom,
        &opened,
        "press",
        "Presses a key on an element of the page by its number, as a person would: Enter in a field adds an item where the app takes Enter, and submits the field's form; Enter or Space on a button clicks it; Tab moves the focus on; a character is typed into a field. Never on a sensitive field.",
        |a: PressArgs| Ok((a.element, Act::Press(a.key))),
    );
    act_tool(
        registry,
        dom,
        &opened,
        "submit",
        "Submits a form of the page, by the form's number (page_forms) or any of its fields' numbers, as its submit button would.",
        |a: ElementArgs| Ok((a.element, Act::Submit)),
    );
    act_tool(
        registry,
        dom,
        &opened,
        "double_click",
        "Double-clicks an element of the page by its number (many apps open an item for editing so).",
        |a: ElementArgs| Ok((a.element, Act::DoubleClick)),
    );
    act_tool(
        registry,
        dom,
        &opened,
        "hover",
        "Moves the pointer over an element of the page by its number, so a menu or tip that opens on hover opens.",
        |a: ElementArgs| Ok((a.element, Act::Hover)),
    );
}

/// Registers one action, its arguments' schema `A`'s (written at compile time): it reads the
/// page, refuses an element that changed since its approval was judged and shown
/// ([`unchanged`]), checks the element, acts, lets the page react and reports what it did and
/// what changed. Each asks a person first.
fn act_tool<A>(
    registry: &mut ToolRegistry,
    dom: &Rc<dyn PageDom>,
    opened: &Opened,
    name: &str,
    description: &str,
    to_act: fn(A) -> Result<(u32, Act), String>,
) where
    A: serde::de::DeserializeOwned + SchemaText + 'static,
{
    let page = Rc::clone(dom);
    let opened = Rc::clone(opened);
    let description = format!(
        "{description} A person approves every call first. It fails when the element \
         is gone, hidden or disabled, or when the field does not show what was asked \
         once the page settled; it reports what changed on the page."
    );
    let parameters = parameters::<A>();
    registry.register_with(
        name,
        ToolKind::Action,
        description,
        parameters,
        move |args: A, _| {
            let page = Rc::clone(&page);
            let opened = Rc::clone(&opened);
            async move {
                // The page as the judge and the approval card saw it; read before
                // anything else this call awaits.
                let shown = page.last();
                let (element, act) = to_act(args)?;
                let mut before = page.snapshot().await?;
                let mut reopened = None;
                if let Some(opener) = closed_since(&before, element, &opened)? {
                    before = reopen(&*page, &before, &opener).await?;
                    reopened = Some(opener);
                }
                if let Some(shown) = &shown {
                    unchanged(shown, &before, element, &act)?;
                }
                let mut done = prepare(&before, element, &act)?;
                if let Some((id, _)) = reopened {
                    done = format!("{done} (its popup had closed while the person was asked: element [{id}] opened it again first)");
                }
                perform(&*page, &before, element, &act)
                    .await
                    .map_err(|problem| read_only(problem, &before, element))?;
                page.settle().await;
                let (after, left) = settled(&*page, &before, element, &act).await?;
                *opened.borrow_mut() = Opener::of(element, &act, &before, &after);
                report(done, &act, element, (&before, &after), left)
            }
        },
    );
    let page = Rc::clone(dom);
    registry.set_describer(
        name,
        Rc::new(move |args: &serde_json::Value| {
            let (element, act) =
                to_act(crate::base::json::from_value::<A>(args.clone()).ok()?).ok()?;
            let snapshot = page.last()?;
            Some(match prepare(&snapshot, element, &act) {
                Ok(done) => done,
                Err(problem) => format!("Nothing, it will fail: {problem}"),
            })
        }),
    );
}

/// The last action that opened something (a menu, a list of suggestions), on which
/// element, and the controls it showed that were not shown before it; kept until
/// another action runs.
type Opened = Rc<RefCell<Option<Opener>>>;

#[derive(Clone)]
struct Opener {
    element: u32,
    act: Act,
    showed: Vec<u32>,
}

impl Opener {
    /// The opener `act` on `element` was, when `after` shows controls `before` did not.
    fn of(element: u32, act: &Act, before: &Snapshot, after: &Snapshot) -> Option<Self> {
        let shown =
            |page: &Snapshot, id: u32| page.controls.iter().any(|c| c.id == id && c.visible);
        let showed: Vec<u32> = after
            .controls
            .iter()
            .filter(|c| c.visible && !shown(before, c.id))
            .map(|c| c.id)
            .collect();
        (!showed.is_empty()).then(|| Self {
            element,
            act: act.clone(),
            showed,
        })
    }
}

/// The action that showed `element`, when it is hidden `now` (a press or a blur while
/// a person was asked closes menus and suggestion lists), and its opener is still on
/// the page; `None` otherwise. Refused, saying why, when doing that action again
/// could ask a person: it is then not the harmless opener it looked.
fn closed_since(
    now: &Snapshot,
    element: u32,
    opened: &Opened,
) -> Result<Option<(u32, Act)>, String> {
    let Some(opener) = opened.borrow().clone() else {
        return Ok(None);
    };
    let visible = |id: u32| now.controls.iter().any(|c| c.id == id && c.visible);
    if !opener.showed.contains(&element) || visible(element) || !visible(opener.element) {
        return Ok(None);
    }
    let id = opener.element;
    match always_asks(now, id, &opener.act) {
        None => Ok(Some((id, opener.act))),
        Some(why) => Err(format!(
            "element [{element}] was in a popup that closed while the person was asked; \
             element [{id}] opened it, and doing that again asks a person ({why}): call \
             it again first"
        )),
    }
}

/// How many more times the page settles (50 ms at least each) before the focus leaves
/// a filled field.
const PAUSE: usize = 6;

/// What the report says when the focus left a filled field.
const LEFT: &str = "the focus then left the field, as a person moving on takes it";

/// The page once it settled after `act` on `element`: read again after the focus
/// left a filled field that opened nothing ([`leaves`]), so a widget that rewrites
/// or refuses a value on blur has done so; and whether the focus left it.
async fn settled(
    page: &dyn PageDom,
    before: &Snapshot,
    element: u32,
    act: &Act,
) -> Result<(Snapshot, bool), String> {
    let after = page.snapshot().await?;
    if !leaves(before, &after, element, act) {
        return Ok((after, false));
    }
    // A person pauses before moving on, and an autocomplete waits a moment before it
    // searches (jQuery UI 300 ms), cancelling the search if the field is left: the page
    // settles over that pause, then is read once more.
    for _ in 0..PAUSE {
        page.settle().await;
    }
    let paused = page.snapshot().await?;
    if !leaves(before, &paused, element, act) {
        return Ok((paused, false));
    }
    leave(page, element).await
}

/// The page after the focus left filled field `element`, and whether it left.
async fn leave(page: &dyn PageDom, element: u32) -> Result<(Snapshot, bool), String> {
    // A field gone by now has nothing to leave; its report says it is gone.
    let _ = page.perform(element, &Act::Leave).await;
    page.settle().await;
    let left = page.snapshot().await?;
    // The browser keeps the focus in a field tied to a popup.
    let kept = left.controls.iter().any(|c| c.id == element && c.focused);
    Ok((left, !kept))
}

/// What `act` on `element` did and what changed from `pages` (before, after), the
/// focus's leaving the field first when it `left`; a failure, saying what the field
/// shows, when that is not what was asked ([`judge`]).
fn report(
    done: String,
    act: &Act,
    element: u32,
    (before, after): (&Snapshot, &Snapshot),
    left: bool,
) -> Result<Done, String> {
    let mut changes = changes(before, after, element);
    if left {
        // After the field's own new state, which comes first.
        let own = changes.first().is_some_and(|l| l.starts_with("element "));
        changes.insert(usize::from(own), LEFT.into());
    }
    match judge(act, after, element) {
        Err(why) => Err(format!(
            "{done}: {why}. On the page: {}",
            changes.join("; ")
        )),
        Ok(note) => {
            changes.splice(0..0, note);
            Ok(Done { done, changes })
        }
    }
}

/// Does the opening action again, and reads the page it leaves.
async fn reopen(
    page: &dyn PageDom,
    before: &Snapshot,
    opener: &(u32, Act),
) -> Result<Snapshot, String> {
    let (id, act) = opener;
    perform(page, before, *id, act)
        .await
        .map_err(|problem| format!("its popup closed, and opening it again failed: {problem}"))?;
    page.settle().await;
    page.snapshot().await
}

/// Refuses `act` on `element` when the element is not what it was on `shown`, the
/// page its approval was judged and described from (the card may have waited
/// minutes; a wizard's "Next" may have become "Place order" since): its role, name,
/// form, or whether the action always asks. The model reads the page again and
/// calls anew, to be judged (and asked) on what is there now.
fn unchanged(shown: &Snapshot, now: &Snapshot, element: u32, act: &Act) -> Result<(), String> {
    let whole = |page| target(page, element, act, usize::MAX);
    if whole(shown) != whole(now) {
        let said =
            |page| target(page, element, act, 80).unwrap_or_else(|| "not on the page".into());
        return Err(format!(
            "element [{element}] changed since it was shown for approval: it was {}, it is \
             now {}; read the page again",
            said(shown),
            said(now)
        ));
    }
    let (then, now) = (
        always_asks(shown, element, act),
        always_asks(now, element, act),
    );
    if then != now {
        let said = |why: Option<String>| match why {
            Some(why) => format!("it always asks a person ({why})"),
            None => "a grant may cover it".into(),
        };
        return Err(format!(
            "what element [{element}] does changed since it was shown for approval: then {}, \
             now {}; read the page again",
            said(then),
            said(now)
        ));
    }
    Ok(())
}

/// What `act` on `element` acts on in `page`, in words that differ when it is
/// another thing: the element's role and name and its form (for a submit by the
/// form's number, the form), names cut at `max` characters.
fn target(page: &Snapshot, element: u32, act: &Act, max: usize) -> Option<String> {
    let form = |id: u32| {
        let form = page.forms.iter().find(|f| f.id == id)?;
        Some(format!(
            "the form \"{}\" [{id}] ({} → {})",
            clip(&form.name, max),
            form.method,
            clip(&form.action, max)
        ))
    };
    if let (Act::Submit, Some(form)) = (act, form(element)) {
        return Some(form);
    }
    let control = page.controls.iter().find(|c| c.id == element)?;
    let of = control.form.and_then(form).map(|f| format!(" of {f}"));
    let inside = control
        .frame
        .as_ref()
        .map(|o| format!(" inside a frame of {o}"));
    Some(format!(
        "the {} \"{}\"{}{}",
        control.role,
        clip(&control.name, max),
        of.unwrap_or_default(),
        inside.unwrap_or_default()
    ))
}

/// Does `act` to `element`. An ARIA list (no native options) whose option is not
/// shown yet is opened with a click first, and asked again once the page has drawn it.
async fn perform(
    page: &dyn PageDom,
    before: &Snapshot,
    element: u32,
    act: &Act,
) -> Result<(), String> {
    let aria_list = matches!(act, Act::Select(_))
        && before
            .controls
            .iter()
            .any(|c| c.id == element && c.options.is_empty());
    match page.perform(element, act).await {
        Err(_) if aria_list => {
            page.perform(element, &Act::Click).await?;
            page.settle().await;
            page.perform(element, act)
                .await
                .map_err(|problem| format!("the list was opened, but {problem}"))
        }
        done => done,
    }
}
