//! The keys a page action may press, as a keyboard event names them: `key`, `code`
//! and the legacy `keyCode` many apps still read (13 for Enter).

/// One key, as its keyboard events carry it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    /// `KeyboardEvent.key`: `Enter`, `ArrowUp`, ` `, `a`, …
    pub key: String,
    /// `KeyboardEvent.code`: the physical key (`Enter`, `KeyA`, `Digit1`, `Space`).
    pub code: String,
    /// `keyCode` and `which`.
    pub key_code: u32,
    /// Whether the key types a character (`keypress` fires, a text field takes it).
    pub types: bool,
}

impl Key {
    /// The `keyCode`, `which` and `charCode` of its `keypress`: the character it types
    /// (`"a"` 97, where keydown says 65), or 13 for Enter; 0 for a key that types nothing.
    pub fn char_code(&self) -> u32 {
        let mut chars = self.key.chars();
        match (chars.next(), chars.next()) {
            _ if !self.types => 0,
            (Some(c), None) => u32::from(c),
            _ => self.key_code,
        }
    }
}

/// The named keys, with their `keyCode`s; any single character is a key too.
pub const KEYS: [(&str, u32); 15] = [
    ("Enter", 13),
    ("Escape", 27),
    ("Tab", 9),
    ("ArrowUp", 38),
    ("ArrowDown", 40),
    ("ArrowLeft", 37),
    ("ArrowRight", 39),
    ("Home", 36),
    ("End", 35),
    ("Space", 32),
    ("Backspace", 8),
    ("Delete", 46),
    ("PageUp", 33),
    ("PageDown", 34),
    ("Esc", 27),
];

/// The key `name` stands for: a name of [`KEYS`] (any case) or one character;
/// `None` for anything else. A control character (`"\r"`, `"\n"`, a tab, a
/// backspace) is no key: its legacy `keyCode` would be Enter's, Tab's or
/// Backspace's while its name says nothing, so it is pressed by its name or not at all.
pub fn key(name: &str) -> Option<Key> {
    let mut chars = name.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return (!c.is_control()).then(|| character(c));
    }
    let (named, key_code) = KEYS
        .iter()
        .find(|(known, _)| known.eq_ignore_ascii_case(name.trim()))?;
    Some(match *named {
        "Space" => character(' '),
        "Esc" => Key {
            key: "Escape".into(),
            code: "Escape".into(),
            key_code: *key_code,
            types: false,
        },
        _ => Key {
            key: (*named).into(),
            code: (*named).into(),
            key_code: *key_code,
            types: *named == "Enter",
        },
    })
}

/// A key that types `c`.
fn character(c: char) -> Key {
    let upper = c.to_ascii_uppercase();
    let code = match c {
        ' ' => "Space".into(),
        'a'..='z' | 'A'..='Z' => format!("Key{upper}"),
        '0'..='9' => format!("Digit{c}"),
        _ => String::new(),
    };
    Key {
        key: c.to_string(),
        code,
        key_code: if c.is_ascii() { u32::from(upper) } else { 0 },
        types: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_keys_carry_their_legacy_key_codes_and_characters_type() {
        let enter = key("enter").unwrap();
        assert_eq!(
            (enter.key.as_str(), enter.code.as_str(), enter.key_code),
            ("Enter", "Enter", 13)
        );
        assert!(enter.types, "Enter fires keypress");
        let escape = key("Esc").unwrap();
        assert_eq!((escape.key.as_str(), escape.key_code), ("Escape", 27));
        assert!(!key("ArrowDown").unwrap().types);
        let space = key("Space").unwrap();
        assert_eq!((space.key.as_str(), space.code.as_str()), (" ", "Space"));
        let a = key("a").unwrap();
        assert_eq!((a.code.as_str(), a.key_code, a.types), ("KeyA", 65, true));
        assert_eq!(key("7").unwrap().code, "Digit7");
        assert_eq!(key("Hyper"), None);
        assert_eq!(
            key("Enter").unwrap().char_code(),
            13,
            "not the E of its name"
        );
        assert_eq!((a.char_code(), key("A").unwrap().char_code()), (97, 65));
        assert_eq!(key(" ").unwrap().char_code(), 32);
        assert_eq!(key("ArrowUp").unwrap().char_code(), 0);
        assert_eq!(key(""), None);
    }

    #[test]
    fn control_characters_are_no_keys_though_their_codes_would_be_enters_and_tabs() {
        for name in [
            "\r", "\n", "\t", "\u{8}", "\u{1b}", "\u{7f}", "\u{85}", "\0",
        ] {
            assert_eq!(key(name), None, "{name:?}");
        }
        assert_eq!(key(" ").map(|k| k.key), Some(" ".into()));
        assert_eq!(key(" Enter ").map(|k| k.key_code), Some(13));
    }
}
