//! How much a character file may hold, as a whole. A character file is untrusted
//! input (anyone can publish one, and a page loads it by URL), so every part that
//! costs the page something is bounded: the file's size; the numbers of workflows,
//! states, patterns, keywords and price-list items, which every message may be
//! checked against; the compiled size of all its patterns together
//! ([`PatternBudget`]); how much of a message they read ([`matched`]); and the size of
//! the identity fields and lines that go into prompts. The limits sit far above any
//! real file's: Dotty's patterns take about 20 KiB of the 256 KiB compiled; a
//! merchant with 20 workflows and 140 patterns (bench/workflows.rs) about 185 KiB. A
//! file past one is refused with the limit named and the JSON path of the first part
//! past it; nothing is compiled once a count is past its limit.
//!
//! The cost that matters is matching: `regex-lite` matches in time proportional to a
//! pattern's compiled size times the text's length, so the budget and [`matched`]
//! together bound the work one message can cost.

use regex_lite::{Regex, RegexBuilder};

use super::file::{CharacterFile, LoadError, TriggersDef};

/// The largest character file read, in bytes.
pub const MAX_FILE_BYTES: usize = 512 * 1024;
/// Workflows in a file, enabled or not.
pub const MAX_WORKFLOWS: usize = 32;
/// States in all the workflows together.
pub const MAX_STATES: usize = 256;
/// Intent patterns in all the triggers together (states' and cancellations').
pub const MAX_PATTERNS: usize = 256;
/// Keywords in all the triggers together.
pub const MAX_KEYWORDS: usize = 1_024;
/// Price-list items in all the workflows together.
pub const MAX_PRICES: usize = 1_024;
/// Longest pattern source, in bytes.
pub const MAX_PATTERN_LEN: usize = 1_000;
/// Compiled size of one pattern, in bytes.
pub const MAX_PATTERN_SIZE: usize = 64 * 1024;
/// Compiled size of all the patterns together, in bytes.
pub const MAX_PATTERNS_SIZE: usize = 256 * 1024;
/// Nesting depth of a pattern.
pub const MAX_NESTING: u32 = 32;
/// The characters of a message that patterns and keywords read: the first ones.
pub const MAX_MATCHED_CHARS: usize = 1_000;
/// `identity.name`, in characters: it goes into every prompt.
pub const MAX_IDENTITY_NAME: usize = 100;
/// `identity.occupation`, in characters: it goes into every prompt.
pub const MAX_IDENTITY_OCCUPATION: usize = 200;
/// `identity.personality`, in characters: it goes into every prompt.
pub const MAX_IDENTITY_PERSONALITY: usize = 1_000;
/// A workflow, state or transaction type's name, a context field's, a keyword or a
/// price-list item, in characters.
pub const MAX_WORD_CHARS: usize = 100;
/// A description, prompt injection or offline reply, or a context value written as
/// JSON (a price, an update), in characters.
pub const MAX_LINE_CHARS: usize = 2_000;
/// The smallest compiled size a pattern is charged; every pattern takes about this.
const MIN_CHARGE: usize = 1024;

/// The first [`MAX_MATCHED_CHARS`] characters of `message`: what patterns and
/// keywords read of it.
pub fn matched(message: &str) -> &str {
    match message.char_indices().nth(MAX_MATCHED_CHARS) {
        Some((end, _)) => message.get(..end).unwrap_or(message),
        None => message,
    }
}

