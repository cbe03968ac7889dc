//! A chosen tool's arguments held to what the conversation offers.
//!
//! Under its schema alone a small model writes values that parse but mean nothing:
//! an element number decoded as `1234567890`, a target padded with digits ("Goblin
//! 123456789"), the tool's own name as an argument (`{"toward": "move"}`). The values
//! a call needs are nearly always ones the conversation already shows, near the words
//! of the request: the number of the page element whose line names what the person
//! asked for, the names in a game's scene, the ids and amounts the person typed. So
//! the conversation is read as lines (a sentence, a listing's entry, a result's
//! object), each related to the latest request by the words they share, and before
//! the arguments are decoded the tool's schema is narrowed ([`narrow`]):
//! - an integer without its own `enum` becomes one of the integers (in digits, or a
//!   word: "two") of the lines that share most words with the request ("Click
//!   Subscribe": the `[4] button "Subscribe"` line's 4), within the schema's bounds;
//!   of every line when none shares a word; as it was when the conversation writes
//!   none;
//! - a string that names something (its key says `name`, `target`, `item`, `to`, …,
//!   or its description `name`) becomes one of the phrases of one to three words of
//!   the messages (or a result's entries) with a line that shares a word with the
//!   request (the request's own among them), none ending on a common word ("next
//!   to");
//! - no string may be the name of an offered tool, nor a placeholder of the prompt's
//!   example (`not`), which nothing a person asks for is.
//!
//! The narrowed schema is plain JSON Schema (`enum`, `not`), compiled by
//! [`constraint`](crate::constraint) as any other.

use serde_json::{Map, Value, json};

use crate::shortlist::{is_common, keywords};

/// Words of a property's key that make it the name of something.
const NAMING_KEYS: &[&str] = &[
    "name",
    "target",
    "to",
    "toward",
    "towards",
    "recipient",
    "item",
    "option",
    "place",
    "destination",
    "who",
];
/// Words of a property's description that do (a description's `to` or `item` may
/// be any sentence's).
const NAMING_WORDS: &[&str] = &["name", "names"];

/// Number words read as the integers they spell.
const NUMBER_WORDS: &[&str] = &[
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve",
];

/// Lines read at most, phrases a named value may be, integers likewise.
const MAX_LINES: usize = 512;
const MAX_PHRASES: usize = 2_000;
const MAX_NUMBERS: usize = 256;
/// Words a named value has at most.
const PHRASE_WORDS: usize = 3;

/// One line of the conversation: its integers, its phrases and its words, and which
/// of the texts it is from.
#[derive(Debug, Clone, Default, PartialEq)]
struct Line {
    text: usize,
    numbers: Vec<i64>,
    phrases: Vec<String>,
    words: Vec<String>,
}

/// What the conversation offers a call's arguments: its lines, the latest request's
/// words, and the values an argument must not be (the offered tools' names).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Offered {
    lines: Vec<Line>,
    request: Vec<String>,
    avoided: Vec<String>,
    /// The text being read (a message, or an entry of a result).
    text: usize,
}

