//! Finds the JSON in model text: the whole text, fenced code blocks, or balanced
//! `{…}` / `[…]` regions inside prose (a region the text cuts off runs to its end).

/// At most this many candidate regions are considered: prose full of brackets
/// cannot make extraction slow.
const MAX_CANDIDATES: usize = 16;

/// One way to read JSON in model text.
#[derive(Debug, PartialEq, Eq)]
pub enum Candidate<'a> {
    /// A region holding one value.
    One(&'a str),
    /// Regions holding a value each, one after another: the model meant their list.
    Several(Vec<&'a str>),
}

/// The ways to read JSON in `text`, most likely first: one value per line (quotes that
/// do not pair cannot join two lines), the whole text when it opens like a value (the
/// repairer reads several values in a row as their list itself), values split by
/// balanced brackets or fences, then fenced blocks and bracketed regions from the
/// longest to the shortest.
///
/// The whole text comes before the split by brackets because that split cannot see
/// single-quoted strings: `{"a": ('}{')}` is one value, not two. It comes before the
/// regions because a fence inside one of its strings is text (`{"a": "```{}```"}`),
/// and quotes that do not pair can make the balanced regions end too early. Repair
/// refuses it when prose follows the value, so prose after a value still finds the
/// region alone.
pub fn candidates(text: &str) -> Vec<Candidate<'_>> {
    let mut found: Vec<Candidate<'_>> = line_sequence(text)
        .map(Candidate::Several)
        .into_iter()
        .collect();
    let trimmed = text.trim_matches(super::repair::is_space);
    let whole = opens_whole_value(trimmed).then_some(trimmed);
    found.extend(whole.map(Candidate::One));
    found.extend(
        [balanced_sequence, fenced_sequence]
            .into_iter()
            .filter_map(|split| split(text))
            .map(Candidate::Several),
    );
    let mut regions: Vec<&str> = fenced_blocks(text)
        .into_iter()
        .filter(|block| block.trim_start().starts_with(['{', '[', '(']))
        .collect();
    let mut bracketed = bracketed_regions(text);
    crate::base::sort::sort_by_key(&mut bracketed, |region| std::cmp::Reverse(region.len()));
    regions.extend(bracketed);
    regions.dedup();
    regions.retain(|region| Some(*region) != whole);
    regions.truncate(MAX_CANDIDATES - usize::from(whole.is_some()));
    found.extend(regions.into_iter().map(Candidate::One));
    found
}

/// Whether the whole of `text` may be one value, or several in a row: it opens with
/// a bracket, a tuple's parenthesis or a comment (or a `/` regex), or it is a list of scalars without
/// brackets (`1, 2, 3`; one per line).
fn opens_whole_value(text: &str) -> bool {
    // `[```json {…} ```]`: a fenced block inside brackets; the fence is the value.
    let fence_inside = text
        .get(1..)
        .is_some_and(|rest| rest.trim_start().starts_with("```"));
    (text.starts_with(['{', '[', '(']) && !fence_inside)
        || text.starts_with(['#', '/'])
        || (text.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '-' | '"'))
            && text.contains([',', '\n']))
}

/// The contents of ``` fences (an unclosed fence runs to the end of the text).
fn fenced_blocks(text: &str) -> Vec<&str> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("```") {
        let after = rest.get(open + 3..).unwrap_or_default();
        // Skip the info string (`json`, `jsonc`, …) up to the end of the line.
        let body_start = after.find('\n').map_or(after.len(), |n| n + 1);
        let info = after.get(..body_start).unwrap_or_default().trim();
        // ```json {"a": 1} ```: the block on the fence's own line, after its language.
        let language = info.split_whitespace().next().unwrap_or_default();
        let inline = info.get(language.len()..).unwrap_or_default().trim_start();
        let body = if info.starts_with(['{', '[']) {
            after
        } else if inline.starts_with(['{', '[']) {
            after
                .get(after.find(inline).unwrap_or_default()..)
                .unwrap_or_default()
        } else {
            after.get(body_start..).unwrap_or_default()
        };
        match body.find("```") {
            Some(close) => {
                blocks.push(body.get(..close).unwrap_or_default().trim());
                rest = body.get(close + 3..).unwrap_or_default();
            }
            None => {
                blocks.push(body.trim());
                break;
            }
        }
    }
    blocks
}

/// Top-level regions that open with `{` or `[` and close where their brackets balance,
/// skipping brackets inside double-quoted strings.
fn bracketed_regions(text: &str) -> Vec<&str> {
    let mut regions = Vec::new();
    let mut search = 0;
    while regions.len() < MAX_CANDIDATES {
        let Some(start) = text
            .get(search..)
            .and_then(|rest| rest.find(['{', '[']))
            .map(|n| n + search)
        else {
            break;
        };
        let end = balanced_end(text, start).unwrap_or(text.len());
        regions.push(text.get(start..end).unwrap_or_default());
        search = if end > start + 1 { end } else { start + 1 };
    }
    regions
}

/// The byte just past the bracket that closes the one at `start`, if any.
fn balanced_end(text: &str, start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (offset, c) in text.get(start..)?.char_indices() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => depth += 1,
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(start + offset + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// Two or more fenced blocks that each hold a value: the list of them (a typed
/// contract that wants one still finds each block alone among the candidates).
fn fenced_sequence(text: &str) -> Option<Vec<&str>> {
    let blocks: Vec<&str> = fenced_blocks(text)
        .into_iter()
        .filter(|block| block.starts_with(['{', '[']))
        .collect();
    (blocks.len() >= 2).then_some(blocks)
}

/// One value per line whose quotes do not pair (`{"a": "x, "b": 1}`), so brackets
/// cannot be balanced across strings: every line starts with `{` or `[` in its first
/// column, opens as many brackets as it closes (quotes ignored), and every line but
/// the last ends with `}` or `]` (a comma after it allowed).
fn line_sequence(text: &str) -> Option<Vec<&str>> {
    let lines: Vec<&str> = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .collect();
    let (_, before_last) = lines.split_last()?;
    let opens = |line: &&str| line.starts_with(['{', '[']);
    let closes = |line: &&str| line.trim_end().trim_end_matches(',').ends_with(['}', ']']);
    let one_per_line = lines.len() >= 2
        && lines.len() <= MAX_CANDIDATES * 64
        && lines.iter().all(opens)
        && lines.iter().all(|line| {
            let count = |set: [char; 2]| line.chars().filter(|c| set.contains(c)).count();
            count(['{', '[']) == count(['}', ']'])
        })
        && before_last.iter().all(closes);
    one_per_line.then_some(lines)
}

/// Newline-delimited or comma-separated values making up the whole of `text`
/// (`{...}\n{...}`, `{...}, {...}`): each region, when there are two or more and
/// nothing else but spaces and commas between them.
fn balanced_sequence(text: &str) -> Option<Vec<&str>> {
    let mut regions = Vec::new();
    let mut at = 0;
    loop {
        let rest = text.get(at..)?;
        let skipped = rest.len()
            - rest
                .trim_start_matches(|c: char| c.is_whitespace() || c == ',')
                .len();
        at += skipped;
        if at >= text.len() {
            break;
        }
        if !text.get(at..)?.starts_with(['{', '[']) || regions.len() >= MAX_CANDIDATES * 64 {
            return None;
        }
        let end = balanced_end(text, at)?;
        regions.push(text.get(at..end)?);
        at = end;
    }
    (regions.len() >= 2).then_some(regions)
}