/// Every count and size of `file` past its limit, each once, at the first part past
/// it.
pub fn check(file: &CharacterFile) -> Vec<LoadError> {
    let mut counts = Counts::default();
    let identity = &file.identity;
    let fields = [
        ("identity.name", &identity.name, MAX_IDENTITY_NAME),
        (
            "identity.occupation",
            &identity.occupation,
            MAX_IDENTITY_OCCUPATION,
        ),
        (
            "identity.personality",
            &identity.personality,
            MAX_IDENTITY_PERSONALITY,
        ),
    ];
    for (path, text, limit) in fields {
        counts.text(path.to_owned(), text, limit, "it goes into every prompt");
    }
    if let Some(reply) = &file.offline_reply {
        counts.line("offline_reply".into(), reply);
    }
    if file.workflows.len() > MAX_WORKFLOWS {
        counts.errors.push(LoadError {
            path: "workflows".into(),
            message: format!(
                "{} workflows; a character has at most {MAX_WORKFLOWS}",
                file.workflows.len()
            ),
        });
    }
    for (name, workflow) in file.workflows.iter().take(MAX_WORKFLOWS) {
        let path = format!("workflows.{name}");
        counts.text(path.clone(), name, MAX_WORD_CHARS, "a workflow's name");
        if let Some(kind) = &workflow.transaction_type {
            counts.word(format!("{path}.transaction_type"), kind);
        }
        counts.line(format!("{path}.description"), &workflow.description);
        for (i, state) in workflow.states.iter().enumerate() {
            let at = format!("{path}.states[{i}]");
            counts.add(
                Limit::States,
                1,
                || at.clone(),
                || format!("{at}.name"),
                &state.name,
            );
            counts.triggers(&format!("{at}.triggers"), &state.triggers);
            let actions = &state.actions;
            for (field, text) in [
                ("prompt_injection", &actions.prompt_injection),
                ("offline_reply", &actions.offline_reply),
            ] {
                if let Some(text) = text {
                    counts.line(format!("{at}.actions.{field}"), text);
                }
            }
            // What a transaction's context holds goes into the prompt while it waits.
            if let Some(create) = &actions.create_transaction {
                let at = format!("{at}.actions.create_transaction");
                for (item, price) in &create.price_lookup {
                    let path = || format!("{at}.price_lookup.{item}");
                    counts.add(Limit::Prices, 1, path, path, item);
                    counts.value(path(), price);
                }
                counts.value(format!("{at}.default_price"), &create.default_price);
                for (i, field) in create.context_fields.iter().enumerate() {
                    counts.word(format!("{at}.context_fields[{i}]"), field);
                }
            }
            for (name, update) in [
                ("update_transaction", &actions.update_transaction),
                ("complete_transaction", &actions.complete_transaction),
            ] {
                for (field, value) in update.iter().flat_map(|u| &u.context_updates) {
                    let path = format!("{at}.actions.{name}.context_updates.{field}");
                    counts.word(path.clone(), field);
                    counts.value(path, value);
                }
            }
        }
        if let Some(cancel) = &workflow.cancellation {
            let at = format!("{path}.cancellation");
            counts.triggers(&format!("{at}.triggers"), &cancel.triggers);
            for (field, text) in [
                ("prompt_injection", &cancel.prompt_injection),
                ("offline_reply", &cancel.offline_reply),
            ] {
                if let Some(text) = text {
                    counts.line(format!("{at}.{field}"), text);
                }
            }
        }
        if let Some(timeout) = &workflow.timeout {
            let at = format!("{path}.timeout");
            for (field, text) in [
                ("prompt_injection", &timeout.prompt_injection),
                ("offline_reply", &timeout.offline_reply),
            ] {
                if let Some(text) = text {
                    counts.line(format!("{at}.{field}"), text);
                }
            }
        }
    }
    counts.errors
}

#[derive(Debug, Clone, Copy)]
enum Limit {
    States,
    Patterns,
    Keywords,
    Prices,
}

impl Limit {
    fn max(self) -> usize {
        match self {
            Self::States => MAX_STATES,
            Self::Patterns => MAX_PATTERNS,
            Self::Keywords => MAX_KEYWORDS,
            Self::Prices => MAX_PRICES,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::States => "MAX_STATES",
            Self::Patterns => "MAX_PATTERNS",
            Self::Keywords => "MAX_KEYWORDS",
            Self::Prices => "MAX_PRICES",
        }
    }

    fn what(self) -> &'static str {
        match self {
            Self::States => "states",
            Self::Patterns => "intent patterns",
            Self::Keywords => "keywords",
            Self::Prices => "price-list items",
        }
    }
}

/// The counts so far, and the problems found.
#[derive(Default)]
struct Counts {
    seen: [usize; 4],
    errors: Vec<LoadError>,
}

impl Counts {
    /// Counts one more of `limit` at `path`, reporting the first past it; checks the
    /// size of its `word` (at `word_path`).
    fn add(
        &mut self,
        limit: Limit,
        n: usize,
        path: impl Fn() -> String,
        word_path: impl Fn() -> String,
        word: &str,
    ) {
        let index = limit as usize;
        let Some(seen) = self.seen.get_mut(index) else {
            return;
        };
        let before = *seen;
        *seen += n;
        if before <= limit.max() && *seen > limit.max() {
            self.errors.push(LoadError {
                path: path(),
                message: format!(
                    "a character has at most {} {} ({}); this is one past it",
                    limit.max(),
                    limit.what(),
                    limit.name(),
                ),
            });
        }
        if *seen <= limit.max() && !matches!(limit, Limit::Patterns) {
            self.word(word_path(), word);
        }
    }

