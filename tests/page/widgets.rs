//! Widgets apps build beyond native controls: fill heard by a React-like value tracker
//! and by Vue and Svelte listeners, typing into a contenteditable editor, an ARIA
//! listbox drawn later, and a transparent unlabelled checkbox named by its row.

use super::*;

#[wasm_bindgen_test]
async fn fill_is_heard_by_a_react_like_value_tracker_and_by_vue_and_svelte_listeners() {
    let tools = fixture(r#"<main><input id="r" aria-label="Name"></main>"#);
    // React keeps the last value it set in a setter on the element itself, and on
    // `input` compares it with the field's value: only a change made through the
    // prototype's setter (as the browser's own typing) is news to it.
    eval(
        "const input = document.getElementById('r'); \
         const native = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value'); \
         let tracked = input.value; window.reactSaw = []; \
         Object.defineProperty(input, 'value', { configurable: true, \
           get() { return native.get.call(this); }, \
           set(v) { tracked = String(v); native.set.call(this, v); } }); \
         input.addEventListener('input', (e) => { const now = native.get.call(input); \
           if (now !== tracked) { tracked = now; window.reactSaw.push(now + ':' + e.constructor.name + ':' + e.inputType + ':' + e.data); } }); \
         input.addEventListener('beforeinput', (e) => window.reactSaw.push('before:' + e.inputType));",
    );
    // The fixture is right: a plain assignment and an event go unseen.
    eval(
        "const input = document.getElementById('r'); input.value = 'Plain'; \
         input.dispatchEvent(new Event('input', { bubbles: true }));",
    );
    assert_eq!(json_of("reactSaw"), "[]");
    let listing = ok(&tools, "page_elements", json!({})).await;
    let name = number(&listing, "Name");
    ok(&tools, "fill", json!({"element": name, "text": "Ada"})).await;
    assert_eq!(
        json_of("reactSaw"),
        r#"["before:insertText","Ada:InputEvent:insertText:Ada"]"#
    );
}

#[wasm_bindgen_test]
async fn fill_types_into_a_contenteditable_editor_as_the_browser_does() {
    let tools = fixture(
        r#"<main><div id="ed" contenteditable="true" aria-label="Notes"><p>Old draft</p></div></main>"#,
    );
    eval(
        "window.edits = []; document.getElementById('ed').addEventListener('input', (e) => window.edits.push(e.inputType + ':' + e.isTrusted));",
    );
    let listing = ok(&tools, "page_elements", json!({})).await;
    let notes = number(&listing, "Notes");
    let filled = ok(
        &tools,
        "fill",
        json!({"element": notes, "text": "Owls hunt at night"}),
    )
    .await;
    assert_eq!(
        eval("document.getElementById('ed').textContent")
            .as_string()
            .unwrap(),
        "Owls hunt at night"
    );
    // One edit, the browser's own (trusted, as an editor hears typing).
    assert_eq!(json_of("edits"), r#"["insertText:true"]"#);
    assert_eq!(
        filled["changes"][0],
        format!("element now: [{notes}] textbox \"Notes\" value=\"Owls hunt at night\"")
    );
}

#[wasm_bindgen_test]
async fn select_option_opens_an_aria_listbox_drawn_later_and_clicks_the_option() {
    let tools = fixture(
        r#"<main><button type="button" role="combobox" id="size" aria-label="Size" aria-controls="sizes" aria-expanded="false">Small</button>
           <ul role="listbox" id="sizes" hidden><li role="option">Small</li><li role="option">Large</li></ul></main>"#,
    );
    // Like a framework, the list is drawn after the click's handler has returned.
    eval(
        "const size = document.getElementById('size'); const list = document.getElementById('sizes'); \
         size.addEventListener('click', () => setTimeout(() => { list.hidden = false; size.setAttribute('aria-expanded', 'true'); }, 0)); \
         list.addEventListener('click', (e) => { size.textContent = e.target.textContent; list.hidden = true; });",
    );
    let listing = ok(&tools, "page_elements", json!({})).await;
    let size = number(&listing, "Size");
    let chosen = ok(
        &tools,
        "select_option",
        json!({"element": size, "option": "large"}),
    )
    .await;
    assert_eq!(
        chosen["done"],
        format!("Choose \"large\" in the combobox \"Size\" [{size}]")
    );
    assert_eq!(
        eval("document.getElementById('size').textContent")
            .as_string()
            .unwrap(),
        "Large"
    );
    let missing = call(
        &tools,
        "select_option",
        json!({"element": size, "option": "Huge"}),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        missing.contains("no option \"huge\" is shown; the options shown: Small | Large"),
        "{missing}"
    );
}

#[wasm_bindgen_test]
async fn a_transparent_unlabelled_checkbox_is_named_by_its_row_and_can_be_checked() {
    let tools = fixture(
        r#"<main><ul class="todo-list"><li><div class="view">
             <input class="toggle" type="checkbox" style="opacity:0; width:40px; height:40px">
             <label>Buy milk</label></div></li></ul></main>"#,
    );
    let listing = ok(&tools, "page_elements", json!({})).await;
    let milk = number(&listing, "Buy milk");
    let checked = ok(&tools, "check", json!({"element": milk, "checked": true})).await;
    assert_eq!(
        checked["changes"][0],
        format!("element now: [{milk}] checkbox \"Buy milk\" checked")
    );
    assert_eq!(eval("document.querySelector('.toggle').checked"), true);
}
