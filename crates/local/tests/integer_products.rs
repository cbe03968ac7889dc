//! Every quantized format's product (`quant::matmul`) gives the exact integer sums of
//! its weights times its activations, on weights and activations chosen so that every
//! value is an integer and every f32 on the way holds it exactly: block scales of 1,
//! activations whose 8-bit quantization is the identity (integers, each block's
//! largest magnitude 127). Any path's integer dot product (plain, SIMD or relaxed
//! SIMD) that is off by one shows as a different output.
//!
//! Natively with the crate's tests; `scripts/test.sh` also builds it with
//! `+relaxed-simd` and runs it in headless Chromium, where it checks the relaxed-SIMD
//! products the worker's relaxed build ships (and says that it does, so a build
//! without the flag cannot pass for one).
#![allow(clippy::unwrap_used, clippy::panic)]

use familiar_local::gguf::TensorKind;
use familiar_local::quant;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

// Where the model runs: Node's relaxed SIMD (behind a flag in Node 20) gave wrong sums.
#[cfg(target_arch = "wasm32")]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_dedicated_worker);

/// Tokens: more than one tile of the prompt's product (16), and the generation's one.
const TOKENS: [usize; 2] = [19, 1];
const ROWS: usize = 7;

/// xorshift64*, as the crate's unit tests have it.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `-126..=126`.
    fn small(&mut self) -> i32 {
        (self.next_u64() % 253) as i32 - 126
    }
}

const ONE: [u8; 2] = 0x3c00u16.to_le_bytes();
const ZERO: [u8; 2] = [0, 0];

/// Random blocks of `kind` whose f16 scale is 1 and whose mins' scale is 1 (K-quants)
/// or whose offset is 0 (Q4_1, Q5_1): every weight an integer.
fn integer_weights(kind: TensorKind, rng: &mut Rng, cols: usize) -> Vec<u8> {
    let elements = if matches!(kind, TensorKind::Q4_K | TensorKind::Q5_K | TensorKind::Q6_K) {
        256
    } else {
        32
    };
    let bytes = quant::row_bytes(kind, elements).unwrap();
    let mut out = Vec::new();
    for _ in 0..ROWS * cols / elements {
        let mut block: Vec<u8> = (0..bytes).map(|_| rng.next_u64() as u8).collect();
        match kind {
            TensorKind::Q4_K | TensorKind::Q5_K => {
                block[0..2].copy_from_slice(&ONE);
                block[2..4].copy_from_slice(&ONE);
            }
            TensorKind::Q6_K => block[208..210].copy_from_slice(&ONE),
            TensorKind::Q4_1 | TensorKind::Q5_1 => {
                block[0..2].copy_from_slice(&ONE);
                block[2..4].copy_from_slice(&ZERO);
            }
            _ => block[0..2].copy_from_slice(&ONE),
        }
        out.extend(block);
    }
    out
}

/// Integer activations in `-126..=126`, each block of 256 opening with -127: the
/// largest magnitude of every block of 32 (Q8_0/Q8_1) is ±127 and of every block of
/// 256 (Q8_K) is -127, so their scales are 1 and quantizing changes nothing.
fn integer_activations(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| match i % 32 {
            0 if i % 256 == 0 => -127.0,
            0 => 127.0,
            _ => rng.small() as f32,
        })
        .collect()
}

fn products_are_exact_integer_sums(kind: TensorKind, seed: u64) {
    let mut rng = Rng(seed);
    let cols = 512;
    let w = integer_weights(kind, &mut rng, cols);
    let rb = quant::row_bytes(kind, cols).unwrap();
    let rows: Vec<Vec<i64>> = w
        .chunks_exact(rb)
        .map(|row| {
            let mut values = vec![0f32; cols];
            quant::dequantize_row(row, kind, &mut values).unwrap();
            values.iter().map(|&v| v as i64).collect()
        })
        .collect();
    for n in TOKENS {
        let x = integer_activations(&mut rng, n * cols);
        let mut out = vec![0f32; n * ROWS];
        quant::matmul(&w, kind, ROWS, cols, &x, &mut out).unwrap();
        for (t, x) in x.chunks_exact(cols).enumerate() {
            for (r, row) in rows.iter().enumerate() {
                let want: i64 = row.iter().zip(x).map(|(&w, &x)| w * x as i64).sum();
                assert!(
                    want.abs() < 1 << 24,
                    "{kind:?}: {want} is past f32's integers"
                );
                let got = out[t * ROWS + r];
                assert_eq!(got, want as f32, "{kind:?}, {n} tokens: token {t}, row {r}");
            }
        }
    }
}

#[test]
fn q4_0_products_are_exact_integer_sums() {
    products_are_exact_integer_sums(TensorKind::Q4_0, 1);
}

#[test]
fn q4_1_products_are_exact_integer_sums() {
    products_are_exact_integer_sums(TensorKind::Q4_1, 2);
}

#[test]
fn q5_0_products_are_exact_integer_sums() {
    products_are_exact_integer_sums(TensorKind::Q5_0, 3);
}

#[test]
fn q5_1_products_are_exact_integer_sums() {
    products_are_exact_integer_sums(TensorKind::Q5_1, 4);
}

#[test]
fn q8_0_products_are_exact_integer_sums() {
    products_are_exact_integer_sums(TensorKind::Q8_0, 5);
}

#[test]
fn q4_k_products_are_exact_integer_sums() {
    products_are_exact_integer_sums(TensorKind::Q4_K, 6);
}

#[test]
fn q5_k_products_are_exact_integer_sums() {
    products_are_exact_integer_sums(TensorKind::Q5_K, 7);
}

#[test]
fn q6_k_products_are_exact_integer_sums() {
    products_are_exact_integer_sums(TensorKind::Q6_K, 8);
}

/// In the browser, this file is run on the relaxed build (`scripts/test.sh`): a build
/// without relaxed SIMD would pass the tests above without testing its products.
#[cfg(target_arch = "wasm32")]
#[test]
// Constant for a build, which is the point: it fails the build that lacks the flag.
#[allow(clippy::assertions_on_constants)]
fn this_build_multiplies_with_relaxed_simd() {
    assert!(
        cfg!(target_feature = "relaxed-simd"),
        "built without +relaxed-simd"
    );
}
