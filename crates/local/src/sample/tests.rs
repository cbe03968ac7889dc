use serde_json::json;

use super::*;
use crate::constraint::Grammar;

fn vocab() -> Vocabulary {
    // 0: stop; 1..: single bytes of a small alphabet and a few runs.
    let mut tokens = vec![Vec::new()];
    tokens.extend(
        [
            "{", "}", "\"", "a", "b", "1", ":", ",", "true", "\"}", "{\"", "ok", "x",
        ]
        .map(|t| t.as_bytes().to_vec()),
    );
    Vocabulary::new(tokens, vec![0])
}

#[test]
fn greedy_takes_the_highest_logit() {
    let mut logits = vec![0.1, 2.0, -1.0, 1.9, f32::NAN];
    assert_eq!(Sampler::greedy().sample(&mut logits, None), Some(1));
    assert_eq!(
        Sampler::new(0.8, 1, 1.0, 5).sample(&mut logits, None),
        Some(1)
    );
}

#[test]
fn a_seed_replays_and_different_seeds_differ() {
    let logits: Vec<f32> = (0..50).map(|i| (i % 7) as f32 * 0.3).collect();
    let run = |seed| {
        let mut s = Sampler::new(1.0, 0, 1.0, seed);
        (0..40)
            .map(|_| s.sample(&mut logits.clone(), None))
            .collect::<Vec<_>>()
    };
    assert_eq!(run(1), run(1));
    assert_ne!(run(1), run(2));
}

#[test]
fn draws_follow_the_softmax_at_the_temperature() {
    let logits = [0.0f32, 1.0, 2.0];
    let mut s = Sampler::new(1.0, 0, 1.0, 42);
    let mut counts = [0u32; 3];
    let n = 30_000;
    for _ in 0..n {
        if let Some(id) = s.sample(&mut logits.to_vec(), None) {
            counts[id as usize] += 1;
        }
    }
    let z: f32 = logits.iter().map(|l| l.exp()).sum();
    for (i, &c) in counts.iter().enumerate() {
        let want = logits[i].exp() / z;
        let got = c as f32 / n as f32;
        assert!((got - want).abs() < 0.015, "token {i}: {got} vs {want}");
    }
}

#[test]
fn top_k_and_top_p_cut_the_tail() {
    let logits = [3.0f32, 2.9, 0.0, -1.0, -2.0];
    let mut k2 = Sampler::new(1.0, 2, 1.0, 9);
    let mut p = Sampler::new(1.0, 0, 0.3, 9);
    for _ in 0..500 {
        assert!(
            k2.sample(&mut logits.to_vec(), None)
                .is_some_and(|id| id < 2)
        );
        assert_eq!(p.sample(&mut logits.to_vec(), None), Some(0));
    }
}

#[test]
fn under_a_constraint_only_allowed_tokens_come_out_and_the_output_completes() {
    let schema =
        json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]});
    let Ok(grammar) = Grammar::json(&schema) else {
        unreachable!()
    };
    let vocab = vocab();
    let mut rng = crate::testing::Rng(17);
    for seed in 0..40u64 {
        let mut sampler = match seed % 4 {
            0 => Sampler::greedy(),
            1 => Sampler::new(0.7, 3, 0.9, seed),
            2 => Sampler::new(1.5, 0, 1.0, seed),
            _ => Sampler::new(1.0, 100, 0.5, seed),
        };
        let mut c = Constraint::new(&grammar);
        let mut out = Vec::new();
        for _ in 0..50 {
            // Favour the stop token and closing braces: the constraint must hold.
            let mut logits: Vec<f32> = (0..vocab.len())
                .map(|i| rng.float() + if i < 3 { 5.0 } else { 0.0 })
                .collect();
            let id = sampler.sample(&mut logits, Some((&c, &vocab)));
            let Some(id) = id else {
                unreachable!("nothing allowed after {out:?}")
            };
            assert!(c.allows(&vocab, id));
            assert!(c.advance(&vocab, id).is_ok());
            if id == 0 {
                break;
            }
            out.push(id);
        }
        assert!(c.is_complete(), "{out:?}");
        // A finished constraint allows nothing more.
        assert_eq!(
            sampler.sample(&mut vec![0.0; vocab.len()], Some((&c, &vocab))),
            None
        );
    }
}

#[test]
fn greedy_under_a_constraint_skips_the_disallowed_best() {
    let Ok(grammar) = Grammar::json(&json!({"type": "boolean"})) else {
        unreachable!()
    };
    let vocab = vocab();
    let c = Constraint::new(&grammar);
    let mut logits = vec![0.0f32; vocab.len()];
    logits[1] = 9.0; // "{", refused
    logits[9] = 1.0; // "true"
    assert_eq!(
        Sampler::greedy().sample(&mut logits, Some((&c, &vocab))),
        Some(9)
    );
}
