//! What went wrong outside a run (a save that failed, saved data that could not be
//! read, another tab's change), told to the person once; a run cut off by a reload
//! goes to `resume`.

use leptos::prelude::*;

use super::Chat;
use crate::app::Notice;

impl Chat {
    /// Tells the person what went wrong, once (the console gets the details).
    pub(super) fn notice(&self, notice: &Notice) {
        web_sys::console::warn_1(&format!("familiar: {notice:?}").into());
        let text = match notice {
            Notice::SaveFailed { error, .. } => format!(
                "This conversation could not be saved ({error}). It stays in this tab; \
                 delete old conversations to make room before closing the page."
            ),
            Notice::Corrupt { kept_as, error, .. } => {
                format!("Saved data could not be read ({error}); it was kept aside as `{kept_as}`.")
            }
            Notice::Conflict { .. } => "This conversation was changed in another tab, \
                 so this tab's new turns are not saved over it. Reload to continue from the \
                 other tab's version."
                .to_owned(),
            Notice::HostMessageIgnored { .. } => return,
            Notice::Interrupted { .. } => return self.offer_resume(notice),
        };
        self.notices.update(|notices| {
            if !notices.contains(&text) {
                notices.push(text);
            }
        });
    }

    /// Dismisses the notices shown.
    pub fn dismiss_notices(&self) {
        self.notices.set(Vec::new());
    }
}
