//! A popup that closed while a person was asked (issue 57): the agent opened a menu,
//! the page closed it (a press outside, a blur) before the next step, approved on the
//! menu as the card showed it, could run. The action opens it again, the way it was
//! opened, and says so; an opener that could ask a person is never pressed again
//! unasked, and the step fails, saying why.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use familiar::llm::message::ToolCall;
use familiar::tool::page::{self, Act, PageDom, Snapshot};
use familiar::tool::{CallContext, ToolRegistry};
use futures::executor::block_on;
use futures::future::LocalBoxFuture;
use serde_json::{Value, json};

#[allow(dead_code)]
#[path = "common/fake_page.rs"]
mod fake_page;
use fake_page::control;

/// A page with one button that toggles a menu of one item; it remembers the snapshot
/// read last, as the browser's page does for the approval card.
struct MenuPage {
    opener: &'static str,
    open: Cell<bool>,
    last: RefCell<Option<Snapshot>>,
    done: RefCell<Vec<(u32, Act)>>,
}

impl MenuPage {
    fn new(opener: &'static str) -> Rc<Self> {
        Rc::new(Self {
            opener,
            open: Cell::new(false),
            last: RefCell::new(None),
            done: RefCell::new(Vec::new()),
        })
    }

    fn page(&self) -> Snapshot {
        let mut item = control(2, "menuitem", "Archive project");
        item.visible = self.open.get();
        Snapshot {
            title: "Projects".into(),
            location: "https://projects.example/".into(),
            controls: vec![control(1, "button", self.opener), item],
            ..Snapshot::default()
        }
    }
}

impl PageDom for MenuPage {
    fn snapshot(&self) -> LocalBoxFuture<'_, Result<Snapshot, String>> {
        let page = self.page();
        *self.last.borrow_mut() = Some(page.clone());
        Box::pin(async { Ok(page) })
    }
    fn last(&self) -> Option<Snapshot> {
        self.last.borrow().clone()
    }
    fn perform<'a>(&'a self, element: u32, act: &'a Act) -> LocalBoxFuture<'a, Result<(), String>> {
        self.done.borrow_mut().push((element, act.clone()));
        if element == 1 {
            self.open.set(!self.open.get());
        }
        Box::pin(async { Ok(()) })
    }
    fn settle(&self) -> LocalBoxFuture<'static, ()> {
        Box::pin(async {})
    }
}

fn click(tools: &ToolRegistry, element: u32) -> Result<Value, String> {
    let call = ToolCall {
        id: format!("c{element}").into(),
        name: "click".into(),
        arguments: json!({ "element": element }).to_string().into(),
    };
    block_on(tools.call(&call, CallContext::default())).map_err(|e| e.to_string())
}

fn tools(page: &Rc<MenuPage>) -> ToolRegistry {
    let mut tools = ToolRegistry::new();
    page::register(&mut tools, Rc::clone(page) as Rc<dyn PageDom>);
    tools
}

#[test]
fn a_menu_that_closed_while_a_person_was_asked_is_opened_again_the_way_it_was() {
    let page = MenuPage::new("Actions");
    let tools = tools(&page);
    click(&tools, 1).unwrap();
    assert!(page.open.get(), "the menu opened");
    // The card for the next step is judged on the open menu; then the page closes it.
    block_on(page.snapshot()).unwrap();
    page.open.set(false);
    let done = click(&tools, 2).unwrap();
    let said = done["done"].as_str().unwrap();
    assert!(said.contains("element [1] opened it again first"), "{said}");
    let clicked: Vec<u32> = page.done.borrow().iter().map(|(id, _)| *id).collect();
    assert_eq!(clicked, [1, 1, 2]);
}

#[test]
fn a_menu_still_open_is_not_opened_again() {
    let page = MenuPage::new("Actions");
    let tools = tools(&page);
    click(&tools, 1).unwrap();
    block_on(page.snapshot()).unwrap();
    let done = click(&tools, 2).unwrap();
    assert!(!done["done"].as_str().unwrap().contains("again"), "{done}");
    let clicked: Vec<u32> = page.done.borrow().iter().map(|(id, _)| *id).collect();
    assert_eq!(clicked, [1, 2]);
}

#[test]
fn an_opener_that_could_ask_a_person_is_not_pressed_again_and_the_step_says_why() {
    let page = MenuPage::new("Delete everything");
    let tools = tools(&page);
    click(&tools, 1).unwrap();
    block_on(page.snapshot()).unwrap();
    page.open.set(false);
    let refused = click(&tools, 2).unwrap_err();
    assert!(refused.contains("was in a popup that closed"), "{refused}");
    assert!(refused.contains("asks a person"), "{refused}");
    let clicked: Vec<u32> = page.done.borrow().iter().map(|(id, _)| *id).collect();
    assert_eq!(
        clicked,
        [1],
        "Delete everything was pressed once, by its own card"
    );
}
