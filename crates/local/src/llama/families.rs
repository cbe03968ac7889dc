//! Each supported architecture × quantisation against llama.cpp: small random-weight
//! models written by `tests/ref/make_models.py` (PyPI's `gguf` writes them in F32,
//! llama.cpp's own quantiser makes the Q8_0, Q4_K_M, Q5_K_M and Q6_K files from them,
//! as the hubs' files are made, with Q5_0/Q5_1/Q8_0 for the matrices of qwen2's
//! 384 columns), and llama-cpp-python's logits on each for one prompt
//! and four teacher-forced greedy steps. The gemma2, gemma3 and phi3 files carry every
//! setting those graphs read (soft caps, a sliding window the prompt outruns, gemma3's
//! local RoPE base and global linear scaling, phi3's fused matrices, long RoPE factors
//! and attention factor): each one left out of our pass took its family's F32 error
//! from under 0.001 to between 0.04 (gemma3's scaling) and 0.84 (gemma2's window),
//! measured 2026-11-28. Each file's tokenizer and chat template also give llama.cpp's
//! ids for a rendered chat prompt: SentencePiece for gemma2, gemma3 and phi3, as the
//! hubs' files are. The real-weights check stays SmolLM2's
//! (`tests.rs`). Never skipped: a missing venv or `gguf` package fails, saying how to
//! install it.

use super::*;
use crate::template::{ChatTemplate, Turn};
use crate::testing::Inline;
use crate::tokenizer::Tokenizer;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Largest logit difference allowed, as a share of the largest logit, per quant.
/// F32 differs only by llama.cpp's f16 KV cache (measured worst 0.0008 of the largest
/// logit). Quantized weights meet activations quantized to 8 bits on both sides (Q8_0
/// per 32, Q8_K per 256, in the same integer arithmetic: `quant::kquant`'s tests), and
/// any last-bit difference upstream (the f16 cache, the order of sums) flips some of
/// those roundings a whole step, which the blocks amplify: measured worst 0.035 over
/// the seven files × Q8_0, Q4_K_M, Q5_K_M, Q6_K (0.009 to 0.035), five positions each;
/// the weights themselves decode exactly as gguf-py decodes them. Per family, F32 and
/// quantized worst (2026-11-28): llama 0.0006 / 0.031, llama3 0.0006 / 0.033, qwen2
/// 0.0005 / 0.022, qwen3 0.0008 / 0.032, gemma2 0.0005 / 0.026, gemma3 0.0003 / 0.014,
/// phi3 0.0007 / 0.035 (Q4_K_M): the same tolerances hold for the new families.
fn tolerance(quant: &str) -> f32 {
    match quant {
        "F32" => 0.002,
        _ => 0.05,
    }
}

/// Largest |a − b| over the largest |b|.
fn relative_error(a: &[f32], b: &[f32]) -> f32 {
    let scale = b.iter().fold(0f32, |m, v| m.max(v.abs()));
    a.iter().zip(b).fold(0f32, |m, (x, y)| m.max((x - y).abs())) / scale
}

fn argmax(x: &[f32]) -> usize {
    let mut best = 0;
    for (i, &v) in x.iter().enumerate() {
        if v > x[best] {
            best = i;
        }
    }
    best
}

fn floats(v: &serde_json::Value) -> Vec<f32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect()
}

/// The tool result turn as the file's template family renders it.
/// The file's template rendered for the reference's one user message, and its ids.
fn chat_prompt(g: &Gguf) -> (String, Vec<u32>) {
    let tok = Tokenizer::from_gguf(g).unwrap_or_else(|e| panic!("tokenizer: {e}"));
    let template = ChatTemplate::from_gguf(g, &tok).unwrap_or_else(|e| panic!("template: {e}"));
    let turns = [Turn {
        role: "user",
        content: "Where am I? The  room\tis  the hall.",
    }];
    (
        template.render(&turns, true),
        template.encode(&tok, &turns, true),
    )
}

fn tool_turn(g: &Gguf) -> String {
    let tok = Tokenizer::from_gguf(g).unwrap_or_else(|e| panic!("tokenizer: {e}"));
    let template = ChatTemplate::from_gguf(g, &tok).unwrap_or_else(|e| panic!("template: {e}"));
    let turns = [
        Turn {
            role: "user",
            content: "Where am I?",
        },
        Turn {
            role: "tool",
            content: "{\"room\":\"hall\"}",
        },
    ];
    template.render(&turns, true)
}

/// Every K-quant tensor decodes to gguf-py's values: its first 512 exactly (both
/// compute `d·scale·q − dmin·min` in f32), its sum to within f32's rounding.
fn dequantizes_as_gguf_py_does(g: &Gguf, reference: &serde_json::Value, what: &str) {
    for (name, want) in reference.as_object().unwrap() {
        let t = g.tensor(name).unwrap();
        let n: u64 = t.dims.iter().product();
        let mut all = vec![0f32; n as usize];
        quant::dequantize_row(t.data, t.kind, &mut all).unwrap();
        let head = floats(&want["head"]);
        let off = relative_error(&all[..head.len()], &head);
        assert!(
            off < 1e-6,
            "{what} {name} ({:?}): head off by {off}",
            t.kind
        );
        let sum: f64 = all.iter().map(|&v| f64::from(v)).sum();
        let scale: f64 = all.iter().map(|&v| f64::from(v.abs())).sum();
        let want = want["sum"].as_f64().unwrap();
        assert!(
            (sum - want).abs() <= 1e-6 * scale,
            "{what} {name}: sum {sum}, gguf-py {want}"
        );
    }
}