impl Offered {
    /// What `texts` (the instructions and the messages) offer a call asked for by
    /// `request` (the latest user message); no argument may be one of `avoided`
    /// (the offered tools' names, the prompt's placeholders).
    pub fn new<'t>(
        texts: impl IntoIterator<Item = &'t str>,
        request: &str,
        avoided: &[&str],
    ) -> Offered {
        let mut offered = Offered {
            request: keywords(request),
            avoided: avoided.iter().map(|n| (*n).to_owned()).collect(),
            ..Offered::default()
        };
        for text in texts {
            offered.text += 1;
            // A tool result is JSON: its values are what it offers, not its keys.
            match serde_json::from_str::<Value>(text) {
                Ok(value @ (Value::Object(_) | Value::Array(_))) => offered.read_value(&value),
                _ => text
                    .split(['.', '!', '?', ';', '\n'])
                    .for_each(|sentence| offered.line(sentence, &[])),
            }
        }
        offered
    }

    /// An object of plain values is one line (a listing's entry: its id beside its
    /// name); a string is a line of its own; and each stands alone, as its own text (a
    /// listing's other entries are not beside it as a scene's sentences are).
    fn read_value(&mut self, value: &Value) {
        self.text += 1;
        match value {
            Value::String(s) => s.split('\n').for_each(|l| self.line(l, &[])),
            Value::Number(n) => self.line("", &[n.as_i64()]),
            Value::Array(items) => items.iter().for_each(|v| self.read_value(v)),
            Value::Object(map) if map.values().all(|v| !v.is_object() && !v.is_array()) => {
                let text: Vec<&str> = map.values().filter_map(Value::as_str).collect();
                let numbers: Vec<Option<i64>> = map.values().map(Value::as_i64).collect();
                self.line(&text.join(". "), &numbers);
            }
            Value::Object(map) => map.values().for_each(|v| self.read_value(v)),
            _ => {}
        }
    }

    fn line(&mut self, text: &str, numbers: &[Option<i64>]) {
        if self.lines.len() >= MAX_LINES {
            return;
        }
        let mut line = Line {
            text: self.text,
            numbers: numbers.iter().flatten().copied().collect(),
            words: keywords(text),
            ..Line::default()
        };
        // Phrases do not cross punctuation: "Goblin (hp 5), Wolf" offers "Goblin",
        // "hp 5" and "Wolf", never "Goblin hp".
        for segment in text.split(|c: char| !(c.is_alphanumeric() || " '-".contains(c))) {
            let words: Vec<&str> = segment
                .split_whitespace()
                .map(|w| w.trim_matches(|c| c == '\'' || c == '-'))
                .filter(|w| !w.is_empty())
                .collect();
            for word in &words {
                let spelled = NUMBER_WORDS
                    .iter()
                    .position(|w| w.eq_ignore_ascii_case(word));
                if let Some(n) = word.parse::<i64>().ok().or(spelled.map(|n| n as i64)) {
                    line.numbers.push(n);
                }
            }
            for start in 0..words.len() {
                for len in 1..=PHRASE_WORDS.min(words.len() - start) {
                    let Some(run) = words.get(start..start + len) else {
                        continue;
                    };
                    // A name does not end on a common word ("next to", "you"), nor
                    // is it a number (those are the integers').
                    let last = run.last().copied().unwrap_or_default();
                    if is_common(last) || last.parse::<i64>().is_ok() && len == 1 {
                        continue;
                    }
                    let phrase = run.join(" ");
                    let named = self.avoided.iter().any(|t| t.eq_ignore_ascii_case(&phrase));
                    if !named && !line.phrases.contains(&phrase) {
                        line.phrases.push(phrase);
                    }
                }
            }
        }
        if !line.numbers.is_empty() || !line.phrases.is_empty() {
            self.lines.push(line);
        }
    }

    /// How many of the request's words a line shares.
    fn shared(&self, line: &Line) -> usize {
        line.words
            .iter()
            .filter(|w| self.request.contains(w))
            .count()
    }

    /// The integers of the lines that share most words with the request (of every
    /// line when none shares one).
    fn numbers(&self) -> Vec<i64> {
        let numbered = self.lines.iter().filter(|l| !l.numbers.is_empty());
        let best = numbered.clone().map(|l| self.shared(l)).max().unwrap_or(0);
        let mut out = Vec::new();
        for line in numbered.filter(|l| self.shared(l) == best) {
            for &n in &line.numbers {
                if out.len() < MAX_NUMBERS && !out.contains(&n) {
                    out.push(n);
                }
            }
        }
        out
    }

    /// The phrases of the texts (a message, a result's entry) with a line that shares
    /// a word with the request: a scene's "You carry: flower" beside its "The player
    /// stands next to you" when the player is asked about, a market's "Oak Shield"
    /// alone when the shield is.
    fn phrases(&self) -> Vec<&str> {
        let touched: Vec<usize> = self
            .lines
            .iter()
            .filter(|l| self.shared(l) > 0)
            .map(|l| l.text)
            .collect();
        let mut out: Vec<&str> = Vec::new();
        for line in self.lines.iter().filter(|l| touched.contains(&l.text)) {
            for phrase in &line.phrases {
                if out.len() < MAX_PHRASES && !out.contains(&phrase.as_str()) {
                    out.push(phrase);
                }
            }
        }
        out
    }
}

