//! Which offered tools a turn most likely needs, when not all of them fit the model's
//! window: the words of the turn against the words of each tool's name. A small
//! model's window may hold a handful of schemas; the ones whose names the person's
//! words touch ("remember that…" → `remember`) are kept longest.

use crate::base::small_map::SmallSet;

use crate::llm::ToolSpec;

/// The indices of `tools`, most related to `text` first; ties keep their order.
pub(super) fn ranked(tools: &[ToolSpec], text: &str) -> Vec<usize> {
    let said: SmallSet<String> = words(text).collect();
    let mut order: Vec<(usize, usize)> = tools
        .iter()
        .enumerate()
        .map(|(index, tool)| {
            let hits = words(&tool.name).filter(|w| said.contains(w)).count();
            (index, hits)
        })
        .collect();
    crate::base::sort::sort_by(&mut order, |a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    order.into_iter().map(|(index, _)| index).collect()
}

/// The stems of a text's words of three letters or more: lowercase, cut to five
/// letters, so "Remember" meets `remember` and "items" meets `item`.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3)
        .map(|w| w.to_lowercase().chars().take(5).collect::<String>())
        .map(|w| w.trim_end_matches('s').to_owned())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(name: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: String::new(),
            parameters: json!({"type": "object"}),
        }
    }

    #[test]
    fn the_tools_a_turn_names_come_first_and_the_rest_keep_their_order() {
        let tools = [
            tool("buy_item"),
            tool("current_time"),
            tool("remember"),
            tool("recall"),
        ];
        assert_eq!(
            ranked(&tools, "Remember that the ale is cold"),
            [2, 0, 1, 3]
        );
        assert_eq!(ranked(&tools, "What time is it?"), [1, 0, 2, 3]);
        assert_eq!(ranked(&tools, "Buy two items"), [0, 1, 2, 3]);
        assert_eq!(ranked(&tools, ""), [0, 1, 2, 3]);
    }
}
