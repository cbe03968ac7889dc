//! Sensitive fields: passwords, card numbers and one-time codes are masked when read
//! and never filled or pressed.

use super::*;

#[wasm_bindgen_test]
async fn passwords_cards_and_codes_are_masked_and_never_filled_or_pressed() {
    let tools = fixture(
        r#"<form><input type="password" aria-label="Password" value="hunter2">
             <input autocomplete="cc-number" aria-label="Number" value="4111111111111111">
             <input autocomplete="one-time-code" aria-label="Code">
             <input id="cvv" name="cvv" aria-label="Security" value="123">
             <input aria-label="Email" value="ann@example.com"></form>"#,
    );
    let listing = ok(&tools, "page_elements", json!({})).await;
    let text = listing["elements"].to_string();
    for secret in ["hunter2", "4111", "123"] {
        assert!(!text.contains(secret), "{secret} reached the model: {text}");
    }
    assert!(
        text.contains("\\\"Password\\\" value=\\\"(sensitive: 7 characters set)\\\""),
        "{text}"
    );
    assert!(
        text.contains("\\\"Number\\\" value=\\\"(sensitive: 16 characters set)\\\""),
        "{text}"
    );
    assert!(
        text.contains("\\\"Code\\\" value=\\\"(empty)\\\""),
        "{text}"
    );
    assert!(
        text.contains("\\\"Security\\\" value=\\\"(sensitive: 3 characters set)\\\""),
        "{text}"
    );
    assert!(text.contains("ann@example.com"), "{text}");
    let forms = ok(&tools, "page_forms", json!({})).await.to_string();
    assert!(
        !forms.contains("hunter2") && !forms.contains("4111"),
        "{forms}"
    );
    let password = number(&listing, "Password");
    let refused = call(
        &tools,
        "fill",
        json!({"element": password, "text": "guess"}),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        refused.contains("is a sensitive field (a password): the person types it themselves"),
        "{refused}"
    );
    let code = number(&listing, "Code");
    let refused = call(&tools, "press", json!({"element": code, "key": "1"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(refused.contains("is a sensitive field"), "{refused}");
    assert_eq!(
        eval("[...document.querySelectorAll('#fixture input')].map(i => i.value).join('|')")
            .as_string()
            .unwrap(),
        "hunter2|4111111111111111||123|ann@example.com"
    );
}
