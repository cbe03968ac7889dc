//! The demo's characters: the bundled ones and the ones a person loaded at run time
//! (from a URL or a file on their machine, kept in `localStorage` so a reload keeps
//! them). Reading a file by URL or from disk is `web::character_file`'s.

use crate::base::json::fields::read_fields;
use std::rc::Rc;

use serde::Serialize;

use crate::web::{load_json, save_json};
use crate::workflow::Character;

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
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoadedCharacter {
    /// Its key in the settings: `loaded:` and where it came from.
    pub key: String,
    /// The character's name.
    pub name: String,
    /// Its URL, or the name of the file it was read from.
    pub source: String,
    pub text: String,
}

read_fields!(LoadedCharacter {
    key,
    name,
    source,
    text
});

/// The characters a person loaded, oldest first.
pub fn loaded() -> Vec<LoadedCharacter> {
    load_json(LOADED_KEY).unwrap_or_default()
}

/// Keeps a loaded character (replacing one from the same source); its key.
pub fn remember(character: &Character, source: &str, text: &str) -> String {
    let key = format!("loaded:{source}");
    let mut all = loaded();
    all.retain(|l| l.key != key);
    all.push(LoadedCharacter {
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
