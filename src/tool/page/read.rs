//! What the model reads of a page: the main content's text, its outline and the
//! places a phrase occurs — each cut to a limit the tool's description states.

use super::{Block, Region, Snapshot, clip, squash};

/// Below this many characters a page's main region is an app's part (a list, a
/// panel), not an article: the text around it (the app's header, its footer with the
/// item count) is read with it.
const SLIGHT_MAIN: usize = 600;

/// The content blocks: those in the page's main region when it marks one that holds
/// an article's worth of text, else all but navigation and boilerplate (or
/// everything, when that is all there is).
fn content(snapshot: &Snapshot) -> Vec<&Block> {
    let of = |region: Region| -> Vec<&Block> {
        let blocks = snapshot.blocks.iter();
        blocks.filter(|b| b.region == region).collect()
    };
    let main = of(Region::Main);
    let main_chars: usize = main.iter().map(|b| b.text.chars().count()).sum();
    if main_chars >= SLIGHT_MAIN {
        return main;
    }
    let rest: Vec<&Block> = snapshot
        .blocks
        .iter()
        .filter(|b| b.region != Region::Boilerplate)
        .collect();
    if rest.is_empty() {
        snapshot.blocks.iter().collect()
    } else {
        rest
    }
}

fn render(block: &Block) -> String {
    let text = match block.heading {
        Some(level) => format!(
            "{} {}",
            "#".repeat(usize::from(level.clamp(1, 6))),
            block.text
        ),
        None => block.text.clone(),
    };
    marked(block, text)
}

/// `text` of `block`, marked with the origin of the frame it came from when that is
/// another site's: the model reads an ad's words as the ad's, not the page's.
fn marked(block: &Block, text: String) -> String {
    match &block.frame {
        Some(origin) => format!("[from {origin}] {text}"),
        None => text,
    }
}

/// A window of the page's readable text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Readable {
    /// The text from `offset`, at most the limit's characters.
    pub text: String,
    /// The whole readable text's length, in characters.
    pub total_chars: usize,
    /// Where the next window starts, when there is more.
    pub next_offset: Option<usize>,
}

/// The main content as text (headings marked `#`), from character `offset`, at most
/// `max` characters.
pub fn readable(snapshot: &Snapshot, offset: usize, max: usize) -> Readable {
    let whole = content(snapshot)
        .into_iter()
        .map(render)
        .collect::<Vec<_>>()
        .join("\n\n");
    let total_chars = whole.chars().count();
    let text: String = whole.chars().skip(offset).take(max).collect();
    let end = offset.saturating_add(max);
    Readable {
        text,
        total_chars,
        next_offset: (end < total_chars).then_some(end),
    }
}

/// The page's headings, indented by level, at most `max` of them; and how many
/// there are in all.
pub fn outline(snapshot: &Snapshot, max: usize) -> (Vec<String>, usize) {
    let headings: Vec<&Block> = content(snapshot)
        .into_iter()
        .filter(|b| b.heading.is_some())
        .collect();
    let lines = headings
        .iter()
        .take(max)
        .map(|b| {
            let level = usize::from(b.heading.unwrap_or(1).clamp(1, 6));
            let heading = marked(b, clip(&b.text, 200));
            format!("{}{heading}", "  ".repeat(level - 1))
        })
        .collect();
    (lines, headings.len())
}

/// Where `phrase` occurs in the page's visible text (any region), case-insensitive:
/// each match with up to `context` characters either side, at most `max` of them;
/// and how many there are in all.
pub fn find(snapshot: &Snapshot, phrase: &str, context: usize, max: usize) -> (Vec<String>, usize) {
    let needle = squash(phrase).to_lowercase();
    if needle.is_empty() {
        return (Vec::new(), 0);
    }
    let mut found = Vec::new();
    let mut total = 0;
    for block in &snapshot.blocks {
        let chars: Vec<char> = block.text.chars().collect();
        let lower: Vec<char> = block.text.to_lowercase().chars().collect();
        // Lower-casing can change a text's length (rare letters); then match on the
        // block's own text only where the lengths agree.
        if lower.len() != chars.len() {
            continue;
        }
        let needle: Vec<char> = needle.chars().collect();
        let mut at = 0;
        while at + needle.len() <= lower.len() {
            if lower.get(at..at + needle.len()) == Some(&needle[..]) {
                total += 1;
                if found.len() < max {
                    let start = at.saturating_sub(context);
                    let end = (at + needle.len() + context).min(chars.len());
                    let mut snippet: String = chars.get(start..end).unwrap_or(&[]).iter().collect();
                    if start > 0 {
                        snippet.insert(0, '…');
                    }
                    if end < chars.len() {
                        snippet.push('…');
                    }
                    found.push(marked(block, snippet));
                }
                at += needle.len();
            } else {
                at += 1;
            }
        }
    }
    (found, total)
}

