//! Repair stays linear: the work one repair takes (characters read, read again after
//! going back, and looked at ahead) is counted, not timed, on inputs built to make a
//! careless repairer go back and forth, and on long random JSON-like noise.

use proptest::prelude::*;

use super::repair_counting;

/// Inputs of about `n` characters, each built around one class of repair.
fn adversarial(n: usize) -> Vec<(&'static str, String)> {
    vec![
        (
            "stray quotes",
            format!("{{\"a\": \"{}\"}}", "x\" ".repeat(n / 3)),
        ),
        (
            "stray quotes before values",
            format!("[\"{}", "a\" 1 ".repeat(n / 5)),
        ),
        (
            "quoted words in a list",
            format!("[\"{}]", "a\" b\", ".repeat(n / 7)),
        ),
        (
            "bare members in a value",
            format!("{{\"a\": \"{}}}", "x, b: ".repeat(n / 6)),
        ),
        (
            "bare words before keys",
            format!("{{\"a\": {}", "w \"k\" ".repeat(n / 6)),
        ),
        (
            "quoted keys after bare words",
            format!("{{{}}}", "w \"k\": 1, ".repeat(n / 10)),
        ),
        (
            "unclosed string",
            format!("{{\"a\": \"{}", "x,".repeat(n / 2)),
        ),
        (
            "tuples",
            format!("{}1{}", "(".repeat(100), ")".repeat(100)).repeat(n / 201),
        ),
        ("sets", format!("[{}]", "{\"a\", \"b\"}, ".repeat(n / 12))),
        ("top-level values", "1, ".repeat(n / 3)),
        ("top-level objects", "{}\n".repeat(n / 3)),
        (
            "objects closed early",
            format!("{{\"a\": 1}}{}", ", \"b\": 2".repeat(n / 8)),
        ),
        (
            "lists closed early",
            format!("{{\"a\": [1]{}}}", ", [2]".repeat(n / 5)),
        ),
        (
            "separated numbers",
            format!("[{}1]", "1_000_000, ".repeat(n / 11)),
        ),
        (
            "zero-width spaces",
            format!("[{}1]", "1,\u{200b}".repeat(n / 3)),
        ),
        (
            "line breaks before end quotes",
            format!("[{}1]", "\"a\n  \", ".repeat(n / 8)),
        ),
        (
            "objects inside strings",
            format!("{{\"a\": \"x {}\"}}", "{\"k\": 1} ".repeat(n / 9)),
        ),
        (
            "quotes in character classes",
            format!("{{\"a\": \"{}\"}}", "[^'\"]+".repeat(n / 7)),
        ),
        (
            "prose before keys",
            format!("{{{}}}", "\"k\": 1, some prose. ".repeat(n / 21)),
        ),
        (
            "values that lost their opening quote",
            format!("{{{}}}", "\"k\": a, b\", ".repeat(n / 12)),
        ),
        (
            "closing brackets in comments",
            format!("{{\"a\": 1 # {}\n}}", "} ".repeat(n / 2)),
        ),
        (
            "stray quote lines",
            format!("[{}1]", "\"a\n\"\n\", ".repeat(n / 8)),
        ),
        (
            "quotes after comments",
            format!("{{\"a\": \"{}\"}}", "x*/\" ".repeat(n / 5)),
        ),
        (
            "concatenations that lost end quotes",
            format!("[{}]", "\"a+/*c*/".repeat(n / 8)),
        ),
        (
            "doubled quotes",
            format!("{{{}}}", "\"\"k\"\": \"\"v\"\", ".repeat(n / 14)),
        ),
    ]
}

#[test]
fn repair_work_grows_linearly_with_the_input() {
    let (small, large) = (adversarial(20_000), adversarial(80_000));
    for ((name, small), (_, large)) in small.iter().zip(&large) {
        let (_, small_work) = repair_counting(small);
        let (_, large_work) = repair_counting(large);
        let per_char = large_work as f64 / large.chars().count() as f64;
        assert!(per_char < 12.0, "{name}: {per_char:.1} steps per character");
        let growth = large_work as f64 / small_work as f64;
        let size = large.chars().count() as f64 / small.chars().count() as f64;
        assert!(
            growth < size * 1.25,
            "{name}: input grew {size:.1}x, work {growth:.1}x"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn repair_work_on_long_noise_is_bounded_by_its_length(
        noise in "[{}\\[\\](),:\"'`“”´ a-z0-9_TrueFalsNn.+\\-/*#\\\\\n\t\u{200b}]{2000,6000}"
    ) {
        let (_, work) = repair_counting(&noise);
        let length = noise.chars().count();
        prop_assert!(work <= 12 * length, "{} steps for {} characters", work, length);
    }
}
