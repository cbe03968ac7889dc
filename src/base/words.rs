//! Text as the words a person reads: what decides whether a name says "delete" and
//! whether a value appears in what someone wrote. Invisible characters (soft hyphens,
//! zero-width spaces and joiners, direction marks) are dropped first, so no word
//! hides behind them ("De\u{200b}lete" is "delete").

/// `text` without the invisible characters a word may hide behind.
pub fn clean(text: &str) -> String {
    text.chars()
        .filter(|c| !matches!(c, '\u{ad}' | '\u{200b}'..='\u{200f}' | '\u{2060}'..='\u{2064}' | '\u{feff}'))
        .collect()
}

/// `text` in lower-case words: split at everything but letters and digits, once
/// cleaned ([`clean`]).
pub fn words(text: &str) -> Vec<String> {
    clean(text)
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_owned)
        .collect()
}
