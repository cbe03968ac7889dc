//! The demo's parts a first visit does not open (the World, the Guild, Settings),
//! each its own wasm module in the split build: with feature `split`,
//! `scripts/demo-wasm.sh` cuts the demo's module at the functions [`part!`]
//! declares (wasm-split), and a part's module is fetched the first time it is opened,
//! or sooner when its button is hovered or focused ([`preload`]). In every other build
//! a part is in the page's module and opens at once, through the same calls.
//!
//! What a part's module holds is what only its view reaches; whatever the chat also
//! uses stays in the page's module. A part that cannot be fetched says so where it
//! would have been, with a button to try again.

use std::future::Future;

use leptos::prelude::*;
use send_wrapper::SendWrapper;

/// A part's module could not be fetched (offline, say).
pub type LoadError = leptos::wasm_split::SplitLoaderError;

/// Declares a part's entry, `async fn $name($args) -> Result<AnyView, LoadError>`
/// building `$view`, and `async fn $preload() -> Result<(), LoadError>` fetching its
/// module without opening it. With feature `split`, `$module` names the wasm module
/// the entry and all that only it reaches are cut into.
macro_rules! part {
    ($module:ident, $preload:ident, $vis:vis fn $name:ident($($arg:ident: $ty:ty),*) $view:block) => {
        #[cfg(feature = "split")]
        #[leptos::wasm_split::wasm_split(
            $module,
            wasm_split_path = ::leptos::wasm_split,
            fallible,
            preload($preload)
        )]
        #[allow(improper_ctypes_definitions)]
        $vis fn $name($($arg: $ty),*) -> Result<leptos::prelude::AnyView, $crate::ui::part::LoadError> {
            Ok($view)
        }

        #[cfg(not(feature = "split"))]
        $vis async fn $name($($arg: $ty),*) -> Result<leptos::prelude::AnyView, $crate::ui::part::LoadError> {
            Ok($view)
        }

        #[cfg(not(feature = "split"))]
        $vis async fn $preload() -> Result<(), $crate::ui::part::LoadError> {
            Ok(())
        }
    };
}
pub(crate) use part;

/// Fetches a part's module in the background (its button was hovered or focused),
/// so that it opens at once when clicked; a failure is left for the click to say.
pub fn preload<F: Future<Output = Result<(), LoadError>> + 'static>(load: impl FnOnce() -> F) {
    let load = load();
    leptos::task::spawn_local(async move {
        let _ = load.await;
    });
}

/// A part, opened: "Loading…" while its module comes, then its view; if the module
/// cannot be fetched, why, and a button to try again.
#[component]
pub fn Part<F, Fut>(
    /// The part's name, as its button says it ("World").
    name: &'static str,
    /// Opens the part: its entry, declared with [`part!`].
    open: F,
) -> impl IntoView
where
    F: Fn() -> Fut + Copy + Send + Sync + 'static,
    Fut: Future<Output = Result<AnyView, LoadError>> + 'static,
{
    let attempt = RwSignal::new(0_u32);
    let opened = move || {
        attempt.track();
        let view = SendWrapper::new(open());
        Suspend::new(async move {
            match view.await {
                Ok(view) => view,
                Err(error) => view! {
                    <p class="part-error" role="alert">
                        {format!("The {name} could not be loaded ({error}). Check the connection, then ")}
                        <button type="button" on:click=move |_| attempt.update(|a| *a += 1)>"try again"</button>
                    </p>
                }
                .into_any(),
            }
        })
    };
    view! {
        <Suspense fallback=move || view! { <p class="part-loading" role="status">{format!("Loading the {name}…")}</p> }>
            {opened}
        </Suspense>
    }
}