    fn triggers(&mut self, at: &str, triggers: &TriggersDef) {
        for (i, pattern) in triggers.intent_patterns.iter().enumerate() {
            let path = || format!("{at}.intent_patterns[{i}]");
            self.add(Limit::Patterns, 1, path, path, pattern);
        }
        for (i, keyword) in triggers.keywords.iter().enumerate() {
            let path = || format!("{at}.keywords[{i}]");
            self.add(Limit::Keywords, 1, path, path, keyword);
        }
    }

    fn word(&mut self, path: String, text: &str) {
        self.text(path, text, MAX_WORD_CHARS, "a name or a word");
    }

    fn line(&mut self, path: String, text: &str) {
        self.text(path, text, MAX_LINE_CHARS, "a line of a workflow");
    }

    /// A value a transaction's context may hold, as JSON.
    fn value(&mut self, path: String, value: &serde_json::Value) {
        let text = value.to_string();
        self.text(
            path,
            &text,
            MAX_LINE_CHARS,
            "a context value, written as JSON",
        );
    }

    fn text(&mut self, path: String, text: &str, limit: usize, why: &str) {
        let chars = text.chars().count();
        if chars > limit {
            self.errors.push(LoadError {
                path,
                message: format!("{chars} characters; at most {limit} ({why})"),
            });
        }
    }
}

/// What a character's patterns may still take, compiled: [`MAX_PATTERNS_SIZE`] in
/// all, [`MAX_PATTERN_SIZE`] each.
#[derive(Debug)]
pub struct PatternBudget {
    left: usize,
    /// The budget ran out: later patterns are not compiled (nor reported).
    spent: bool,
}

impl Default for PatternBudget {
    fn default() -> Self {
        Self {
            left: MAX_PATTERNS_SIZE,
            spent: false,
        }
    }
}

impl PatternBudget {
    /// `source` compiled (case-insensitive), charged what it takes: a size limit
    /// found by doubling from [`MIN_CHARGE`], then halving the last step three times,
    /// so the charge is at most 9/8 of its compiled size (and every try stops at its
    /// limit). `Ok(None)`: not compiled, the budget having run out before.
    pub fn compile(&mut self, source: &str) -> Result<Option<Regex>, String> {
        if self.spent {
            return Ok(None);
        }
        if source.len() > MAX_PATTERN_LEN {
            return Err(format!(
                "the pattern is {} bytes; at most {MAX_PATTERN_LEN} (MAX_PATTERN_LEN)",
                source.len()
            ));
        }
        let mut low = 0;
        let mut high = MIN_CHARGE;
        let mut built = loop {
            let limit = high.min(self.left);
            match build(source, limit) {
                Ok(regex) => break (regex, limit),
                // `regex-lite` says which error is its size limit only in words.
                Err(e) if !e.to_string().contains("size limit") => {
                    return Err(format!("the pattern does not compile: {e}"));
                }
                Err(e) if limit < high => return Err(self.ran_out(&e)),
                Err(e) if high >= MAX_PATTERN_SIZE => {
                    return Err(format!(
                        "the pattern does not compile within {} KiB (MAX_PATTERN_SIZE): {e}",
                        MAX_PATTERN_SIZE / 1024
                    ));
                }
                Err(_) => (low, high) = (high, high * 2),
            }
        };
        for _ in 0..3 {
            let limit = low + (built.1 - low) / 2;
            match build(source, limit) {
                Ok(regex) => built = (regex, limit),
                Err(_) => low = limit,
            }
        }
        self.left -= built.1.min(self.left);
        Ok(Some(built.0))
    }

    fn ran_out(&mut self, e: &regex_lite::Error) -> String {
        self.spent = true;
        format!(
            "the character's patterns up to this one take more than the {} KiB they may \
             take together compiled (MAX_PATTERNS_SIZE; {} KiB were left): {e}; the \
             patterns after it were not compiled",
            MAX_PATTERNS_SIZE / 1024,
            self.left / 1024
        )
    }
}

fn build(source: &str, limit: usize) -> Result<Regex, regex_lite::Error> {
    RegexBuilder::new(source)
        .case_insensitive(true)
        .size_limit(limit)
        .nest_limit(MAX_NESTING)
        .build()
}
