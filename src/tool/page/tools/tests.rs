//! The tests of `tools`, kept apart from its code.

use std::cell::Cell;

use futures::executor::block_on;
use serde_json::json;

use super::super::actions::{CheckArgs, ElementArgs, FILL_LIMIT, FillArgs, PressArgs, SelectArgs};
use super::super::index::tests::control;
use super::super::{Act, Block, Region, Snapshot};
use super::*;
use crate::llm::message::ToolCall;
use crate::tool::{CallContext, ToolError};

/// A page in memory: acting on it changes its snapshot as a browser would.
struct FakePage {
    page: RefCell<Snapshot>,
    /// The page as last read, when a test holds it apart from the page now (the
    /// extension's cached snapshot, which a card describes while the page moves on).
    shown: RefCell<Option<Snapshot>>,
    acts: RefCell<Vec<(u32, Act)>>,
    settled: Cell<u32>,
}

impl PageDom for FakePage {
    fn snapshot(&self) -> futures::future::LocalBoxFuture<'_, Result<Snapshot, String>> {
        Box::pin(async { Ok(self.page.borrow().clone()) })
    }
    fn last(&self) -> Option<Snapshot> {
        let shown = self.shown.borrow().clone();
        shown.or_else(|| Some(self.page.borrow().clone()))
    }
    fn perform<'a>(
        &'a self,
        element: u32,
        act: &'a Act,
    ) -> futures::future::LocalBoxFuture<'a, Result<(), String>> {
        Box::pin(async move { self.act(element, act) })
    }
    fn settle(&self) -> futures::future::LocalBoxFuture<'static, ()> {
        self.settled.set(self.settled.get() + 1);
        Box::pin(async {})
    }
}

impl FakePage {
    fn act(&self, element: u32, act: &Act) -> Result<(), String> {
        self.acts.borrow_mut().push((element, act.clone()));
        let mut page = self.page.borrow_mut();
        if let (Act::Fill(text), Some(c)) =
            (act, page.controls.iter_mut().find(|c| c.id == element))
        {
            c.value = Some(text.clone());
        }
        let text = |text: String| Block {
            heading: None,
            text,
            region: Region::Main,
            frame: None,
        };
        match act {
            // The ARIA list [3] opens on a click: its options appear.
            Act::Click if element == 3 => {
                page.controls.push(control(10, "option", "Small"));
                page.controls.push(control(11, "option", "Large"));
            }
            Act::Click => page.blocks.push(text("Sent.".into())),
            Act::Select(option) => {
                let shown = page
                    .controls
                    .iter()
                    .any(|c| c.role == "option" && c.name.eq_ignore_ascii_case(option));
                if !shown {
                    return Err(format!("no option \"{option}\" is shown"));
                }
                page.controls.retain(|c| c.role != "option");
                if let Some(list) = page.controls.iter_mut().find(|c| c.id == element) {
                    list.name = format!("Size: {option}");
                }
            }
            // An app that adds the field's text as an item on Enter.
            Act::Press(key) if key == "Enter" => {
                let field = page.controls.iter_mut().find(|c| c.id == element);
                let typed = field.and_then(|c| c.value.take()).unwrap_or_default();
                page.blocks.push(text(format!("Item: {typed}")));
            }
            _ => {}
        }
        Ok(())
    }
}

fn setup() -> (Rc<FakePage>, ToolRegistry) {
    let mut send = control(2, "button", "Send");
    send.visible = true;
    let page = Rc::new(FakePage {
        page: RefCell::new(Snapshot {
            title: "Contact".into(),
            blocks: vec![
                Block {
                    heading: Some(1),
                    text: "Contact us".into(),
                    region: Region::Main,
                    frame: None,
                },
                Block {
                    heading: None,
                    text: "Menu".into(),
                    region: Region::Boilerplate,
                    frame: None,
                },
            ],
            controls: vec![control(1, "textbox", "Message"), send],
            ..Snapshot::default()
        }),
        shown: RefCell::new(None),
        acts: RefCell::new(Vec::new()),
        settled: Cell::new(0),
    });
    let mut registry = ToolRegistry::new();
    register(&mut registry, Rc::clone(&page) as Rc<dyn PageDom>);
    (page, registry)
}

fn call(registry: &ToolRegistry, name: &str, args: Value) -> Result<Value, ToolError> {
    block_on(registry.call(&tool_call(name, args), CallContext::default()))
}

fn tool_call(name: &str, args: Value) -> ToolCall {
    ToolCall {
        id: "c".into(),
        name: name.into(),
        arguments: args.to_string().into(),
    }
}

type Value = serde_json::Value;