/// `schema` (a tool's parameters) narrowed to what `offered` holds; see the module's
/// documentation. Properties it cannot narrow stay as they were.
pub fn narrow(schema: &Value, offered: &Offered) -> Value {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return schema.clone();
    };
    // Inserted one by one: collecting a map sorts its entries, a sort the worker
    // would carry for this alone.
    let mut narrowed = Map::new();
    for (key, property) in properties {
        narrowed.insert(key.clone(), narrow_property(key, property, offered));
    }
    let mut out = schema.clone();
    if let Some(map) = out.as_object_mut() {
        map.insert("properties".into(), Value::Object(narrowed));
    }
    out
}

fn narrow_property(key: &str, property: &Value, offered: &Offered) -> Value {
    let Some(map) = property.as_object() else {
        return property.clone();
    };
    if ["enum", "const", "anyOf", "oneOf"]
        .iter()
        .any(|k| map.contains_key(*k))
    {
        return property.clone();
    }
    let types: Vec<&str> = match map.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let nullable = types.contains(&"null");
    let with_null = |mut values: Vec<Value>| {
        if nullable {
            values.push(Value::Null);
        }
        json!({"enum": values})
    };
    if types.contains(&"integer") && types.iter().all(|t| *t == "integer" || *t == "null") {
        let bound = |k: &str| map.get(k).and_then(Value::as_i64);
        let (lo, hi) = (bound("minimum"), bound("maximum"));
        let values: Vec<Value> = offered
            .numbers()
            .iter()
            .filter(|&&n| lo.is_none_or(|lo| n >= lo) && hi.is_none_or(|hi| n <= hi))
            .map(|&n| Value::from(n))
            .collect();
        return match values.is_empty() {
            true => property.clone(),
            false => with_null(values),
        };
    }
    if types == ["string"] {
        let description = map.get("description").and_then(Value::as_str);
        let phrases = offered.phrases();
        if names_a_thing(key, description.unwrap_or_default()) && !phrases.is_empty() {
            return with_null(phrases.into_iter().map(Value::from).collect());
        }
        if !offered.avoided.is_empty() {
            let mut out = map.clone();
            out.insert("not".into(), json!({"enum": offered.avoided}));
            return Value::Object(out);
        }
    }
    property.clone()
}

