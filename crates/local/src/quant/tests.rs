use super::half::f16_at;
use super::product::{TILE, quantize_activations};
use super::*;
use crate::testing::Rng;

use crate::testing::WRITTEN_KINDS as KINDS;

fn random(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n).map(|_| rng.float()).collect()
}

#[test]
fn every_half_converts_to_f32_and_back_unchanged() {
    for h in 0..=u16::MAX {
        let f = f16_to_f32(h);
        if f.is_nan() {
            assert!(f16_to_f32(f32_to_f16(f)).is_nan());
        } else {
            assert_eq!(f32_to_f16(f), h, "{h:#06x} → {f}");
        }
    }
}

#[test]
fn halves_have_their_ieee_values_and_round_to_nearest_even() {
    assert_eq!(f16_to_f32(0x3c00), 1.0);
    assert_eq!(f16_to_f32(0xc000), -2.0);
    assert_eq!(f16_to_f32(0x7bff), 65504.0);
    assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
    assert_eq!(f16_to_f32(0x7c00), f32::INFINITY);
    // 1 + 2⁻¹¹ lies halfway between 1 and 1 + 2⁻¹⁰: ties go to the even mantissa.
    assert_eq!(f32_to_f16(1.0 + 2f32.powi(-11)), 0x3c00);
    assert_eq!(f32_to_f16(1.0 + 3.0 * 2f32.powi(-11)), 0x3c02);
    assert_eq!(f32_to_f16(1e6), 0x7c00);
    assert_eq!(f32_to_f16(1e-9), 0);
}

#[test]
fn quantized_rows_decode_close_to_their_values() {
    let mut rng = Rng(1);
    let x = random(&mut rng, 256);
    for (kind, tol) in [
        (TensorKind::F32, 0.0),
        (TensorKind::F16, 1e-3),
        (TensorKind::Q8_0, 1.0 / 127.0),
        (TensorKind::Q4_0, 1.0 / 8.0),
        (TensorKind::Q4_1, 1.0 / 15.0),
        (TensorKind::Q5_0, 1.0 / 16.0),
        (TensorKind::Q5_1, 1.0 / 31.0),
    ] {
        let bytes = quantize(kind, &x).unwrap();
        assert_eq!(bytes.len(), row_bytes(kind, 256).unwrap());
        let mut back = vec![0f32; 256];
        dequantize_row(&bytes, kind, &mut back).unwrap();
        for (a, b) in x.iter().zip(&back) {
            assert!((a - b).abs() <= tol, "{kind:?}: {a} vs {b}");
        }
    }
}

#[test]
fn q4_1_keeps_low_nibbles_for_the_first_half_of_a_block() {
    let x: Vec<f32> = (0..32).map(|i| if i < 16 { 0.0 } else { 15.0 }).collect();
    let bytes = quantize(TensorKind::Q4_1, &x).unwrap();
    assert!(bytes[4..].iter().all(|&b| b == 0xf0), "{:?}", &bytes[4..]);
    let mut back = vec![0f32; 32];
    dequantize_row(&bytes, TensorKind::Q4_1, &mut back).unwrap();
    assert_eq!(back, x);
}

#[test]
fn dot_agrees_with_dequantize_then_dot_for_every_kind() {
    let mut rng = Rng(7);
    for kind in KINDS {
        for _ in 0..20 {
            let w = random(&mut rng, 192);
            let x = random(&mut rng, 192);
            let bytes = quantize(kind, &w).unwrap();
            let mut plain = vec![0f32; 192];
            dequantize_row(&bytes, kind, &mut plain).unwrap();
            let want: f32 = plain.iter().zip(&x).map(|(a, b)| a * b).sum();
            let got = dot(&bytes, kind, &x).unwrap();
            // Activations are quantized to 8 bits for quantized weights (as in ggml):
            // an error of about |w|·|x|/127 spread over 192 terms.
            let tol = if matches!(kind, TensorKind::F32 | TensorKind::F16) {
                1e-4
            } else {
                0.05
            };
            assert!((got - want).abs() <= tol, "{kind:?}: {got} vs {want}");
        }
    }
}

#[test]
fn matmul_of_many_tokens_equals_their_dots_one_by_one() {
    let mut rng = Rng(11);
    let (rows, cols, n) = (9, 96, TILE + 5);
    for kind in KINDS {
        let w = random(&mut rng, rows * cols);
        let x = random(&mut rng, n * cols);
        let bytes = quantize(kind, &w).unwrap();
        let mut out = vec![0f32; n * rows];
        matmul(&bytes, kind, rows, cols, &x, &mut out).unwrap();
        let rb = row_bytes(kind, cols).unwrap();
        for t in 0..n {
            for r in 0..rows {
                let one = dot(
                    &bytes[r * rb..(r + 1) * rb],
                    kind,
                    &x[t * cols..(t + 1) * cols],
                );
                assert_eq!(out[t * rows + r], one.unwrap(), "{kind:?} t{t} r{r}");
            }
        }
    }
}

#[test]
fn mismatched_shapes_are_errors() {
    let w = quantize(TensorKind::Q8_0, &[0.5; 64]).unwrap();
    let mut out = [0f32; 2];
    assert!(matmul(&w, TensorKind::Q8_0, 2, 32, &[0.0; 33], &mut out).is_err());
    assert!(matmul(&w, TensorKind::Q8_0, 3, 32, &[0.0; 32], &mut out).is_err());
    assert!(matmul(&w, TensorKind::Q8_0, 2, 32, &[0.0; 32], &mut out[..1]).is_err());
    assert!(matmul(&w, TensorKind::Q8_0, 2, 32, &[0.0; 32], &mut out).is_ok());
    assert!(row_bytes(TensorKind::Q4_1, 40).is_err());
    assert!(dequantize_row(&w, TensorKind::Q8_0, &mut [0.0; 32]).is_err());
}

#[test]
fn block_scales_read_every_finite_half_exactly() {
    for h in 0..=u16::MAX {
        let want = f16_to_f32(h);
        if want.is_finite() {
            assert_eq!(
                f16_at(&h.to_le_bytes(), 0).to_bits(),
                want.to_bits(),
                "{h:#06x}"
            );
        }
    }
}

#[test]
fn activations_keep_each_blocks_integer_sum_beside_its_scaled_half() {
    let mut rng = Rng(5);
    let x = random(&mut rng, 4 * BLOCK);
    let acts = quantize_activations(&x);
    assert_eq!(acts.sums.len(), 4);
    for (b, q) in acts.q.chunks_exact(BLOCK).enumerate() {
        let sum: i32 = q.iter().map(|&q| i32::from(q)).sum();
        assert_eq!(acts.sums[b], sum, "block {b}");
        let scaled = f16_to_f32(f32_to_f16(acts.d[b] * sum as f32));
        assert_eq!(acts.s[b].to_bits(), scaled.to_bits(), "block {b}");
    }
}
