//! A field judged by what it shows once the page settled (issue 57): a fill that
//! opened nothing is followed by the focus leaving the field, as a person moving on
//! takes it, and the field is read again; a value its widget rewrote or refused then
//! is a failed action that says what the field shows; a read-only field's refusal
//! names the controls beside it; a field whose typing opened suggestions keeps the
//! focus for the next step.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use std::cell::RefCell;
use std::rc::Rc;

use familiar::llm::message::ToolCall;
use familiar::tool::page::{self, Act, PageDom, Snapshot};
use familiar::tool::{CallContext, ToolRegistry};
use familiar_page::READ_ONLY;
use futures::executor::block_on;
use futures::future::LocalBoxFuture;
use serde_json::{Value, json};

#[allow(dead_code)]
#[path = "common/fake_page.rs"]
mod fake_page;
use fake_page::control;

/// A booking form: a time field [1] whose widget takes only "h:mm AM/PM" and puts
/// "12:00" back on blur, a read-only date field [2] with its calendar's button [3], a
/// city field [4] whose typing shows a suggestion [5].
struct Booking {
    page: RefCell<Snapshot>,
    done: RefCell<Vec<(u32, Act)>>,
}

impl Booking {
    fn new() -> Rc<Self> {
        let mut suggestion = control(5, "option", "Lisbon");
        suggestion.visible = false;
        let fields = [(1, "Start time"), (2, "Start date"), (4, "City")].map(|(id, name)| {
            let mut field = control(id, "textbox", name);
            field.value = Some(String::new());
            field
        });
        let [time, date, city] = fields;
        Rc::new(Self {
            page: RefCell::new(Snapshot {
                title: "Book a room".into(),
                controls: vec![
                    time,
                    date,
                    control(3, "button", "Open calendar"),
                    city,
                    suggestion,
                ],
                ..Snapshot::default()
            }),
            done: RefCell::new(Vec::new()),
        })
    }

    fn act(&self, element: u32, act: &Act) -> Result<(), String> {
        self.done.borrow_mut().push((element, act.clone()));
        let mut page = self.page.borrow_mut();
        match act {
            Act::Fill(_) if element == 2 => {
                return Err(format!(
                    "{READ_ONLY}: work it through its widget's own controls"
                ));
            }
            Act::Fill(text) => {
                for c in &mut page.controls {
                    c.focused = c.id == element;
                    if c.id == element {
                        c.value = Some(text.clone());
                    }
                    if element == 4 && c.id == 5 {
                        c.visible = true;
                    }
                }
            }
            Act::Leave => {
                for c in page.controls.iter_mut().filter(|c| c.id == element) {
                    c.focused = false;
                    let value = c.value.clone().unwrap_or_default();
                    let taken = value.ends_with(" AM") || value.ends_with(" PM");
                    if element == 1 && !taken {
                        c.value = Some("12:00".into());
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }
}

impl PageDom for Booking {
    fn snapshot(&self) -> LocalBoxFuture<'_, Result<Snapshot, String>> {
        let page = self.page.borrow().clone();
        Box::pin(async { Ok(page) })
    }
    fn last(&self) -> Option<Snapshot> {
        Some(self.page.borrow().clone())
    }
    fn perform<'a>(&'a self, element: u32, act: &'a Act) -> LocalBoxFuture<'a, Result<(), String>> {
        let done = self.act(element, act);
        Box::pin(async { done })
    }
    fn settle(&self) -> LocalBoxFuture<'static, ()> {
        Box::pin(async {})
    }
}

fn fill(tools: &ToolRegistry, element: u32, text: &str) -> Result<Value, String> {
    let call = ToolCall {
        id: format!("c{element}").into(),
        name: "fill".into(),
        arguments: json!({ "element": element, "text": text })
            .to_string()
            .into(),
    };
    block_on(tools.call(&call, CallContext::default())).map_err(|e| e.to_string())
}

fn tools(page: &Rc<Booking>) -> ToolRegistry {
    let mut tools = ToolRegistry::new();
    page::register(&mut tools, Rc::clone(page) as Rc<dyn PageDom>);
    tools
}

fn acts(page: &Booking) -> Vec<(u32, Act)> {
    page.done.borrow().clone()
}

#[test]
fn a_time_its_widget_puts_back_on_blur_is_a_failed_fill_that_says_what_the_field_shows() {
    let page = Booking::new();
    let why = fill(&tools(&page), 1, "14:30").unwrap_err();
    assert!(
        why.contains("the field shows \"12:00\" after the page settled, not \"14:30\": the value did not take"),
        "{why}"
    );
    assert_eq!(
        acts(&page),
        [(1, Act::Fill("14:30".into())), (1, Act::Leave)]
    );
}

#[test]
fn a_time_in_the_widgets_own_form_takes_and_the_report_says_the_focus_left() {
    let page = Booking::new();
    let done = fill(&tools(&page), 1, "2:30 PM").unwrap();
    assert_eq!(
        done["changes"][0],
        "element now: [1] textbox \"Start time\" value=\"2:30 PM\""
    );
    assert_eq!(
        done["changes"][1],
        "the focus then left the field, as a person moving on takes it"
    );
    assert_eq!(
        acts(&page),
        [(1, Act::Fill("2:30 PM".into())), (1, Act::Leave)]
    );
}

#[test]
fn a_read_only_field_is_refused_with_the_controls_beside_it() {
    let page = Booking::new();
    let why = fill(&tools(&page), 2, "2025-05-01").unwrap_err();
    assert!(why.contains(READ_ONLY), "{why}");
    assert!(
        why.contains("beside it: [1] textbox \"Start time\""),
        "{why}"
    );
    assert!(why.contains("[3] button \"Open calendar\""), "{why}");
    assert_eq!(acts(&page), [(2, Act::Fill("2025-05-01".into()))]);
}

#[test]
fn a_field_whose_typing_showed_suggestions_keeps_the_focus() {
    let page = Booking::new();
    let done = fill(&tools(&page), 4, "Lis").unwrap();
    assert!(done["changes"].to_string().contains("Lisbon"), "{done}");
    assert_eq!(acts(&page), [(4, Act::Fill("Lis".into()))]);
}
