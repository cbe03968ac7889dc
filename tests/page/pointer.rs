//! The pointer: a click reports what appeared now and a moment later, scroll-to brings
//! an element into view and highlight outlines it, hover opens a menu and moving away
//! closes it, a double click fires two clicks and a dblclick.

use super::*;

#[wasm_bindgen_test]
async fn a_click_reports_what_appeared_now_and_a_moment_later() {
    let tools = fixture(
        r#"<main><h1>Inbox</h1><button type="button" id="more">Load more</button><ul id="list"></ul></main>"#,
    );
    eval(
        "document.getElementById('more').addEventListener('click', () => { \
           document.getElementById('list').insertAdjacentHTML('beforeend', '<li>First letter</li>'); \
           setTimeout(() => document.getElementById('list').insertAdjacentHTML('beforeend', \
             '<li><button type=\"button\">Reply</button></li>'), 0); });",
    );
    let listing = ok(&tools, "page_elements", json!({})).await;
    let more = number(&listing, "Load more");
    let clicked = ok(&tools, "click", json!({"element": more})).await;
    assert_eq!(
        clicked["done"],
        format!("Click the button \"Load more\" [{more}]")
    );
    let changes = clicked["changes"].to_string();
    assert!(changes.contains("First letter"), "{changes}");
    assert!(
        changes.contains("1 element(s) appeared") && changes.contains("button \\\"Reply\\\""),
        "{changes}"
    );
    let after = ok(&tools, "page_elements", json!({})).await;
    assert_eq!(after["new"], 1);
    assert!(after["elements"].to_string().contains("*["), "{after}");
}

#[wasm_bindgen_test]
async fn scroll_to_brings_an_element_into_view_and_highlight_outlines_it() {
    let tools = fixture(
        r#"<main><div style="height:5000px">Tall</div><button type="button" id="far">Far away</button></main>"#,
    );
    eval("window.scrollTo(0, 0)");
    let listing = ok(&tools, "page_elements", json!({})).await;
    let far = number(&listing, "Far away");
    let scrolled = ok(&tools, "scroll_to", json!({"element": far})).await;
    assert_eq!(
        scrolled["done"],
        format!("Scroll the page to the button \"Far away\" [{far}]")
    );
    assert!(eval("window.scrollY").as_f64().unwrap() > 1000.0);
    ok(&tools, "highlight", json!({"element": far})).await;
    let outline = eval("document.getElementById('far').style.outline")
        .as_string()
        .unwrap();
    assert!(
        outline.contains("solid") && outline.contains("3px"),
        "{outline}"
    );
    eval("window.scrollTo(0, 0)");
}

#[wasm_bindgen_test]
async fn hover_opens_a_menu_and_moving_away_closes_it() {
    let tools = fixture(
        r#"<main><div id="account"><button type="button" aria-haspopup="menu">Account</button>
             <div role="menu" id="menu" hidden><a role="menuitem" href="/profile">Profile</a></div></div>
           <button type="button">Help</button></main>"#,
    );
    eval(
        "const account = document.getElementById('account'); const menu = document.getElementById('menu'); \
         account.addEventListener('mouseenter', () => { menu.hidden = false; }); \
         account.addEventListener('mouseleave', () => { menu.hidden = true; });",
    );
    let listing = ok(&tools, "page_elements", json!({})).await;
    let opened = ok(
        &tools,
        "hover",
        json!({"element": number(&listing, "Account")}),
    )
    .await;
    let changes = opened["changes"].to_string();
    assert!(
        changes.contains("1 element(s) appeared") && changes.contains("menuitem \\\"Profile\\\""),
        "{changes}"
    );
    let closed = ok(
        &tools,
        "hover",
        json!({"element": number(&listing, "Help")}),
    )
    .await;
    assert!(
        closed["changes"]
            .to_string()
            .contains("1 element(s) disappeared"),
        "{closed}"
    );
}

#[wasm_bindgen_test]
async fn double_click_fires_two_clicks_and_a_dblclick_that_opens_an_editor() {
    let tools =
        fixture(r#"<main><ul><li><button type="button" id="item">Milk</button></li></ul></main>"#);
    eval(
        "window.mouse = []; const item = document.getElementById('item'); \
         for (const kind of ['mousedown', 'mouseup', 'click', 'dblclick']) \
           item.addEventListener(kind, (e) => window.mouse.push(kind + e.detail)); \
         item.addEventListener('dblclick', () => item.insertAdjacentHTML('afterend', '<input aria-label=\"Edit Milk\">'));",
    );
    let listing = ok(&tools, "page_elements", json!({})).await;
    let edited = ok(
        &tools,
        "double_click",
        json!({"element": number(&listing, "Milk")}),
    )
    .await;
    assert_eq!(
        json_of("mouse"),
        r#"["mousedown1","mouseup1","click1","mousedown2","mouseup2","click2","dblclick2"]"#
    );
    assert!(
        edited["changes"]
            .to_string()
            .contains("textbox \\\"Edit Milk\\\""),
        "{edited}"
    );
}