#[test]
fn lookups_are_data_actions_ask_always_and_every_result_is_others_text() {
    let (_, registry) = setup();
    let catalogue = registry.catalogue();
    assert_eq!(catalogue.len(), LOOKUPS.len() + ACTIONS.len());
    for tool in &catalogue {
        assert_eq!(tool.author, Author::Others, "{}", tool.spec.name);
        let action = ACTIONS.contains(&tool.spec.name.as_str());
        let (kind, approval) = if action {
            (ToolKind::Action, Approval::Ask)
        } else {
            (ToolKind::Data, Approval::Auto)
        };
        assert_eq!(
            (tool.kind, tool.approval),
            (kind, approval),
            "{}",
            tool.spec.name
        );
    }
    let read = catalogue
        .iter()
        .find(|t| t.spec.name == "read_page")
        .unwrap();
    assert!(read.spec.description.contains(&READ_LIMIT.to_string()));
}

#[test]
fn each_page_tool_offers_the_schema_schemars_derives_for_its_arguments() {
    use crate::tool::parameters_schema as derived;
    let (_, registry) = setup();
    let offered: Vec<(String, Value)> = registry
        .specs()
        .into_iter()
        .map(|spec| (spec.name, spec.parameters))
        .collect();
    let expected = [
        ("check", derived::<CheckArgs>()),
        ("click", derived::<ElementArgs>()),
        ("double_click", derived::<ElementArgs>()),
        ("fill", derived::<FillArgs>()),
        ("find_in_page", derived::<FindArgs>()),
        ("highlight", derived::<ElementArgs>()),
        ("hover", derived::<ElementArgs>()),
        ("page_elements", derived::<ElementsArgs>()),
        ("page_forms", derived::<NoArgs>()),
        ("page_links", derived::<NoArgs>()),
        ("page_outline", derived::<NoArgs>()),
        ("page_selection", derived::<NoArgs>()),
        ("page_summary", derived::<NoArgs>()),
        ("press", derived::<PressArgs>()),
        ("read_page", derived::<ReadArgs>()),
        ("scroll_to", derived::<ElementArgs>()),
        ("select_option", derived::<SelectArgs>()),
        ("submit", derived::<ElementArgs>()),
    ]
    .map(|(name, schema)| (name.to_owned(), schema));
    let names = |tools: &[(String, Value)]| -> Vec<String> {
        tools.iter().map(|(name, _)| name.clone()).collect()
    };
    assert_eq!(names(&offered), names(&expected));
    for ((name, schema), (_, derivation)) in offered.iter().zip(&expected) {
        assert_eq!(schema, derivation, "{name}");
    }
}

#[test]
fn read_page_returns_the_content_marked_as_the_pages_words() {
    let (_, registry) = setup();
    let read = call(&registry, "read_page", json!({})).unwrap();
    assert_eq!(read["text"], "# Contact us");
    assert_eq!(read["title"], "Contact");
    assert_eq!(read["from"], FROM_PAGE);
    assert!(read.get("next_offset").is_none());
    let bad = call(&registry, "read_page", json!({"offset": -1})).unwrap_err();
    assert!(matches!(bad, ToolError::InvalidArguments { .. }), "{bad}");
}

#[test]
fn page_elements_numbers_the_controls_and_find_names_matching_ones() {
    let (_, registry) = setup();
    let listed = call(&registry, "page_elements", json!({})).unwrap();
    assert_eq!(
        listed["elements"],
        json!(["[1] textbox \"Message\"", "[2] button \"Send\""])
    );
    assert_eq!(
        (listed["total"].as_u64(), listed["new"].as_u64()),
        (Some(2), Some(0))
    );
    let found = call(&registry, "find_in_page", json!({"text": "send"})).unwrap();
    assert_eq!(found["elements"], json!(["[2] button \"Send\""]));
    let outline = call(&registry, "page_outline", json!({})).unwrap();
    assert_eq!(outline["headings"], json!(["Contact us"]));
}

#[test]
fn an_action_checks_acts_waits_and_reports_what_changed() {
    let (page, registry) = setup();
    let done = call(&registry, "fill", json!({"element": 1, "text": "Hello"})).unwrap();
    assert_eq!(
        done["done"],
        "Type \"Hello\" into the textbox \"Message\" [1]"
    );
    assert_eq!(
        done["changes"],
        json!(["element now: [1] textbox \"Message\" value=\"Hello\""])
    );
    let clicked = call(&registry, "click", json!({"element": 2})).unwrap();
    assert_eq!(
        clicked["changes"],
        json!(["new text on the page: \"Sent.\""])
    );
    assert_eq!(page.settled.get(), 2);
    assert_eq!(page.acts.borrow().len(), 2);
}