/// The first sentence of `text`: up to its first `.`, `!` or `?` followed by a space
/// (or the end), cut to `max` characters.
fn first_sentence(text: &str, max: usize) -> String {
    let end = text
        .char_indices()
        .zip(text.chars().skip(1).chain([' ']))
        .find(|((_, c), next)| matches!(c, '.' | '!' | '?') && next.is_whitespace())
        .map_or(text.len(), |((at, c), _)| at + c.len_utf8());
    clip(text.get(..end).unwrap_or(text), max)
}

/// An extractive summary of the main content, as lines: each heading (indented by
/// level) with the first sentence of the text under it, at most `max` headings; a page
/// without headings gives the first sentences of its first three paragraphs.
pub fn summary(snapshot: &Snapshot, max: usize) -> Vec<String> {
    let blocks = content(snapshot);
    let mut lines = Vec::new();
    for (at, block) in blocks.iter().enumerate() {
        let Some(level) = block.heading else { continue };
        if lines.len() == max {
            break;
        }
        let lead = blocks
            .get(at + 1)
            .filter(|b| b.heading.is_none())
            .map(|b| marked(b, first_sentence(&b.text, 200)));
        let indent = "  ".repeat(usize::from(level.clamp(1, 6)) - 1);
        let heading = marked(block, clip(&block.text, 120));
        lines.push(match lead {
            Some(lead) => format!("{indent}{heading}: {lead}"),
            None => format!("{indent}{heading}"),
        });
    }
    if lines.is_empty() {
        lines = blocks
            .iter()
            .take(3)
            .map(|b| marked(b, first_sentence(&b.text, 200)))
            .collect();
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(heading: Option<u8>, text: &str, region: Region) -> Block {
        Block {
            heading,
            text: text.into(),
            region,
            frame: None,
        }
    }

    fn article() -> Snapshot {
        Snapshot {
            title: "Owls".into(),
            blocks: vec![
                block(None, "Home About Shop", Region::Boilerplate),
                block(Some(1), "Owls", Region::Main),
                block(None, "Owls hunt at night.", Region::Main),
                block(Some(2), "Diet", Region::Main),
                block(None, "Mice, mostly. Owls swallow them whole.", Region::Main),
                block(None, "© 2026 Owl Weekly", Region::Boilerplate),
            ],
            ..Snapshot::default()
        }
    }

    #[test]
    fn another_sites_frame_is_read_marked_with_its_origin_wherever_its_text_shows() {
        let mut page = article();
        page.blocks.insert(
            3,
            Block {
                frame: Some("https://ads.example".into()),
                ..block(None, "Owls love this coupon. Buy now.", Region::Main)
            },
        );
        let read = readable(&page, 0, 10_000).text;
        assert!(
            read.contains("\n\n[from https://ads.example] Owls love this coupon. Buy now.\n\n"),
            "{read}"
        );
        assert!(
            read.starts_with("# Owls\n\nOwls hunt at night."),
            "the site's own words unmarked: {read}"
        );
        let (found, _) = find(&page, "coupon", 10, 5);
        assert_eq!(
            found,
            ["[from https://ads.example] …love this coupon. Buy now."]
        );
        page.blocks.swap(2, 3);
        let lines = summary(&page, 5);
        assert_eq!(
            lines.first().map(String::as_str),
            Some("Owls: [from https://ads.example] Owls love this coupon.")
        );
    }

    #[test]
    fn the_main_region_is_read_without_navigation_or_footer() {
        let read = readable(&article(), 0, 10_000);
        assert_eq!(
            read.text,
            "# Owls\n\nOwls hunt at night.\n\n## Diet\n\nMice, mostly. Owls swallow them whole."
        );
        assert_eq!(read.next_offset, None);
        assert_eq!(read.total_chars, read.text.chars().count());
    }

    #[test]
    fn an_apps_slight_main_is_read_with_the_text_around_it_and_an_articles_main_alone() {
        let app = Snapshot {
            blocks: vec![
                block(Some(1), "todos", Region::Other),
                block(None, "Feed the owl", Region::Main),
                block(None, "1 item left", Region::Other),
                block(None, "Written by owls", Region::Boilerplate),
            ],
            ..Snapshot::default()
        };
        assert_eq!(
            readable(&app, 0, 1_000).text,
            "# todos\n\nFeed the owl\n\n1 item left"
        );
        let mut article = app.clone();
        article.blocks[1].text = "Owls hunt at night. ".repeat(40);
        let text = readable(&article, 0, 10_000).text;
        assert!(
            text.starts_with("Owls hunt") && !text.contains("1 item left"),
            "{text}"
        );
    }

    #[test]
    fn a_page_without_a_main_region_is_read_but_its_boilerplate_is_not() {
        let mut page = article();
        for b in &mut page.blocks {
            if b.region == Region::Main {
                b.region = Region::Other;
            }
        }
        let text = readable(&page, 0, 10_000).text;
        assert!(text.starts_with("# Owls") && !text.contains("Shop") && !text.contains("©"));
        let only_nav = Snapshot {
            blocks: vec![block(None, "Home About", Region::Boilerplate)],
            ..Snapshot::default()
        };
        assert_eq!(readable(&only_nav, 0, 100).text, "Home About");
    }

    #[test]
    fn long_text_comes_in_windows_that_say_where_the_next_starts() {
        let page = article();
        let first = readable(&page, 0, 10);
        assert_eq!(first.text, "# Owls\n\nOw");
        assert_eq!(first.next_offset, Some(10));
        let second = readable(&page, 10, 10);
        assert_eq!(second.text, "ls hunt at");
        let last = readable(&page, 70, 100);
        assert_eq!(last.next_offset, None);
        assert!(readable(&page, 10_000, 10).text.is_empty());
    }

    #[test]
    fn the_outline_lists_headings_indented_by_level_up_to_the_limit() {
        assert_eq!(
            outline(&article(), 10),
            (vec!["Owls".into(), "  Diet".into()], 2)
        );
        assert_eq!(outline(&article(), 1), (vec!["Owls".into()], 2));
    }

    #[test]
    fn the_summary_is_each_heading_with_the_first_sentence_under_it() {
        assert_eq!(
            summary(&article(), 10),
            ["Owls: Owls hunt at night.", "  Diet: Mice, mostly."]
        );
        assert_eq!(summary(&article(), 1), ["Owls: Owls hunt at night."]);
        let flat = Snapshot {
            blocks: vec![
                block(None, "No headings here. Second sentence.", Region::Main),
                block(None, "Version 2.5 is out", Region::Main),
            ],
            ..Snapshot::default()
        };
        assert_eq!(
            summary(&flat, 10),
            ["No headings here.", "Version 2.5 is out"]
        );
        assert!(summary(&Snapshot::default(), 10).is_empty());
    }

    #[test]
    fn find_is_case_insensitive_gives_context_and_counts_past_the_limit() {
        let (found, total) = find(&article(), "OWLS", 6, 2);
        assert_eq!(total, 3);
        assert_eq!(found, ["Owls", "Owls hunt …"]);
        let (found, _) = find(&article(), "swallow", 5, 5);
        assert_eq!(found, ["…Owls swallow them…"]);
        assert_eq!(find(&article(), "  ", 5, 5), (Vec::new(), 0));
        assert_eq!(find(&article(), "badger", 5, 5).1, 0);
    }
}
