//! Character files in the page: the demo's bundled ones, the ones a person loaded at
//! run time (from a URL or a file on their machine, kept in `localStorage` so a reload
//! keeps them), and fetching a file by URL for the demo and the JS API alike.

use std::rc::Rc;

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use wasm_bindgen_futures::JsFuture;

use super::{Fetch, load_json, save_json};
use crate::http::{Http, HttpRequest};
use crate::workflow::Character;

/// The largest character file read.
pub const MAX_CHARACTER_BYTES: usize = 1 << 20;

/// Where the characters a person loaded are kept.
const LOADED_KEY: &str = "familiar.characters";

/// The characters the demo can play: file name, display name, file. Each file is also
/// in `public/characters/` for hosts to load; it is only parsed once chosen.
pub const CHARACTERS: [(&str, &str, &str); 2] = [
    (
        "dotty",
        "Dotty",
        include_str!("../../public/characters/dotty.json"),
    ),
    (
        "brannoc",
        "Brannoc",
        include_str!("../../public/characters/brannoc.json"),
    ),
];

/// A character file a person loaded, as kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Loaded {
    /// Its key in the settings: `loaded:` and where it came from.
    pub key: String,
    /// The character's name.
    pub name: String,
    /// Its URL, or the name of the file it was read from.
    pub source: String,
    pub text: String,
}

/// The characters a person loaded, oldest first.
pub fn loaded() -> Vec<Loaded> {
    load_json(LOADED_KEY).unwrap_or_default()
}

/// Keeps a loaded character (replacing one from the same source); its key.
pub fn remember(character: &Character, source: &str, text: &str) -> String {
    let key = format!("loaded:{source}");
    let mut all = loaded();
    all.retain(|l| l.key != key);
    all.push(Loaded {
        key: key.clone(),
        name: character.identity.name.clone(),
        source: source.to_owned(),
        text: text.to_owned(),
    });
    save_json(LOADED_KEY, &all);
    key
}

/// Every character the "Talk to" menu offers: (key, name), bundled first.
pub fn choices() -> Vec<(String, String)> {
    let bundled = CHARACTERS
        .iter()
        .map(|(key, name, _)| ((*key).to_owned(), (*name).to_owned()));
    bundled
        .chain(loaded().into_iter().map(|l| (l.key, l.name)))
        .collect()
}

/// The name of the character with `key`.
pub fn name_of(key: &str) -> Option<String> {
    choices()
        .into_iter()
        .find(|(k, _)| k == key)
        .map(|(_, n)| n)
}

/// The character with `key`, bundled or loaded; a broken file is reported in the
/// console.
pub fn character(key: &str) -> Option<Rc<Character>> {
    let text = match CHARACTERS.iter().find(|(k, ..)| *k == key) {
        Some((_, _, text)) => (*text).to_owned(),
        None => loaded().into_iter().find(|l| l.key == key)?.text,
    };
    match Character::from_json(&text) {
        Ok(character) => Some(Rc::new(character)),
        Err(errors) => {
            for error in errors {
                web_sys::console::error_1(&format!("familiar: {key}: {error}").into());
            }
            None
        }
    }
}

/// The text at `url` (relative to the page), at most [`MAX_CHARACTER_BYTES`].
pub async fn fetch_text(url: &str) -> Result<String, String> {
    let failed = |why: String| format!("the character file {url} cannot be read: {why}");
    let request = HttpRequest {
        method: "GET",
        url: resolve(url),
        headers: Vec::new(),
        body: None,
    };
    let mut response = Fetch
        .send(request)
        .await
        .map_err(|e| failed(e.to_string()))?;
    if response.status != 200 {
        return Err(failed(format!("the server answered {}", response.status)));
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = response.body.next().await {
        bytes.extend(chunk.map_err(|e| failed(e.to_string()))?);
        if bytes.len() > MAX_CHARACTER_BYTES {
            return Err(failed(format!(
                "it is larger than {MAX_CHARACTER_BYTES} bytes"
            )));
        }
    }
    String::from_utf8(bytes).map_err(|_| failed("it is not UTF-8 text".into()))
}

/// The text of a file a person picked, at most [`MAX_CHARACTER_BYTES`].
pub async fn read_file(file: &web_sys::File) -> Result<String, String> {
    let name = file.name();
    let size = file.size();
    if size > MAX_CHARACTER_BYTES as f64 {
        return Err(format!("{name} is larger than {MAX_CHARACTER_BYTES} bytes"));
    }
    let text = JsFuture::from(file.text())
        .await
        .map_err(|_| format!("{name} cannot be read"))?;
    text.as_string()
        .ok_or_else(|| format!("{name} is not text"))
}

/// A URL relative to the page, made absolute.
fn resolve(url: &str) -> String {
    let base = web_sys::window().and_then(|w| w.location().href().ok());
    match base.and_then(|base| web_sys::Url::new_with_base(url, &base).ok()) {
        Some(resolved) => resolved.href(),
        None => url.to_owned(),
    }
}
