use super::*;
use crate::gguf::Gguf;
use crate::llama::Session;
use crate::llama::tests::{argmax, file_as, fused, prompt, tiny_file, tiny_tensors};
use crate::testing::{Inline, WRITTEN_KINDS};
use std::sync::Arc;

/// The last logits of a prompt read in chunks of 5, then of 4 greedy steps.
fn run(session: &mut Session, tokens: &[u32]) -> Vec<Vec<f32>> {
    let mut logits = loop {
        if let Some(l) = session.prefill(tokens, 5).unwrap() {
            break l;
        }
    };
    let mut all = vec![logits.clone()];
    for _ in 0..4 {
        logits = session.step(argmax(&logits)).unwrap();
        all.push(logits.clone());
    }
    all
}

#[test]
fn shares_cover_every_row_once_in_order_and_differ_by_one_at_most() {
    for rows in [0, 1, 2, 5, 32, 49_152] {
        for parts in 1..=9 {
            let shares: Vec<_> = (0..parts).map(|p| share(rows, p, parts)).collect();
            assert_eq!(shares.first().map(|s| s.start), Some(0));
            assert_eq!(shares.last().map(|s| s.end), Some(rows));
            for pair in shares.windows(2) {
                assert_eq!(pair[0].end, pair[1].start);
            }
            let lens: Vec<_> = shares.iter().map(|s| s.len()).collect();
            let (min, max) = (lens.iter().min(), lens.iter().max());
            assert!(max.zip(min).is_some_and(|(a, b)| a - b <= 1), "{lens:?}");
        }
    }
}

#[test]
fn any_number_of_helpers_gives_the_same_logits_bit_for_bit_as_one_thread() {
    for kind in WRITTEN_KINDS {
        let file = tiny_file(kind);
        let model = Arc::new(Model::load(Gguf::parse(file.clone()).unwrap(), 1 << 20).unwrap());
        let tokens = prompt(11, 13);
        let alone = run(&mut Session::new(model.clone()), &tokens);
        // 33 parts: more than k and v have rows (32), so some shares are empty.
        for parts in [2, 3, 4, 33] {
            let mut shared = Session::new(model.clone());
            shared.share_with(Box::new(Inline::new(&model, &file, parts)));
            assert_eq!(shared.threads(), parts);
            assert!(
                run(&mut shared, &tokens) == alone,
                "{kind:?} in {parts} parts"
            );
        }
    }
}

#[test]
fn phi3s_fused_matrices_are_shared_by_their_rows_within_the_tensor() {
    let up = fused(tiny_tensors(3), &["ffn_gate", "ffn_up"], "ffn_up");
    let qkv = fused(up, &["attn_q", "attn_k", "attn_v"], "attn_qkv");
    let gguf = file_as("phi3", &[], &qkv);
    // The places are offsets into the file the model was read from: the same bytes.
    let file = gguf_bytes(&gguf);
    let model = Arc::new(Model::load(gguf, 64).unwrap());
    let tokens = prompt(5, 9);
    let alone = run(&mut Session::new(model.clone()), &tokens);
    let mut shared = Session::new(model.clone());
    shared.share_with(Box::new(Inline::new(&model, &file, 3)));
    assert!(run(&mut shared, &tokens) == alone);
}

/// The bytes a parsed file was read from, rebuilt from its tensors' offsets.
fn gguf_bytes(gguf: &Gguf) -> Vec<u8> {
    let end = gguf
        .tensors()
        .map(|t| t.offset + t.data.len())
        .max()
        .unwrap();
    let mut bytes = vec![0; end];
    for t in gguf.tensors() {
        bytes[t.offset..t.offset + t.data.len()].copy_from_slice(t.data);
    }
    bytes
}

#[test]
fn a_helper_that_fails_is_let_go_and_the_batch_read_again_on_one_thread() {
    let file = tiny_file(TensorKind::Q8_0);
    let model = Arc::new(Model::load(Gguf::parse(file.clone()).unwrap(), 1 << 20).unwrap());
    let tokens = prompt(2, 12);
    let alone = run(&mut Session::new(model.clone()), &tokens);
    for fail_at in [0, 3, 9, 40] {
        let mut helpers = Inline::new(&model, &file, 2);
        helpers.fail_at = Some(fail_at);
        let mut shared = Session::new(model.clone());
        shared.share_with(Box::new(helpers));
        assert!(
            run(&mut shared, &tokens) == alone,
            "failing at post {fail_at}"
        );
        assert_eq!(shared.threads(), 1);
        assert_eq!(shared.tokens().len(), tokens.len() + 4);
    }
}

#[test]
fn a_shard_refuses_what_does_not_fit_with_a_clear_error() {
    let mut shard = Shard::new();
    let said = |r: Result<(), ModelError>| r.unwrap_err().to_string();
    assert_eq!(
        said(shard.add(0, 8, 2, 32, vec![0; 67])),
        "a helper thread failed: 67 bytes for 2 rows of 32 Q8_0"
    );
    assert!(said(shard.add(0, 99, 1, 32, vec![0; 34])).contains("tensor type 99"));
    assert!(said(shard.add(u32::MAX, 8, 1, 32, vec![0; 34])).contains("past any model's"));
    assert!(said(shard.add(0, 8, 1, 33, vec![0; 34])).contains("not whole"));
    shard.add(2, 8, 2, 32, vec![0; 68]).unwrap();
    let mut out = [0f32; 2];
    assert_eq!(shard.run(2, &[1.0; 32], &mut out).unwrap(), 2);
    let err = shard.run(1, &[1.0; 32], &mut out).unwrap_err().to_string();
    assert_eq!(err, "a helper thread failed: this helper has no job 1");
    let err = shard.run(2, &[1.0; 64], &mut out).unwrap_err().to_string();
    assert_eq!(err, "a helper thread failed: no room for 4 values after 0");
}

#[test]
fn the_real_smollm2_shared_two_and_three_ways_gives_one_threads_logits() {
    // Q4_1 layers and a Q8_0 head, as the model hubs ship it.
    let file = std::fs::read(crate::testing::smollm2()).unwrap();
    let model = Arc::new(Model::load(Gguf::parse(file.clone()).unwrap(), 256).unwrap());
    let tokens: Vec<u32> = (0..21).map(|i| 100 + 37 * i).collect();
    let alone = run(&mut Session::new(model.clone()), &tokens);
    for parts in [2, 3] {
        let mut shared = Session::new(model.clone());
        shared.share_with(Box::new(Inline::new(&model, &file, parts)));
        assert!(run(&mut shared, &tokens) == alone, "{parts} parts");
    }
}