/// Whether a property's key or description says it names something.
fn names_a_thing(key: &str, description: &str) -> bool {
    let has = |text: &str, words: &[&str]| {
        text.split(|c: char| !c.is_alphanumeric())
            .any(|w| words.iter().any(|n| n.eq_ignore_ascii_case(w)))
    };
    has(key, NAMING_KEYS) || has(description, NAMING_WORDS)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A guard's scene, a page's listing and the person's request.
    fn scene(request: &str) -> Offered {
        let listing = r#"{"elements":["[3] textbox \"Email\"","[4] button \"Subscribe\"","[8] button \"Add to cart\""],"total":3}"#;
        Offered::new(
            [
                "You are Brann, the market guard. You sell apples at two gold each.",
                "ENVIRONMENT: Nearby: Goblin (hp 5, 1 cell east), Rat King (hp 12).",
                listing,
                request,
            ],
            request,
            &["attack", "move"],
        )
    }

    fn property(schema: &Value, key: &str) -> Value {
        schema
            .pointer(&format!("/properties/{key}"))
            .cloned()
            .unwrap_or_default()
    }

    fn listed(schema: &Value, key: &str) -> Vec<Value> {
        let p = property(schema, key);
        p.get("enum")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    }

    #[test]
    fn an_integer_is_one_the_lines_nearest_the_request_write_within_its_bounds() {
        let schema = json!({"type": "object", "properties": {
            "element": {"type": "integer", "minimum": 0},
            "count": {"type": ["integer", "null"], "minimum": 1, "maximum": 4}}});
        let click = narrow(&schema, &scene("Click the Subscribe button."));
        assert_eq!(listed(&click, "element"), [json!(4)]);
        let typed = narrow(&schema, &scene("Buy 3 apples and 40 pears."));
        assert_eq!(listed(&typed, "element"), [json!(3), json!(40)]);
        assert_eq!(listed(&typed, "count"), [json!(3), Value::Null]);
        let spelled = narrow(&schema, &scene("What do apples cost?"));
        assert_eq!(listed(&spelled, "element"), [json!(2)]);
        // Nothing shared: every number the conversation writes.
        let vague = narrow(&schema, &scene("Well?"));
        assert_eq!(
            listed(&vague, "count"),
            [json!(2), json!(1), json!(3), json!(4), Value::Null]
        );
    }

    #[test]
    fn an_integer_the_conversation_never_writes_keeps_its_schema() {
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        let none = Offered::new(["Hello there."], "Hello there.", &[]);
        assert_eq!(narrow(&schema, &none), schema);
    }

    #[test]
    fn a_name_is_a_phrase_of_the_lines_the_request_touches_never_padded_nor_a_tools_name() {
        let schema = json!({"type": "object", "properties": {
            "target": {"type": "string"},
            "item_name": {"type": "string", "description": "As the market lists it."},
            "job": {"type": "string", "description": "The job's name."},
            "text": {"type": "string", "description": "What to say to them."}}});
        let narrowed = narrow(&schema, &scene("The goblin attacks you, move!"));
        let phrases = listed(&narrowed, "target");
        for want in ["Goblin", "goblin", "Rat King", "The goblin"] {
            assert!(phrases.contains(&json!(want)), "{want} in {phrases:?}");
        }
        for never in [
            "Goblin hp",
            "Goblin 123456789",
            "attack",
            "move",
            "Subscribe",
            "Brann",
        ] {
            assert!(!phrases.contains(&json!(never)), "{never} in {phrases:?}");
        }
        assert_eq!(
            property(&narrowed, "item_name"),
            property(&narrowed, "target")
        );
        assert_eq!(property(&narrowed, "job"), property(&narrowed, "target"));
        // Free text is free, but not the tool's name.
        assert_eq!(
            property(&narrowed, "text"),
            json!({"type": "string", "description": "What to say to them.",
                   "not": {"enum": ["attack", "move"]}})
        );
    }

    #[test]
    fn a_name_may_come_from_beside_the_line_the_request_touches() {
        let scene = "ENVIRONMENT: You carry: flower, flower. The player stands next to you.";
        let request = "The player comes near you.";
        let offered = Offered::new([scene, request], request, &[]);
        let schema = json!({"type": "object", "properties": {"item": {"type": "string"}}});
        let phrases = listed(&narrow(&schema, &offered), "item");
        for want in ["flower", "player", "The player"] {
            assert!(phrases.contains(&json!(want)), "{want} in {phrases:?}");
        }
    }

    #[test]
    fn a_listings_entries_stand_alone() {
        let market = r#"[{"id":17,"name":"Iron Sword","price":120},{"id":18,"name":"Oak Shield","price":80}]"#;
        let request = "Buy me the shield.";
        let offered = Offered::new([request, market], request, &[]);
        let schema = json!({"type": "object", "properties": {
            "item_name": {"type": "string"}, "id": {"type": "integer"}}});
        let narrowed = narrow(&schema, &offered);
        let phrases = listed(&narrowed, "item_name");
        assert!(phrases.contains(&json!("Oak Shield")), "{phrases:?}");
        assert!(!phrases.contains(&json!("Iron Sword")), "{phrases:?}");
        assert_eq!(listed(&narrowed, "id"), [json!(18), json!(80)]);
    }

    #[test]
    fn the_narrowed_schema_compiles_and_refuses_what_grounding_rules_out() {
        use crate::constraint::{Constraint, Grammar};
        let schema = json!({"type": "object", "properties": {
            "target": {"type": "string"}, "element": {"type": "integer"},
            "text": {"type": "string"}}, "required": ["target"]});
        let offered = scene("Strike the goblin at 5!");
        let grammar =
            Grammar::json(&narrow(&schema, &offered)).unwrap_or_else(|e| unreachable!("{e}"));
        let accepts = |output: &str| {
            let mut c = Constraint::new(&grammar);
            c.advance_bytes(output.as_bytes()) && c.is_complete()
        };
        let (ok, padded, echo) = (
            r#"{"element":5,"target":"Goblin","text":"Halt!"}"#,
            r#"{"target":"Goblin 123456789"}"#,
            r#"{"target":"Goblin","text":"move"}"#,
        );
        assert!(accepts(ok), "{ok}");
        assert!(!accepts(padded), "{padded}");
        assert!(!accepts(echo), "{echo}");
        assert!(!accepts(r#"{"element":1234567890,"target":"Goblin"}"#));
        assert!(accepts(r#"{"target":"goblin","text":"moved"}"#));
    }
}
