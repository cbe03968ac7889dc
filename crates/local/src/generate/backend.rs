//! `backend`: where the model runs, WebGPU or the CPU, chosen once at load from the
//! setting (`backend: "auto" | "webgpu" | "cpu"`), the model's architecture and what
//! asking WebGPU gave. Pure: the worker (`crate::worker`) does the asking and calls
//! [`settle`] with what it found; this module only decides, so every case is tested
//! natively.
//!
//! `auto` takes WebGPU when there is an adapter and the architecture has a GPU pass,
//! and falls back to the CPU otherwise, saying why, also when the GPU fails while the
//! model loads onto it (out of memory, a lost device). `webgpu` never falls back: where
//! it cannot run, loading fails and says why. `cpu` never asks WebGPU.

use crate::llama::Arch;

/// What the load was asked for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Preference {
    /// WebGPU where it can run, else the CPU.
    #[default]
    Auto,
    /// WebGPU or nothing.
    WebGpu,
    /// The CPU, WebGPU or not.
    Cpu,
}

impl Preference {
    /// The setting's word (`"auto"`, `"webgpu"`, `"cpu"`; empty reads as `auto`).
    pub fn parse(word: &str) -> Result<Preference, String> {
        match word {
            "" | "auto" => Ok(Preference::Auto),
            "webgpu" => Ok(Preference::WebGpu),
            "cpu" => Ok(Preference::Cpu),
            other => Err(format!(
                "the local model's backend must be “auto”, “webgpu” or “cpu”, not “{other}”"
            )),
        }
    }
}

/// Where the forward pass runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Cpu,
    WebGpu,
}

impl Backend {
    /// As the worker's messages say it.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Cpu => "cpu",
            Backend::WebGpu => "webgpu",
        }
    }
}

/// The model's architecture as the choice needs it: its name, and whether WebGPU has
/// its forward pass ([`Arch::on_gpu`]; a file the pass would still run wrong, with
/// scaled RoPE say, is refused as it loads: `GpuSession::new`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Family<'a> {
    pub name: &'a str,
    pub on_gpu: bool,
}

impl Family<'static> {
    pub fn of(arch: Arch) -> Family<'static> {
        Family {
            name: arch.name(),
            on_gpu: arch.on_gpu(),
        }
    }
}

/// Whether to ask WebGPU at all: the setting allows it and the architecture runs there.
/// When not, [`settle`] gets [`Probe::NotAsked`].
pub fn ask_gpu(preference: Preference, family: Family) -> bool {
    preference != Preference::Cpu && family.on_gpu
}

