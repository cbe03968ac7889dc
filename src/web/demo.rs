//! The demo agent's parts: its system prompt, its rules model and its tools. The UI
//! and the real-model check assemble the same agent from them.

use std::rc::Rc;

use super::{BrowserClock, PageTitle};
use crate::rules::RulesModel;
use crate::tool::ToolRegistry;
use crate::tools::CurrentTime;

const RULES: &str = include_str!("../../public/rules/demo.json");

/// The demo agent's instructions to its model.
pub const SYSTEM_PROMPT: &str = "You are Familiar, an assistant that lives in the user's \
    browser tab. Use the tools to read the page and the clock; answer briefly.";

/// The no-key model of the demo. A broken rules file still yields a model, one that
/// says what is wrong with the file.
pub fn rules_model() -> RulesModel {
    RulesModel::from_json(RULES).unwrap_or_else(|error| RulesModel {
        rules: Vec::new(),
        fallback: error.to_string(),
    })
}

/// The demo's tools: the clock and the page.
pub fn tools() -> ToolRegistry {
    let mut tools = ToolRegistry::new();
    tools
        .register(CurrentTime::new(Rc::new(BrowserClock)))
        .register(PageTitle);
    tools
}
