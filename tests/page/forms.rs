//! A form: each control listed with a number, role, name and state; fill, select and
//! check fire the events pages listen for and report the change; disabled, hidden and
//! removed elements are refused and left alone.

use super::*;

const FORM: &str = r#"
<form id="order" onsubmit="event.preventDefault(); window.submitted = (window.submitted || 0) + 1;">
  <h1>Order</h1>
  <label for="email">Email</label> <input id="email" type="email" placeholder="you@example.com">
  <label>Size <select id="size"><option>Small</option><option>Large</option></select></label>
  <label><input id="terms" type="checkbox"> I agree</label>
  <input id="pass" type="password" aria-label="Password" value="hunter2">
  <textarea id="note" aria-label="Note"></textarea>
  <button type="button" id="locked" disabled>Pay now</button>
  <button type="button" id="ghost" style="display:none">Secret</button>
  <button type="submit">Send</button>
</form>
"#;

#[wasm_bindgen_test]
async fn page_elements_lists_each_control_with_a_number_role_name_and_state() {
    let tools = fixture(FORM);
    let listing = ok(&tools, "page_elements", json!({})).await;
    let lines: Vec<&str> = listing["elements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    let strip = |l: &str| l.split_once("] ").unwrap().1.to_owned();
    assert_eq!(
        lines.iter().map(|l| strip(l)).collect::<Vec<_>>(),
        [
            "textbox \"Email\" value=\"\"",
            "combobox \"Size\" value=\"Small\" options=[Small | Large]",
            "checkbox \"I agree\" unchecked",
            "textbox \"Password\" value=\"(sensitive: 7 characters set)\"",
            "textbox \"Note\" value=\"\"",
            "button \"Pay now\" disabled",
            "button \"Send\"",
        ]
    );
    assert!(!lines.iter().any(|l| l.contains("hunter2")));
    let with_hidden = ok(&tools, "page_elements", json!({"include_hidden": true})).await;
    let all = with_hidden["elements"].to_string();
    assert!(all.contains("button \\\"Secret\\\" hidden"), "{all}");
    // The same element keeps its number.
    let again = ok(&tools, "page_elements", json!({})).await;
    assert_eq!(number(&again, "Send"), number(&listing, "Send"));
    assert_eq!(again["new"], 0);
}

#[wasm_bindgen_test]
async fn fill_select_and_check_fire_the_events_pages_listen_for_and_report_the_change() {
    let tools = fixture(FORM);
    eval(
        "window.heard = []; for (const id of ['email', 'size', 'terms']) for (const kind of \
         ['input', 'change']) document.getElementById(id).addEventListener(kind, () => \
         window.heard.push(id + ':' + kind));",
    );
    let listing = ok(&tools, "page_elements", json!({})).await;
    let email = number(&listing, "Email");
    let filled = ok(
        &tools,
        "fill",
        json!({"element": email, "text": "ann@example.com"}),
    )
    .await;
    assert_eq!(
        filled["done"],
        format!("Type \"ann@example.com\" into the textbox \"Email\" [{email}]")
    );
    assert_eq!(
        filled["changes"][0],
        format!("element now: [{email}] textbox \"Email\" value=\"ann@example.com\"")
    );
    let value = eval("document.getElementById('email').value")
        .as_string()
        .unwrap();
    assert_eq!(value, "ann@example.com");
    let size = number(&listing, "Size");
    let chosen = ok(
        &tools,
        "select_option",
        json!({"element": size, "option": "large"}),
    )
    .await;
    assert!(
        chosen["changes"][0]
            .as_str()
            .unwrap()
            .contains("value=\"Large\""),
        "{chosen}"
    );
    let terms = number(&listing, "I agree");
    ok(&tools, "check", json!({"element": terms, "checked": true})).await;
    assert_eq!(eval("document.getElementById('terms').checked"), true);
    // Checking what is already checked changes nothing.
    let again = ok(&tools, "check", json!({"element": terms, "checked": true})).await;
    assert_eq!(again["changes"], json!(["nothing changed on the page"]));
    let heard = js_sys::JSON::stringify(&eval("window.heard"))
        .unwrap()
        .as_string()
        .unwrap();
    assert_eq!(
        heard,
        r#"["email:input","email:change","size:input","size:change","terms:input","terms:change"]"#
    );
    let wrong = call(
        &tools,
        "select_option",
        json!({"element": size, "option": "Huge"}),
    )
    .await;
    assert!(
        wrong
            .unwrap_err()
            .to_string()
            .contains("no option \"huge\"")
    );
}

#[wasm_bindgen_test]
async fn a_disabled_a_hidden_and_a_removed_element_are_refused_and_left_alone() {
    let tools = fixture(FORM);
    eval(
        "window.clicks = 0; for (const id of ['locked', 'ghost']) document.getElementById(id).addEventListener('click', () => window.clicks++);",
    );
    let listing = ok(&tools, "page_elements", json!({"include_hidden": true})).await;
    let locked = number(&listing, "Pay now");
    let refused = call(&tools, "click", json!({"element": locked}))
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("is disabled"), "{refused}");
    let ghost = number(&listing, "Secret");
    let refused = call(&tools, "click", json!({"element": ghost}))
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("is hidden"), "{refused}");
    assert_eq!(eval("window.clicks"), 0);
    let send = number(&listing, "Send");
    eval("document.querySelector('button[type=submit]').remove()");
    let gone = call(&tools, "click", json!({"element": send}))
        .await
        .unwrap_err();
    assert!(gone.to_string().contains("not on the page"), "{gone}");
    assert_eq!(eval("window.submitted || 0"), 0);
    let unknown = call(&tools, "click", json!({"element": 424242}))
        .await
        .unwrap_err();
    assert!(unknown.to_string().contains("not on the page"), "{unknown}");
}
