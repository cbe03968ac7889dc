//! Saving text as a file the person downloads: a `Blob`, its object URL on a link
//! clicked once, and the URL let go. What the inspector's trace download uses.

use wasm_bindgen::JsCast;

/// Offers `text` as the file `name`; says why when the page cannot.
pub fn download(name: &str, text: &str) -> Result<(), String> {
    let parts = js_sys::Array::of1(&text.into());
    let blob = web_sys::Blob::new_with_str_sequence(&parts).map_err(|_| "no Blob")?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(|_| "no object URL")?;
    let document = web_sys::window()
        .and_then(|w| w.document())
        .ok_or("no document")?;
    let link = document
        .create_element("a")
        .map_err(|_| "no link")?
        .dyn_into::<web_sys::HtmlElement>()
        .map_err(|_| "no link")?;
    let set = link
        .set_attribute("href", &url)
        .and_then(|()| link.set_attribute("download", name));
    if set.is_ok() {
        link.click();
    }
    let _ = web_sys::Url::revoke_object_url(&url);
    set.map_err(|_| "the link could not be made".into())
}
