//! The character files a person loaded at run time (from a URL or a file on their
//! machine), kept as one list under [`Keys::characters`] in the session's storage so a
//! reload keeps them. Fetching and parsing a file is the front end's; playing one is
//! [`super::Play`]'s. An unreadable list is kept aside under `{key}.corrupt` and said
//! (a [`Notice::Corrupt`]), never read as empty and written over by the next load.
//!
//! [`Keys::characters`]: super::Keys::characters

use crate::base::json::Read;
use serde::Serialize;

use super::keys::{Loaded, load_kept};
use super::storage::Storage;
use super::update::Notice;

/// A character file a person loaded, as kept.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub struct LoadedCharacter {
    /// Its key among the characters offered: `loaded:` and where it came from.
    pub key: String,
    /// The character's name.
    pub name: String,
    /// Its URL, or the name of the file it was read from.
    pub source: String,
    pub text: String,
}

/// The characters kept under `key`, oldest first, and what could not be read: an
/// unreadable list reads as none, its text kept aside under `{key}.corrupt` (it stays
/// there when the next load writes a new list under `key`).
pub fn loaded_characters(
    storage: &dyn Storage,
    key: &str,
) -> (Vec<LoadedCharacter>, Option<Notice>) {
    match load_kept(storage, key) {
        Loaded::Found(all) => (all, None),
        Loaded::Missing => (Vec::new(), None),
        Loaded::Corrupt { kept_as, error } => (
            Vec::new(),
            Some(Notice::Corrupt {
                key: key.to_owned(),
                kept_as,
                error,
            }),
        ),
    }
}

/// Keeps the character `name`, read from `source` as `text`, last among those kept
/// under `key` (replacing one from the same source). Its key among the characters
/// offered, and what went wrong on the way: an unreadable list kept aside, a failed
/// write.
pub fn remember_character(
    storage: &dyn Storage,
    key: &str,
    name: &str,
    source: &str,
    text: &str,
) -> (String, Vec<Notice>) {
    let character_key = format!("loaded:{source}");
    let (mut all, unreadable) = loaded_characters(storage, key);
    let mut notices: Vec<Notice> = unreadable.into_iter().collect();
    all.retain(|l| l.key != character_key);
    all.push(LoadedCharacter {
        key: character_key.clone(),
        name: name.to_owned(),
        source: source.to_owned(),
        text: text.to_owned(),
    });
    let written = serde_json::to_string(&all)
        .map_err(|error| error.to_string())
        .and_then(|list| storage.save(key, &list));
    if let Err(error) = written {
        notices.push(Notice::SaveFailed {
            key: key.to_owned(),
            error,
        });
    }
    (character_key, notices)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::VolatileStorage;

    const KEY: &str = "familiar.characters";

    #[test]
    fn a_corrupt_list_is_kept_aside_and_said_not_read_as_empty_and_overwritten() {
        let storage = VolatileStorage::default();
        let bad = r#"[{"key":"loaded:owl.json","name":"Owl","source":"owl.json","text":"{"#;
        storage.save(KEY, bad).unwrap();

        let (read, notice) = loaded_characters(&storage, KEY);
        assert_eq!(read, Vec::new());
        let Some(Notice::Corrupt {
            key,
            kept_as,
            error,
        }) = notice
        else {
            panic!("no notice: {notice:?}");
        };
        assert_eq!(
            (key.as_str(), kept_as.as_str()),
            (KEY, "familiar.characters.corrupt")
        );
        assert!(!error.is_empty());
        assert_eq!(
            storage.load("familiar.characters.corrupt").as_deref(),
            Some(bad)
        );

        // The next load writes a new list; the unreadable one stays where it was kept.
        let (key, notices) = remember_character(&storage, KEY, "Wren", "wren.json", "{}");
        assert_eq!(key, "loaded:wren.json");
        assert!(
            matches!(notices.as_slice(), [Notice::Corrupt { kept_as, .. }] if kept_as == "familiar.characters.corrupt"),
            "{notices:?}"
        );
        assert_eq!(
            storage.load("familiar.characters.corrupt").as_deref(),
            Some(bad)
        );
        let (read, notice) = loaded_characters(&storage, KEY);
        assert_eq!(notice, None, "the new list reads");
        assert_eq!(
            read.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(),
            ["Wren"]
        );
    }

    #[test]
    fn a_list_of_the_wrong_shape_is_kept_aside_too() {
        let storage = VolatileStorage::default();
        storage.save(KEY, r#"{"key":"loaded:owl.json"}"#).unwrap();
        let (read, notice) = loaded_characters(&storage, KEY);
        assert!(read.is_empty());
        assert!(matches!(notice, Some(Notice::Corrupt { .. })), "{notice:?}");
        assert_eq!(
            storage.load("familiar.characters.corrupt").as_deref(),
            Some(r#"{"key":"loaded:owl.json"}"#)
        );
    }

    #[test]
    fn loading_from_the_same_source_replaces_and_a_new_source_goes_last() {
        let storage = VolatileStorage::default();
        assert_eq!(loaded_characters(&storage, KEY), (Vec::new(), None));
        remember_character(&storage, KEY, "Owl", "owl.json", "1");
        remember_character(&storage, KEY, "Wren", "https://x.example/wren.json", "2");
        let (key, notices) = remember_character(&storage, KEY, "Owl II", "owl.json", "3");
        assert_eq!((key.as_str(), notices), ("loaded:owl.json", Vec::new()));
        let (read, _) = loaded_characters(&storage, KEY);
        let seen: Vec<_> = read
            .iter()
            .map(|l| (l.key.as_str(), l.name.as_str(), l.text.as_str()))
            .collect();
        assert_eq!(
            seen,
            [
                ("loaded:https://x.example/wren.json", "Wren", "2"),
                ("loaded:owl.json", "Owl II", "3"),
            ]
        );
        assert_eq!(storage.load("familiar.characters.corrupt"), None);
    }

    #[test]
    fn a_failed_write_is_said() {
        let storage = VolatileStorage::default();
        storage.fill_up();
        let (_, notices) = remember_character(&storage, KEY, "Owl", "owl.json", "{}");
        assert!(
            matches!(notices.as_slice(), [Notice::SaveFailed { key, .. }] if key == KEY),
            "{notices:?}"
        );
    }
}