#[test]
fn every_architecture_and_quant_gives_llama_cpps_logits_on_random_weights() {
    let python = crate::testing::llama_cpp_python();
    let dir = std::env::temp_dir().join(format!("familiar-families-{}", std::process::id()));
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/ref/make_models.py");
    let status = std::process::Command::new(&python)
        .arg(script)
        .arg(&dir)
        .status();
    assert!(
        status.is_ok_and(|s| s.success()),
        "make_models.py failed under {}: its venv needs PyPI's gguf (run `scripts/setup.sh test`)",
        python.display()
    );
    let reference: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("reference.json")).unwrap()).unwrap();
    let mut types_seen = BTreeMap::new();
    let (mut table, mut failures) = (Vec::new(), Vec::new());
    for m in reference["models"].as_array().unwrap() {
        let (arch, quant) = (m["arch"].as_str().unwrap(), m["quant"].as_str().unwrap());
        for (kind, count) in m["types"].as_object().unwrap() {
            *types_seen.entry(kind.clone()).or_insert(0) += count.as_u64().unwrap();
        }
        let bytes = std::fs::read(m["file"].as_str().unwrap()).unwrap();
        let g = Gguf::parse(bytes.clone()).unwrap();
        dequantizes_as_gguf_py_does(&g, &m["dequantized"], &format!("{arch} {quant}"));
        let tool = tool_turn(&g);
        // The file's tokenizer and template give llama.cpp's ids for a chat prompt
        // (SentencePiece for gemma2, gemma3 and phi3, as the hubs' files are).
        let want_text = m["chat"]["text"].as_str().unwrap();
        let want_ids: Vec<u32> = m["chat"]["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_u64().unwrap() as u32)
            .collect();
        assert_eq!(
            chat_prompt(&g),
            (want_text.to_string(), want_ids),
            "{arch} {quant}"
        );
        let model = Arc::new(Model::load(g, 128).unwrap_or_else(|e| panic!("{arch} {quant}: {e}")));
        let prompt: Vec<u32> = m["prompt"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_u64().unwrap() as u32)
            .collect();
        let mut session = Session::new(model.clone());
        let mut ours = session.prefill(&prompt, 64).unwrap().unwrap();
        // The same pass with its rows shared three ways: the same bits.
        let mut shared = Session::new(model.clone());
        shared.share_with(Box::new(Inline::new(&model, &bytes, 3)));
        let mut split = shared.prefill(&prompt, 64).unwrap().unwrap();
        let (mut worst, mut same_argmax, mut steps) = (0f32, 0, 0);
        for step in m["steps"].as_array().unwrap() {
            let theirs = floats(&step["logits"]);
            assert_eq!(ours.len(), theirs.len(), "{arch} {quant}: vocabulary");
            worst = worst.max(relative_error(&ours, &theirs));
            steps += 1;
            same_argmax += usize::from(argmax(&ours) == argmax(&theirs));
            assert!(split == ours, "{arch} {quant}: shared three ways");
            let token = step["token"].as_u64().unwrap() as u32;
            ours = session.step(token).unwrap();
            split = shared.step(token).unwrap();
        }
        table.push(format!(
            "{arch:7} {quant:7} worst {worst:.4} (tolerance {}), argmax {same_argmax}/{steps}",
            tolerance(quant)
        ));
        if worst >= tolerance(quant) {
            failures.push(format!(
                "{arch} {quant}: logits off by {worst} of the largest"
            ));
        }
        // Near-ties aside (random weights have few), the greedy token is llama.cpp's.
        if same_argmax + 1 < steps {
            failures.push(format!("{arch} {quant}: argmax {same_argmax}/{steps}"));
        }
        // The chat template and its tool-result convention come from the file.
        let convention = match arch {
            "qwen2" | "qwen3" => {
                "<|im_start|>user\n<tool_response>\n{\"room\":\"hall\"}\n</tool_response>"
            }
            "gemma2" | "gemma3" => {
                "<start_of_turn>user\nTool result:\n{\"room\":\"hall\"}<end_of_turn>\n"
            }
            "phi3" => "<|user|>\nTool result:\n{\"room\":\"hall\"}<|end|>\n",
            _ => "<|start_header_id|>ipython<|end_header_id|>\n\n{\"room\":\"hall\"}",
        };
        assert!(tool.contains(convention), "{arch}: {tool:?}");
    }
    println!("{}", table.join("\n"));
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every K-quant was exercised (Q4_K_M and Q5_K_M mix in Q6_K), and the fallback
    // types llama.cpp gives matrices whose rows are not whole 256-blocks.
    for kind in ["Q4_K", "Q5_K", "Q6_K", "Q5_0", "Q5_1", "Q8_0", "F32"] {
        assert!(
            types_seen.contains_key(kind),
            "no {kind} tensor: {types_seen:?}"
        );
    }
    assert_eq!(table.len(), 7 * 5, "architectures × quants");
}
