//! Bare URLs in text made links, as GitHub's autolink extension does: `https://…`,
//! `http://…` and `www.…` at the start of a word, up to the next space or `<`, without
//! the trailing punctuation that ends a sentence around it. One pass over the text: a
//! URL starts only after a space or one of `*~(`, none of which a domain holds, so no
//! two domain scans overlap.

use super::{Inline, Target};

/// `inlines` with the bare URLs in their text made links.
pub(super) fn linkify(inlines: Vec<Inline>) -> Vec<Inline> {
    if !inlines.iter().any(has_candidate) {
        return inlines;
    }
    let mut out = Vec::with_capacity(inlines.len());
    for inline in inlines {
        match inline {
            Inline::Text(text) => split(&text, &mut out),
            other => out.push(other),
        }
    }
    out
}

fn has_candidate(inline: &Inline) -> bool {
    matches!(inline, Inline::Text(text) if text.contains("http") || text.contains("www."))
}

/// Pushes `text` as text and links.
fn split(text: &str, out: &mut Vec<Inline>) {
    let mut plain_start = 0;
    let mut at = 0;
    let mut previous: Option<char> = None;
    while let Some(rest) = text.get(at..) {
        let Some(c) = rest.chars().next() else { break };
        let word_start = previous.is_none_or(|p| p.is_whitespace() || "*~(".contains(p));
        if word_start && let Some((len, href)) = url_at(rest) {
            if let Some(plain) = text.get(plain_start..at).filter(|p| !p.is_empty()) {
                out.push(Inline::Text(plain.to_owned()));
            }
            let shown = rest.get(..len).unwrap_or_default();
            out.push(Inline::Link {
                target: Target::of(&href),
                title: String::new(),
                children: vec![Inline::Text(shown.to_owned())],
            });
            at += len;
            plain_start = at;
            previous = shown.chars().last();
            continue;
        }
        previous = Some(c);
        at += c.len_utf8();
    }
    if let Some(plain) = text.get(plain_start..).filter(|p| !p.is_empty()) {
        out.push(Inline::Text(plain.to_owned()));
    }
}

/// The length of the URL at the start of `text` and where it points, if one starts there.
fn url_at(text: &str) -> Option<(usize, String)> {
    let lower_head = text.get(..8).unwrap_or(text).to_ascii_lowercase();
    let (scheme_len, prefix) = if lower_head.starts_with("https://") {
        (8, "")
    } else if lower_head.starts_with("http://") {
        (7, "")
    } else if lower_head.starts_with("www.") {
        (0, "http://")
    } else {
        return None;
    };
    let rest = text.get(scheme_len..)?;
    let domain_len = rest
        .find(|c: char| !(c.is_alphanumeric() || "-_.".contains(c)))
        .unwrap_or(rest.len());
    let domain = rest.get(..domain_len)?.trim_end_matches('.');
    if !valid_domain(domain) {
        return None;
    }
    let end = text
        .find(|c: char| c.is_whitespace() || c == '<')
        .unwrap_or(text.len());
    let candidate = text.get(..end)?;
    let len = trim_trailing(candidate).max(scheme_len + domain.len());
    let shown = candidate.get(..len)?;
    Some((len, format!("{prefix}{shown}")))
}

/// A domain as GitHub accepts it: dot-separated labels of letters, digits, `-` and
/// `_`, at least two labels, no `_` in the last two.
fn valid_domain(domain: &str) -> bool {
    let labels: Vec<&str> = domain.split('.').collect();
    let last_two = labels.iter().rev().take(2);
    labels.len() >= 2
        && labels.iter().all(|label| {
            !label.is_empty()
                && label
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '-' || c == '_')
        })
        && last_two.into_iter().all(|label| !label.contains('_'))
}

/// The length of `url` without the punctuation that ends the sentence around it: a
/// final `?!.,:*_~`, a `)` with no `(` to match it, an entity-like `&name;`.
fn trim_trailing(url: &str) -> usize {
    let mut end = url.len();
    let opened = url.matches('(').count();
    let mut closed = url.matches(')').count();
    while let Some(last) = url.get(..end).and_then(|u| u.chars().last()) {
        if "?!.,:*_~'\"".contains(last) {
            end -= 1;
        } else if last == ')' && closed > opened {
            closed -= 1;
            end -= 1;
        } else if last == ';' {
            let head = url.get(..end - 1).unwrap_or_default();
            let name = head
                .rfind('&')
                .and_then(|amp| head.get(amp + 1..).map(|n| (amp, n)));
            match name {
                Some((amp, n)) if !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric()) => {
                    end = amp;
                }
                _ => break,
            }
        } else {
            break;
        }
    }
    end
}