#[test]
fn an_action_is_described_for_its_approval_card_by_the_element_it_names() {
    let (page, registry) = setup();
    let describe = |name: &str, args: Value| {
        registry.describe(&ToolCall {
            id: "c".into(),
            name: name.into(),
            arguments: args.to_string().into(),
        })
    };
    assert_eq!(
        describe("fill", json!({"element": 1, "text": "Hello"})).as_deref(),
        Some("Type \"Hello\" into the textbox \"Message\" [1]")
    );
    assert_eq!(
        describe("click", json!({"element": 2})).as_deref(),
        Some("Click the button \"Send\" [2]")
    );
    let gone = describe("click", json!({"element": 9})).unwrap();
    assert!(gone.starts_with("Nothing, it will fail: element [9] is not on the page"));
    assert_eq!(describe("click", json!({"element": "x"})), None);
    assert_eq!(describe("read_page", json!({})), None);
    assert!(
        page.acts.borrow().is_empty(),
        "describing does nothing to the page"
    );
}

#[test]
fn an_action_on_a_missing_or_unfit_element_fails_and_does_nothing() {
    let (page, registry) = setup();
    let gone = call(&registry, "click", json!({"element": 9})).unwrap_err();
    assert!(gone.to_string().contains("not on the page"), "{gone}");
    let unfit = call(&registry, "check", json!({"element": 2, "checked": true})).unwrap_err();
    assert!(unfit.to_string().contains("not a checkbox"), "{unfit}");
    let long = "x".repeat(FILL_LIMIT + 1);
    let too_long = call(&registry, "fill", json!({"element": 1, "text": long})).unwrap_err();
    assert!(too_long.to_string().contains("longer than"), "{too_long}");
    assert!(page.acts.borrow().is_empty());
    assert_eq!(page.settled.get(), 0);
}

#[test]
fn press_enter_on_a_field_reports_the_item_the_app_added() {
    let (page, registry) = setup();
    call(&registry, "fill", json!({"element": 1, "text": "Milk"})).unwrap();
    let pressed = call(&registry, "press", json!({"element": 1, "key": "Enter"})).unwrap();
    assert_eq!(
        pressed["done"],
        "Press Enter on the textbox \"Message\" [1]"
    );
    assert_eq!(
        pressed["changes"],
        json!([
            "element now: [1] textbox \"Message\"",
            "new text on the page: \"Item: Milk\""
        ])
    );
    let unknown = call(&registry, "press", json!({"element": 1, "key": "Hyper"})).unwrap_err();
    assert!(unknown.to_string().contains("is not a key"), "{unknown}");
    assert_eq!(
        page.acts.borrow().len(),
        2,
        "the unknown key pressed nothing"
    );
}

#[test]
fn select_option_opens_an_aria_list_then_clicks_its_option() {
    let (page, registry) = setup();
    page.page
        .borrow_mut()
        .controls
        .push(control(3, "combobox", "Size"));
    let chosen = call(
        &registry,
        "select_option",
        json!({"element": 3, "option": "large"}),
    )
    .unwrap();
    assert_eq!(
        chosen["done"],
        "Choose \"large\" in the combobox \"Size\" [3]"
    );
    assert_eq!(
        chosen["changes"],
        json!(["element now: [3] combobox \"Size: large\""])
    );
    assert_eq!(
        *page.acts.borrow(),
        [
            (3, Act::Select("large".into())),
            (3, Act::Click),
            (3, Act::Select("large".into())),
        ]
    );
    let missing = call(
        &registry,
        "select_option",
        json!({"element": 3, "option": "Huge"}),
    )
    .unwrap_err();
    assert!(
        missing
            .to_string()
            .contains("the list was opened, but no option \"Huge\" is shown"),
        "{missing}"
    );
}

