//! The local model's loading, followed from Settings: the weights' progress in words
//! and a bar, where the ready model runs, and the file a person picked.

use leptos::prelude::*;

use crate::llm::local::{LocalBackend, LocalSettings, SMOLLM2_BYTES, SMOLLM2_NAME};

/// Where the full build serves the test model when `scripts/demo.sh` found it.
pub(super) const DEFAULT_LOCAL_URL: &str = "models/SmolLM2-135M-Instruct.Q4_1.gguf";

/// What the local model costs, said before anything is downloaded.
pub(super) fn local_hint() -> String {
    format!(
        "{SMOLLM2_NAME}: a {} MB download the first time, then kept by the browser; it runs \
         in a worker of this tab, about as well as a very small model can.",
        SMOLLM2_BYTES / 1_000_000
    )
}

/// The file the person picked, kept for the worker; its name.
pub(super) fn pick_weights(ev: &leptos::ev::Event) -> Option<String> {
    let input: web_sys::HtmlInputElement = wasm_bindgen::JsCast::dyn_into(ev.target()?).ok()?;
    let file = input.files()?.get(0)?;
    let name = file.name();
    crate::web::local_model::remember_file(file);
    Some(name)
}

/// How far the weights have come: bytes read and expected (0 when the server did not
/// say), shown as a progress bar while they load.
pub(super) type Progress = Option<(u64, u64)>;

/// Starts loading `local`'s weights (or finds them loading) and shows it in `status`,
/// as words, and `progress`.
pub(super) fn follow_loading(
    local: &LocalSettings,
    status: RwSignal<Option<String>>,
    progress: RwSignal<Progress>,
) {
    match crate::web::local_model::worker_for(local, None) {
        Ok(worker) => follow(&worker, status, progress),
        Err(error) => status.set(Some(error)),
    }
}

/// Shows `worker`'s loading in `status` and `progress`, now and at every change.
pub(super) fn follow(
    worker: &crate::web::local_model::BrowserWorker,
    status: RwSignal<Option<String>>,
    progress: RwSignal<Progress>,
) {
    use crate::web::local_model::LoadStatus;
    worker.on_status(move |s| {
        let _ = progress.try_set(match s {
            LoadStatus::Loading { loaded, total, .. } => Some((*loaded, *total)),
            _ => None,
        });
        let words = match s {
            LoadStatus::Loading {
                loaded,
                total,
                cached,
            } => {
                let from = if *cached {
                    "from the browser's cache"
                } else {
                    "downloading"
                };
                match total {
                    0 => format!("Loading the model, {from}: {} MB", loaded / 1_000_000),
                    t => format!(
                        "Loading the model, {from}: {} of {} MB",
                        loaded / 1_000_000,
                        t / 1_000_000
                    ),
                }
            }
            LoadStatus::Ready {
                cached,
                backend,
                threads,
                adapter,
                note,
                ..
            } => ready_words(
                *cached,
                (*backend, *threads),
                adapter.as_deref(),
                note.as_deref(),
            ),
            LoadStatus::Failed(error) => format!("The local model could not load: {error}"),
            LoadStatus::Cancelled => {
                "Loading stopped. Save again, or ask the agent, to start it over.".to_owned()
            }
        };
        let _ = status.try_set(Some(words));
    });
}

/// The ready model's status: where it runs (the GPU's name on WebGPU, the threads
/// on the CPU when more than one), whether the weights came from the cache, and why
/// auto left WebGPU aside.
fn ready_words(
    cached: bool,
    (backend, threads): (LocalBackend, u64),
    adapter: Option<&str>,
    note: Option<&str>,
) -> String {
    let on = match (backend, adapter) {
        (LocalBackend::WebGpu, Some(adapter)) => format!("on WebGPU ({adapter})"),
        (LocalBackend::WebGpu, None) => "on WebGPU".into(),
        _ if threads > 1 => format!("on the CPU, {threads} threads"),
        _ => "on the CPU".into(),
    };
    let from = if cached {
        " (read from the browser's cache)"
    } else {
        ""
    };
    let why = note.map_or(String::new(), |n| format!(" Not on WebGPU: {n}."));
    format!("The local model is ready {on}{from}.{why}")
}