/// What asking WebGPU gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe<'a> {
    /// Not asked ([`ask_gpu`] said no).
    NotAsked,
    /// No adapter, or no device on it: `navigator.gpu`'s words.
    Unavailable(&'a str),
    /// An adapter, but the model did not load onto it (out of memory, the device lost).
    Failed(&'a str),
    /// The model is on this adapter.
    Loaded(&'a str),
}

/// The backend chosen, and what to tell the person about the choice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chosen {
    pub backend: Backend,
    /// The adapter's name, on WebGPU.
    pub adapter: Option<String>,
    /// Why `auto` runs on the CPU, as a clause ("WebGPU gave no adapter here"); none
    /// when the CPU was asked for, or WebGPU runs.
    pub note: Option<String>,
}

/// The backend, or why the model cannot load as asked.
pub fn settle(preference: Preference, family: Family, probe: Probe) -> Result<Chosen, String> {
    let cpu = |note: Option<String>| Chosen {
        backend: Backend::Cpu,
        adapter: None,
        note,
    };
    let unsupported = || format!("WebGPU has no forward pass for {} models yet", family.name);
    match (preference, probe) {
        (Preference::Cpu, _) => Ok(cpu(None)),
        (_, Probe::Loaded(adapter)) if family.on_gpu => Ok(Chosen {
            backend: Backend::WebGpu,
            adapter: Some(adapter.to_owned()),
            note: None,
        }),
        (Preference::WebGpu, _) if !family.on_gpu => Err(format!(
            "the backend “webgpu” was asked for, but {}",
            unsupported()
        )),
        (Preference::WebGpu, Probe::Unavailable(why)) => Err(format!(
            "the backend “webgpu” was asked for, but there is no WebGPU here ({why})"
        )),
        (Preference::WebGpu, Probe::Failed(why)) => Err(format!(
            "the backend “webgpu” was asked for, but the model did not load on the GPU ({why})"
        )),
        (Preference::WebGpu, Probe::NotAsked | Probe::Loaded(_)) => {
            Err("the backend “webgpu” was asked for, but WebGPU was not tried".into())
        }
        (Preference::Auto, _) if !family.on_gpu => Ok(cpu(Some(unsupported()))),
        (Preference::Auto, Probe::Unavailable(why)) => Ok(cpu(Some(why.to_owned()))),
        (Preference::Auto, Probe::Failed(why)) => Ok(cpu(Some(format!(
            "the model did not load on the GPU ({why})"
        )))),
        (Preference::Auto, Probe::NotAsked | Probe::Loaded(_)) => Ok(cpu(None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A family WebGPU has no pass for (as a new one would be).
    const CPU_ONLY: Family = Family {
        name: "gemma",
        on_gpu: false,
    };

    /// What each preference gives for `arch` with an adapter (`Some`: loaded on it)
    /// or without, asking WebGPU only when [`ask_gpu`] says so, as the worker does.
    fn outcome(
        preference: Preference,
        family: Family,
        adapter: Option<&str>,
    ) -> Result<Chosen, String> {
        let probe = match (ask_gpu(preference, family), adapter) {
            (false, _) => Probe::NotAsked,
            (true, Some(name)) => Probe::Loaded(name),
            (true, None) => Probe::Unavailable("WebGPU gave no adapter here"),
        };
        settle(preference, family, probe)
    }

    #[test]
    fn the_setting_reads_its_three_words_and_refuses_others() {
        assert_eq!(Preference::parse("auto"), Ok(Preference::Auto));
        assert_eq!(Preference::parse(""), Ok(Preference::Auto));
        assert_eq!(Preference::parse("webgpu"), Ok(Preference::WebGpu));
        assert_eq!(Preference::parse("cpu"), Ok(Preference::Cpu));
        let refused = Preference::parse("gpu").err().unwrap_or_default();
        assert!(refused.contains("“gpu”"), "{refused}");
    }

    #[test]
    fn auto_runs_on_webgpu_with_an_adapter_and_on_the_cpu_without_saying_why() {
        for arch in [Arch::Llama, Arch::Qwen2, Arch::Qwen3] {
            let arch = Family::of(arch);
            let gpu = outcome(Preference::Auto, arch, Some("swiftshader"));
            assert_eq!(
                gpu,
                Ok(Chosen {
                    backend: Backend::WebGpu,
                    adapter: Some("swiftshader".into()),
                    note: None
                })
            );
            let cpu = outcome(Preference::Auto, arch, None).unwrap_or_else(|e| unreachable!("{e}"));
            assert_eq!(cpu.backend, Backend::Cpu);
            let note = cpu.note.unwrap_or_default();
            assert_eq!(note, "WebGPU gave no adapter here");
        }
    }

    #[test]
    fn cpu_is_the_cpu_with_an_adapter_or_without_and_never_asks_webgpu() {
        for arch in [Family::of(Arch::Llama), Family::of(Arch::Qwen3), CPU_ONLY] {
            assert!(!ask_gpu(Preference::Cpu, arch));
            for adapter in [Some("swiftshader"), None] {
                let chosen = outcome(Preference::Cpu, arch, adapter);
                let cpu = Chosen {
                    backend: Backend::Cpu,
                    adapter: None,
                    note: None,
                };
                assert_eq!(chosen, Ok(cpu));
            }
        }
    }

    #[test]
    fn webgpu_forced_where_there_is_none_is_an_error_not_a_fallback() {
        let refused = outcome(Preference::WebGpu, Family::of(Arch::Llama), None)
            .err()
            .unwrap_or_default();
        assert!(
            refused.contains("“webgpu” was asked for, but there is no WebGPU here"),
            "{refused}"
        );
        let loaded = outcome(Preference::WebGpu, Family::of(Arch::Qwen3), Some("a GPU"));
        assert_eq!(loaded.map(|c| c.backend), Ok(Backend::WebGpu));
    }

    #[test]
    fn a_gpu_failing_while_the_model_loads_falls_back_under_auto_and_fails_under_webgpu() {
        let lost = Probe::Failed("the WebGPU device was lost (destroyed)");
        let auto = settle(Preference::Auto, Family::of(Arch::Llama), lost)
            .unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(auto.backend, Backend::Cpu);
        let note = auto.note.unwrap_or_default();
        assert!(
            note.contains("did not load on the GPU (the WebGPU device was lost"),
            "{note}"
        );
        let forced = settle(Preference::WebGpu, Family::of(Arch::Llama), lost)
            .err()
            .unwrap_or_default();
        assert!(
            forced.contains("did not load on the GPU (the WebGPU device was lost"),
            "{forced}"
        );
    }

    #[test]
    fn every_case_is_a_backend_or_an_error_as_the_table_says() {
        // (preference, adapter, family) → backend, or None for an error.
        let gpu = Family::of(Arch::Qwen2);
        let table = [
            (Preference::Auto, true, gpu, Some(Backend::WebGpu)),
            (Preference::Auto, false, gpu, Some(Backend::Cpu)),
            (Preference::Auto, true, CPU_ONLY, Some(Backend::Cpu)),
            (Preference::Auto, false, CPU_ONLY, Some(Backend::Cpu)),
            (Preference::WebGpu, true, gpu, Some(Backend::WebGpu)),
            (Preference::WebGpu, false, gpu, None),
            (Preference::WebGpu, true, CPU_ONLY, None),
            (Preference::WebGpu, false, CPU_ONLY, None),
            (Preference::Cpu, true, gpu, Some(Backend::Cpu)),
            (Preference::Cpu, false, gpu, Some(Backend::Cpu)),
            (Preference::Cpu, true, CPU_ONLY, Some(Backend::Cpu)),
            (Preference::Cpu, false, CPU_ONLY, Some(Backend::Cpu)),
        ];
        for (preference, adapter, family, expected) in table {
            let adapter = adapter.then_some("an adapter");
            let got = outcome(preference, family, adapter).ok().map(|c| c.backend);
            assert_eq!(
                got, expected,
                "{preference:?} with {adapter:?} for {family:?}"
            );
        }
    }

    #[test]
    fn a_family_without_a_gpu_pass_is_not_asked_of_webgpu_and_says_so() {
        assert!(!ask_gpu(Preference::Auto, CPU_ONLY));
        assert!(!ask_gpu(Preference::WebGpu, CPU_ONLY));
        let auto = outcome(Preference::Auto, CPU_ONLY, Some("a GPU"));
        let note = auto.ok().and_then(|c| c.note).unwrap_or_default();
        assert!(
            note.contains("no forward pass for gemma models yet"),
            "{note}"
        );
        let forced = outcome(Preference::WebGpu, CPU_ONLY, Some("a GPU"))
            .err()
            .unwrap_or_default();
        assert!(
            forced.contains("“webgpu” was asked for, but WebGPU has no forward pass for gemma"),
            "{forced}"
        );
    }
}