#[test]
fn a_sensitive_field_is_masked_in_every_listing_and_never_filled_or_pressed() {
    let (page, registry) = setup();
    let mut password = control(4, "textbox", "Password");
    password.sensitive = true;
    // A bridged page that forgot to mask: the listing masks all the same.
    password.value = Some("hunter2".into());
    page.page.borrow_mut().controls.push(password);
    let listed = call(&registry, "page_elements", json!({})).unwrap();
    assert_eq!(
        listed["elements"][2],
        "[4] textbox \"Password\" value=\"(sensitive: 7 characters set)\""
    );
    let found = call(&registry, "find_in_page", json!({"text": "pass"})).unwrap();
    assert!(!found.to_string().contains("hunter2"), "{found}");
    let filled = call(&registry, "fill", json!({"element": 4, "text": "guess"})).unwrap_err();
    assert!(
        filled
            .to_string()
            .contains("is a sensitive field (a password): the person types it themselves"),
        "{filled}"
    );
    let pressed = call(&registry, "press", json!({"element": 4, "key": "x"})).unwrap_err();
    assert!(pressed.to_string().contains("sensitive field"), "{pressed}");
    assert!(
        page.acts.borrow().is_empty(),
        "nothing was done to the page"
    );
    let card = registry
        .describe(&ToolCall {
            id: "c".into(),
            name: "fill".into(),
            arguments: json!({"element": 4, "text": "guess"}).to_string().into(),
        })
        .unwrap();
    assert!(
        card.starts_with("Nothing, it will fail: element [4]"),
        "{card}"
    );
}

#[test]
fn submit_double_click_and_hover_name_what_they_do_and_report_the_page() {
    let (page, registry) = setup();
    {
        let mut snapshot = page.page.borrow_mut();
        snapshot.controls[0].form = Some(7);
        snapshot.forms.push(familiar_page::Form {
            id: 7,
            name: "contact".into(),
            action: "/send".into(),
            method: "post".into(),
            visible: true,
        });
    }
    let submitted = call(&registry, "submit", json!({"element": 1})).unwrap();
    assert_eq!(
        submitted["done"],
        "Submit the form \"contact\" [7] (post → /send)"
    );
    assert_eq!(submitted["changes"], json!(["nothing changed on the page"]));
    let hovered = call(&registry, "hover", json!({"element": 2})).unwrap();
    assert_eq!(
        hovered["done"],
        "Move the pointer over the button \"Send\" [2]"
    );
    let doubled = call(&registry, "double_click", json!({"element": 2})).unwrap();
    assert_eq!(doubled["done"], "Double-click the button \"Send\" [2]");
    assert_eq!(
        *page.acts.borrow(),
        [(1, Act::Submit), (2, Act::Hover), (2, Act::DoubleClick)]
    );
}

#[test]
fn a_button_renamed_since_its_card_was_shown_is_not_clicked_and_the_model_reads_again() {
    let (page, registry) = setup();
    let click = tool_call("click", json!({"element": 2}));
    // A wizard's "Next", as the judge and the card see it (the cached read)…
    page.page.borrow_mut().controls[1].name = "Next".into();
    *page.shown.borrow_mut() = Some(page.page.borrow().clone());
    assert_eq!(registry.judge(&click).unwrap().always_asks, None);
    assert_eq!(
        registry.describe(&click).as_deref(),
        Some("Click the button \"Next\" [2]")
    );
    // …is "Place order" once an async step is done, when the granted click runs.
    page.page.borrow_mut().controls[1].name = "Place order".into();
    let refused = call(&registry, "click", json!({"element": 2})).unwrap_err();
    assert!(
        refused.to_string().contains(
            "element [2] changed since it was shown for approval: it was the button \
             \"Next\", it is now the button \"Place order\"; read the page again"
        ),
        "{refused}"
    );
    assert!(page.acts.borrow().is_empty(), "nothing was clicked");
    // Read again, the same click is judged on what is there: it always asks.
    *page.shown.borrow_mut() = None;
    assert!(registry.judge(&click).unwrap().always_asks.is_some());
}

#[test]
fn a_link_whose_address_now_signs_out_is_not_followed_on_an_approval_of_the_old_one() {
    let (page, registry) = setup();
    let mut account = control(5, "link", "My account");
    account.href = Some("https://shop.example/account".into());
    page.page.borrow_mut().controls.push(account);
    *page.shown.borrow_mut() = Some(page.page.borrow().clone());
    if let Some(link) = page.page.borrow_mut().controls.last_mut() {
        link.href = Some("https://shop.example/account/logout".into());
    }
    let refused = call(&registry, "click", json!({"element": 5})).unwrap_err();
    assert!(
        refused.to_string().contains(
            "what element [5] does changed since it was shown for approval: then a grant \
             may cover it, now it always asks a person (its address says \"logout\")"
        ),
        "{refused}"
    );
    assert!(page.acts.borrow().is_empty());
}

#[test]
fn an_element_that_only_reported_new_values_since_its_card_is_acted_on() {
    let (page, registry) = setup();
    *page.shown.borrow_mut() = Some(page.page.borrow().clone());
    page.page.borrow_mut().controls[0].value = Some("typed meanwhile".into());
    call(&registry, "fill", json!({"element": 1, "text": "Hello"})).unwrap();
    assert_eq!(*page.acts.borrow(), [(1, Act::Fill("Hello".into()))]);
}
