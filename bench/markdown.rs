//! Markdown parsing costs, printed: time per byte on inputs that made the old parser
//! quadratic (20, 80 and 320 kB: linear time keeps the per-byte figure flat),
//! and a 100 KB answer streamed in 20-byte chunks, parsed again on every chunk in
//! full (as before) and through `Stream` (only the unsettled tail).
//! Run: `cargo run --release --example markdown`; in wasm: `bench/wasm markdown`.

use std::time::Instant;

use familiar::base::markdown::{Limits, Stream, parse_within};

/// No cut-off, so the figures are the parser's own.
const LIMITS: Limits = Limits {
    max_bytes: usize::MAX,
    max_depth: 32,
};

fn main() {
    println!("parse time per byte (flat from 20 kB to 320 kB = linear):");
    let shapes: [(&str, &str); 8] = [
        ("line of [", "["),
        ("line of ![", "!["),
        ("line of *", "*"),
        ("a_b_ words", "a_b_ "),
        ("nested >", "> "),
        ("backticks", "`a``"),
        ("[a](b", "[a](b"),
        ("www.x.org(", "www.x.org("),
    ];
    for (name, unit) in shapes {
        let per_byte = |bytes: usize| {
            let text = unit.repeat(bytes / unit.len());
            let start = Instant::now();
            let blocks = parse_within(&text, LIMITS);
            let ns = start.elapsed().as_nanos() as f64 / text.len() as f64;
            std::hint::black_box(blocks);
            ns
        };
        println!(
            "  {name:<12} 20 kB: {:>6.1} ns/byte   80 kB: {:>6.1} ns/byte   320 kB: {:>6.1} ns/byte",
            per_byte(20_000),
            per_byte(80_000),
            per_byte(320_000)
        );
    }
    println!("a 100 kB answer streamed in 20-byte chunks:");
    for (name, answer) in [
        ("mixed answer", mixed_answer()),
        ("one code block", code_answer()),
    ] {
        let chunks = answer.len().div_ceil(20);
        let start = Instant::now();
        for end in chunk_ends(&answer) {
            std::hint::black_box(parse_within(&answer[..end], LIMITS));
        }
        let full = start.elapsed();
        let start = Instant::now();
        let mut stream = Stream::new(LIMITS);
        let mut parsed = 0;
        for end in chunk_ends(&answer) {
            stream.update(&answer[..end]);
            parsed += stream.unsettled_len();
        }
        let streamed = start.elapsed();
        println!(
            "  {name:<15} {chunks} chunks: whole text each chunk {:>8.1} ms; Stream {:>7.1} ms ({:.1} µs a chunk, {:.0} bytes parsed a chunk)",
            full.as_secs_f64() * 1e3,
            streamed.as_secs_f64() * 1e3,
            streamed.as_secs_f64() * 1e6 / chunks as f64,
            parsed as f64 / chunks as f64,
        );
    }
}

/// The ends of the 20-byte chunks of `text`, moved back to character boundaries.
fn chunk_ends(text: &str) -> impl Iterator<Item = usize> + '_ {
    (1..=text.len().div_ceil(20)).map(move |n| {
        let mut end = (n * 20).min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        end
    })
}

/// An answer as models write them: headings, paragraphs, lists, code, a table.
fn mixed_answer() -> String {
    let section = "## Step\n\nSome *emphasis*, **strong** text, `code` and a [link](https://example.com/a_(b)).\n\
        Another line with www.example.org and my_var_name.\n\n\
        - first item\n- second item with `code`\n  continued\n- [x] done task\n\n\
        ```rust\nfn main() {\n    println!(\"hello\");\n}\n```\n\n\
        | a | b |\n|---|--:|\n| 1 | 2 |\n\n> A quote.\n\n";
    section.repeat(100_000 / section.len() + 1)
}

/// The worst case for re-parsing the tail: one block that never settles.
fn code_answer() -> String {
    let line = "    let value = compute(input, &mut state); // a comment\n";
    format!("```rust\n{}```\n", line.repeat(100_000 / line.len()))
}
