//! Keys: Enter where an app listens for the key or its key code, Enter in a form's
//! field submitting it unless the app prevented the key, Tab moving the focus on and
//! Space clicking a button.

use super::*;

#[wasm_bindgen_test]
async fn press_enter_adds_an_item_where_the_app_listens_for_the_key_or_its_key_code() {
    let tools = fixture(
        r#"<main><h1>To do</h1>
           <input id="todo" aria-label="New todo"> <input id="legacy" aria-label="Old todo">
           <ul id="items"></ul></main>"#,
    );
    eval(
        "const add = (input) => { const li = document.createElement('li'); \
           li.textContent = input.value; document.getElementById('items').append(li); input.value = ''; }; \
         document.getElementById('todo').addEventListener('keydown', (e) => { if (e.key === 'Enter') add(e.target); }); \
         document.getElementById('legacy').addEventListener('keydown', (e) => { if (e.keyCode === 13 && e.which === 13) add(e.target); }); \
         window.keys = []; for (const kind of ['keydown', 'keypress', 'keyup']) \
           document.getElementById('todo').addEventListener(kind, (e) => window.keys.push(kind + ':' + e.key + ':' + e.code + ':' + e.bubbles + ':' + e.cancelable));",
    );
    let listing = ok(&tools, "page_elements", json!({})).await;
    let todo = number(&listing, "New todo");
    ok(&tools, "fill", json!({"element": todo, "text": "Buy milk"})).await;
    let pressed = ok(&tools, "press", json!({"element": todo, "key": "Enter"})).await;
    assert_eq!(
        pressed["done"],
        format!("Press Enter on the textbox \"New todo\" [{todo}]")
    );
    let changes = pressed["changes"].to_string();
    assert!(
        changes.contains("new text on the page: \\\"Buy milk\\\""),
        "{changes}"
    );
    assert_eq!(
        json_of("keys"),
        r#"["keydown:Enter:Enter:true:true","keypress:Enter:Enter:true:true","keyup:Enter:Enter:true:true"]"#
    );
    let legacy = number(&listing, "Old todo");
    ok(
        &tools,
        "fill",
        json!({"element": legacy, "text": "Feed owls"}),
    )
    .await;
    ok(&tools, "press", json!({"element": legacy, "key": "Enter"})).await;
    let items =
        eval("[...document.querySelectorAll('#items li')].map(li => li.textContent).join('|')");
    assert_eq!(items.as_string().unwrap(), "Buy milk|Feed owls");
    // A key that does nothing here says so.
    let nothing = ok(&tools, "press", json!({"element": todo, "key": "Escape"})).await;
    assert_eq!(nothing["changes"], json!(["nothing changed on the page"]));
}

#[wasm_bindgen_test]
async fn enter_in_a_forms_field_submits_it_unless_the_app_prevented_the_key() {
    let tools = fixture(
        r#"<form id="search" onsubmit="event.preventDefault(); window.sent.push('search:' + new FormData(this).get('q'))">
             <input name="q" aria-label="Search"></form>
           <form id="login" onsubmit="event.preventDefault(); window.sent.push('login')">
             <input aria-label="User"><button id="go">Sign in</button></form>
           <form id="guarded" onsubmit="event.preventDefault(); window.sent.push('guarded')">
             <input id="chat" aria-label="Chat"></form>"#,
    );
    eval(
        "window.sent = []; window.clicked = 0; document.getElementById('go').addEventListener('click', () => window.clicked++); \
         document.getElementById('chat').addEventListener('keydown', (e) => { if (e.key === 'Enter') e.preventDefault(); });",
    );
    let listing = ok(&tools, "page_elements", json!({})).await;
    let search = number(&listing, "Search");
    ok(&tools, "fill", json!({"element": search, "text": "owls"})).await;
    ok(&tools, "press", json!({"element": search, "key": "Enter"})).await;
    // A form with a submit button: Enter clicks it, as a browser does.
    ok(
        &tools,
        "press",
        json!({"element": number(&listing, "User"), "key": "Enter"}),
    )
    .await;
    ok(
        &tools,
        "press",
        json!({"element": number(&listing, "Chat"), "key": "Enter"}),
    )
    .await;
    assert_eq!(json_of("sent"), r#"["search:owls","login"]"#);
    assert_eq!(eval("window.clicked"), 1);
    // submit, by a field of the form or by the form's own number.
    let submitted = ok(&tools, "submit", json!({"element": search})).await;
    assert!(
        submitted["done"]
            .as_str()
            .unwrap()
            .starts_with("Submit the form \"search\" ["),
        "{submitted}"
    );
    let forms = ok(&tools, "page_forms", json!({})).await;
    let login: u64 = forms["forms"][1]["form"]
        .as_str()
        .unwrap()
        .trim_start_matches('[')
        .split(']')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    ok(&tools, "submit", json!({"element": login})).await;
    assert_eq!(
        json_of("sent"),
        r#"["search:owls","login","search:owls","login"]"#
    );
}

#[wasm_bindgen_test]
async fn tab_moves_the_focus_on_and_space_clicks_a_button() {
    let tools = fixture(
        r#"<main><input id="first" aria-label="First"> <input id="skip" tabindex="-1" aria-label="Skipped">
           <button type="button" id="next">Next</button></main>"#,
    );
    eval(
        "window.nexts = 0; document.getElementById('next').addEventListener('click', () => window.nexts++);",
    );
    let listing = ok(&tools, "page_elements", json!({})).await;
    let first = number(&listing, "First");
    let tabbed = ok(&tools, "press", json!({"element": first, "key": "Tab"})).await;
    let next = number(&listing, "Next");
    assert_eq!(
        tabbed["changes"],
        json!([format!("the focus moved to [{next}] button \"Next\"")])
    );
    assert_eq!(
        eval("document.activeElement.id").as_string().unwrap(),
        "next"
    );
    ok(&tools, "press", json!({"element": next, "key": "Space"})).await;
    ok(&tools, "press", json!({"element": next, "key": "Enter"})).await;
    assert_eq!(eval("window.nexts"), 2);
}
