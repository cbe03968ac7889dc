//! Test helpers shared by the modules' tests: where the real SmolLM2 file is, and a
//! small seeded PRNG for the tiny models the tests write themselves.
#![allow(dead_code)] // each helper is used by some of the modules' tests

use std::path::PathBuf;

/// The real SmolLM2-135M-Instruct Q4_1 file: `FAMILIAR_SMOLLM2`, else the first match
/// under `/root/.cache/familiar`; None (and a printed reason) when absent, so tests
/// that need it skip rather than fail.
pub fn smollm2() -> Option<PathBuf> {
    static FOUND: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    let found = FOUND.get_or_init(locate).clone();
    if found.is_none() {
        println!("skipped: SmolLM2-135M-Instruct*.gguf not found (set FAMILIAR_SMOLLM2)");
    }
    found
}

fn locate() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("FAMILIAR_SMOLLM2") {
        let p = PathBuf::from(p);
        if p.is_file() {
            return Some(p);
        }
    }
    find(&PathBuf::from("/root/.cache/familiar"), 6)
}

fn find(dir: &PathBuf, depth: u32) -> Option<PathBuf> {
    let entries = std::fs::read_dir(dir).ok()?;
    let mut subdirs = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if path.is_file() && name.starts_with("SmolLM2-135M-Instruct") && name.ends_with(".gguf") {
            return Some(path);
        }
        if path.is_dir() && depth > 0 {
            subdirs.push(path);
        }
    }
    subdirs.iter().find_map(|d| find(d, depth - 1))
}

/// xorshift64*: deterministic weights for the tiny models.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [-1, 1).
    pub fn float(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
}
