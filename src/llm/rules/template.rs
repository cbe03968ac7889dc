//! A rule's templates filled: its arguments from the user's words, its answer from
//! the tool's JSON result.

use serde_json::{Map, Value};

/// The rule's arguments with `{message}` (the user's words) and `{rest}` (the words
/// after the matched keyword) filled in its text values.
pub(super) fn fill_arguments(arguments: &Value, message: &str, keyword: &str) -> Value {
    match arguments {
        Value::String(text) => {
            let lower = message.to_lowercase();
            let rest = lower
                .find(keyword)
                .and_then(|at| message.get(at + keyword.len()..))
                .unwrap_or_default()
                .trim_matches(|c: char| {
                    c.is_whitespace() || matches!(c, ':' | ',' | '.' | '!' | '?')
                });
            Value::String(
                text.replace("{message}", message.trim())
                    .replace("{rest}", rest),
            )
        }
        Value::Object(fields) => {
            let mut filled = Map::new();
            filled.extend(
                fields
                    .iter()
                    .map(|(k, v)| (k.clone(), fill_arguments(v, message, keyword))),
            );
            Value::Object(filled)
        }
        other => other.clone(),
    }
}

/// Replaces each `{field}` with that field of `value` (a list of texts joined by
/// `; `), and `{field|one|many}` with a number and its word ("1 thing", "2 things");
/// unknown fields stay visible.
pub(super) fn fill_template(template: &str, value: &Value) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let (before, after) = rest.split_at(open);
        out.push_str(before);
        let Some(close) = after.find('}') else {
            out.push_str(after);
            return out;
        };
        let (placeholder, tail) = after.split_at(close + 1);
        let field = placeholder.trim_start_matches('{').trim_end_matches('}');
        let mut forms = field.split('|');
        let field = forms.next().unwrap_or_default();
        if let (Some(one), Some(many), Some(n)) = (
            forms.next(),
            forms.next(),
            value.get(field).and_then(Value::as_u64),
        ) {
            out.push_str(&format!("{n} {}", if n == 1 { one } else { many }));
            rest = tail;
            continue;
        }
        match value.get(field) {
            Some(Value::String(s)) => out.push_str(s),
            Some(Value::Array(items)) if items.iter().all(Value::is_string) => {
                let texts: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
                out.push_str(&texts.join("; "));
            }
            Some(other) => out.push_str(&other.to_string()),
            None => out.push_str(placeholder),
        }
        rest = tail;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn templates_say_a_count_with_its_word_in_the_singular_or_plural() {
        let template = "I remember {count|thing|things}.";
        assert_eq!(
            fill_template(template, &json!({"count": 1})),
            "I remember 1 thing."
        );
        assert_eq!(
            fill_template(template, &json!({"count": 0})),
            "I remember 0 things."
        );
        assert_eq!(
            fill_template(template, &json!({"count": 3})),
            "I remember 3 things."
        );
        // Not a number: the field as usual.
        assert_eq!(fill_template("{count|a|b}", &json!({"count": "x"})), "x");
    }

    #[test]
    fn templates_join_lists_of_text() {
        assert_eq!(fill_template("{m}", &json!({"m": ["a", "b"]})), "a; b");
    }

    #[test]
    fn templates_keep_unknown_placeholders_and_render_non_strings() {
        let value = json!({"n": 3, "s": "x"});
        assert_eq!(
            fill_template("{s}{n} {missing} {", &value),
            "x3 {missing} {"
        );
    }
}
