//! [`Text`]: a string written once and read in many places — a tool call's id, name
//! and arguments, which the transcript, the run's history, its events, the approval
//! card and the tool all hold. Copying one copies a pointer, not the characters, so a
//! step of the loop costs the same however long a call's arguments are. Shared across
//! threads (`Arc`), as the UI's signals require of what they show; in the page's
//! single-threaded wasm the count is a plain add. Written and read as a JSON string.

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An immutable, shared string.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Text(Arc<str>);

impl Text {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Text {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Self {
        Self(text.into())
    }
}

impl From<String> for Text {
    fn from(text: String) -> Self {
        Self(text.into())
    }
}

impl From<&String> for Text {
    fn from(text: &String) -> Self {
        Self(text.as_str().into())
    }
}

impl From<&Text> for Text {
    fn from(text: &Text) -> Self {
        text.clone()
    }
}

impl From<Text> for String {
    fn from(text: Text) -> Self {
        text.0.as_ref().to_owned()
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        &*self.0 == other.as_str()
    }
}

impl PartialEq<Text> for str {
    fn eq(&self, other: &Text) -> bool {
        self == &*other.0
    }
}

impl PartialEq<Text> for &str {
    fn eq(&self, other: &Text) -> bool {
        *self == &*other.0
    }
}

impl PartialEq<Text> for String {
    fn eq(&self, other: &Text) -> bool {
        self.as_str() == &*other.0
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl Serialize for Text {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Self::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_shares_the_characters_and_compares_as_text() {
        let text = Text::from("move_to");
        let copy = text.clone();
        assert!(
            Arc::ptr_eq(&text.0, &copy.0),
            "a copy is the same characters"
        );
        assert_eq!(copy, "move_to");
        assert_eq!("move_to", copy);
        assert_eq!(copy, String::from("move_to"));
        assert_eq!(format!("{copy} {copy:?}"), "move_to \"move_to\"");
    }

    #[test]
    fn it_is_written_and_read_as_a_json_string() {
        let text = Text::from(r#"{"x": 1}"#);
        let written = serde_json::to_string(&text).unwrap();
        assert_eq!(written, r#""{\"x\": 1}""#);
        assert_eq!(serde_json::from_str::<Text>(&written).unwrap(), text);
        let error = serde_json::from_str::<Text>("3").unwrap_err().to_string();
        assert!(error.contains("expected a string"), "{error}");
    }
}
