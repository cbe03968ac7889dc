//! The demo's characters: the bundled ones and the ones a person loaded at run time
//! (from a URL or a file on their machine, kept in `localStorage` through
//! `app::loaded_characters` so a reload keeps them). Reading a file by URL or from disk
//! is `web::character_file`'s.

use std::rc::Rc;

use crate::app::{Keys, LoadedCharacter, loaded_characters, remember_character};
use crate::web::BrowserStorage;
use crate::workflow::Character;

/// Where the characters a person loaded are kept: `familiar.characters`.
fn loaded_key() -> String {
    Keys::new(super::NAMESPACE).characters()
}

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

/// The characters a person loaded, oldest first. An unreadable list reads as none and
/// is kept aside; the session says so as it starts (`app::Session::restore`).
pub fn loaded() -> Vec<LoadedCharacter> {
    loaded_characters(&BrowserStorage, &loaded_key()).0
}

/// Keeps a loaded character (replacing one from the same source); its key. What went
/// wrong keeping it (a full storage) is reported in the console.
pub fn remember(character: &Character, source: &str, text: &str) -> String {
    let (key, notices) = remember_character(
        &BrowserStorage,
        &loaded_key(),
        &character.identity.name,
        source,
        text,
    );
    for notice in notices {
        web_sys::console::warn_1(&format!("familiar: {notice:?}").into());
    }
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
