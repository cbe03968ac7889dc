//! Starting the app in a page: mounted where the page says ([`crate::web::Page`]),
//! then the shell handed over, with the User Timing marks `bench/ui` reads.

use leptos::prelude::request_animation_frame;

use crate::web::{MountPoint, Page, mark};

/// Mounts the app and marks `familiar:start`, `familiar:mounted` and `familiar:frame`
/// (the first animation frame after mounting: the one that draws it).
pub fn start() {
    mark("familiar:start");
    let page = Page::read();
    let point = page.mount_point();
    match &point {
        Some(MountPoint::Host(host)) => leptos::mount::mount_to(host.clone(), super::App).forget(),
        Some(MountPoint::Body) => leptos::mount::mount_to_body(super::App),
        None => {}
    }
    page.started(point.as_ref());
    mark("familiar:mounted");
    request_animation_frame(|| mark("familiar:frame"));
}
