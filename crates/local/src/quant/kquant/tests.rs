use super::*;
use crate::testing::Rng;

/// Random super-blocks: every byte random (every scale, min and quant pattern), the
/// f16 scales set to modest values so sums stay finite.
fn random_blocks(f: &Format, rng: &mut Rng, blocks: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..blocks {
        let mut b: Vec<u8> = (0..f.bytes).map(|_| rng.next_u64() as u8).collect();
        let half = |v: f32| crate::quant::f32_to_f16(v).to_le_bytes();
        if f.mins {
            b[0..2].copy_from_slice(&half(0.01 + 0.01 * rng.float().abs()));
            b[2..4].copy_from_slice(&half(0.02 * rng.float().abs()));
        } else {
            b[208..210].copy_from_slice(&half(0.003 * rng.float()));
        }
        out.extend(b);
    }
    out
}

/// `W·x` in f64 over the decoded weights and the decoded Q8_K activations: what the
/// integer path must equal up to f32 rounding.
fn exact(kind: TensorKind, w: &[u8], rows: usize, cols: usize, x: &[f32]) -> Vec<f64> {
    let acts = quantize_activations(x);
    let a: Vec<f64> = acts
        .q
        .iter()
        .enumerate()
        .map(|(i, &q)| f64::from(q) * f64::from(acts.d[i / SUPER]))
        .collect();
    let mut row = vec![0f32; cols];
    let mut out = Vec::new();
    for t in 0..x.len() / cols {
        for r in w.chunks_exact(w.len() / rows) {
            dequantize(kind, r, &mut row);
            let at = &a[t * cols..(t + 1) * cols];
            out.push(row.iter().zip(at).map(|(&w, &a)| f64::from(w) * a).sum());
        }
    }
    out
}

fn integer_path_equals_the_decoded_product(kind: TensorKind, seed: u64) {
    let f = format(kind);
    let mut rng = Rng(seed);
    let (rows, cols, n) = (5, 3 * SUPER, TILE + 3);
    let w = random_blocks(f, &mut rng, rows * cols / SUPER);
    let x: Vec<f32> = (0..n * cols).map(|_| rng.float()).collect();
    let mut out = vec![0f32; n * rows];
    matmul(kind, &w, rows, cols, &x, &mut out);
    let want = exact(kind, &w, rows, cols, &x);
    let scale = want.iter().fold(0f64, |m, v| m.max(v.abs()));
    for (i, (&got, &want)) in out.iter().zip(&want).enumerate() {
        assert!(
            (f64::from(got) - want).abs() <= 1e-5 * scale,
            "{i}: {got} vs {want}"
        );
    }
    // A token's result is the same read alone as read in a tile with others.
    for t in 0..n {
        let mut one = vec![0f32; rows];
        matmul(kind, &w, rows, cols, &x[t * cols..(t + 1) * cols], &mut one);
        assert_eq!(one, out[t * rows..(t + 1) * rows], "token {t}");
    }
}

#[test]
fn q4_k_products_equal_the_decoded_weights_times_the_decoded_activations() {
    integer_path_equals_the_decoded_product(TensorKind::Q4_K, 1);
}

#[test]
fn q5_k_products_equal_the_decoded_weights_times_the_decoded_activations() {
    integer_path_equals_the_decoded_product(TensorKind::Q5_K, 2);
}

#[test]
fn q6_k_products_equal_the_decoded_weights_times_the_decoded_activations() {
    integer_path_equals_the_decoded_product(TensorKind::Q6_K, 3);
}

#[test]
fn activations_keep_their_largest_value_exactly_and_their_group_sums() {
    let mut rng = Rng(4);
    let mut x: Vec<f32> = (0..2 * SUPER).map(|_| rng.float()).collect();
    x[300] = -3.0;
    x[SUPER..].iter_mut().take(16).for_each(|v| *v = 0.0);
    let a = quantize_activations(&x);
    assert_eq!(f32::from(a.q[300]) * a.d[1], -3.0);
    for (g, sum) in a.sums.iter().enumerate() {
        let q: i32 = a.q[g * GROUP..(g + 1) * GROUP]
            .iter()
            .map(|&q| i32::from(q))
            .sum();
        assert_eq!(*sum, q, "group {g}");
    }
    let zeros = quantize_activations(&[0.0; SUPER]);
    assert_eq!((zeros.d[0], zeros.sums.iter().sum::<i32>()), (0.0, 0));
}

#[test]
fn q4_k_scales_and_mins_unpack_from_their_six_bit_fields() {
    // Sub-blocks 0..4 take the low 6 bits of bytes 4..8 (scales) and 8..12 (mins);
    // 4..8 take nibbles of bytes 12..16 and the top 2 bits of bytes 4..12.
    let mut b = vec![0u8; Q4K.bytes];
    b[4] = 0b11_000101; // scale 0 = 5; top bits 3 → scale 4's high bits
    b[8] = 0b01_000111; // min 0 = 7; top bits 1 → min 4's high bits
    b[12] = 0x9a; // scale 4 low nibble a, min 4 low nibble 9
    assert_eq!(scale_min(&b, 0), (5, 7));
    assert_eq!(scale_min(&b, 4), (0x3a, 0x19));
}
