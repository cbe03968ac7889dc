//! Built-in tools that need nothing but the seams: usable by any agent, in any page.

mod current_time;
mod memory;

pub use current_time::CurrentTime;
pub use memory::{Forget, Recall, Remember};
