//! `control`: the walk's reading of one control (its role, name, state, value, bounds,
//! form and popup) and of one form, as the page tools list them.

use js_sys::Reflect;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::Element;

use super::super::state::{bounds, disabled, slider_value, state};
use super::Walk;
use super::operable::{Listed, Near};
use crate::name::accname;
use crate::{Control, Form, role_of, sensitive, squash};

impl Walk<'_> {
    /// Lists `element` when it is interactive: by its role, or by its cues alone.
    pub(super) fn control(
        &mut self,
        element: &Element,
        tag: &str,
        role: Option<&str>,
        visible: bool,
        near: Near,
    ) -> Option<Listed> {
        let kind = element.get_attribute("type");
        let editable = element
            .get_attribute("contenteditable")
            .is_some_and(|v| v != "false");
        let anchor = tag == "a" && !element.has_attribute("href") && role.is_none();
        let role = match role_of(tag, kind.as_deref(), role) {
            Some(_) if anchor => return self.infer(element, tag, role, visible, near),
            Some(role) => role,
            None if editable => "textbox",
            None => return self.infer(element, tag, role, visible, near),
        };
        let id = self.adapter.number(element);
        let parts = accname::name(self.window, element);
        let name: String = parts.iter().map(|p| p.text.as_str()).collect();
        self.names.push(parts);
        let typed = matches!(role, "textbox" | "searchbox" | "spinbutton" | "combobox")
            && (matches!(tag, "input" | "textarea") || editable);
        let secret = typed && {
            let attr = |a: &str| element.get_attribute(a);
            let words = format!(
                "{name} {} {}",
                element.id(),
                attr("name").unwrap_or_default()
            );
            sensitive(kind.as_deref(), attr("autocomplete").as_deref(), &words).is_some()
        };
        let (mut value, checked, options) = state(element, kind.as_deref(), secret);
        if role == "slider" {
            value = slider_value(element, value);
        }
        let (min, max) = bounds(element, role);
        let href = (tag == "a")
            .then(|| Reflect::get(element, &"href".into()).ok()?.as_string())
            .flatten();
        let form = Reflect::get(element, &"form".into())
            .ok()
            .filter(JsValue::is_object)
            .map(|f| self.adapter.number(f.unchecked_ref()));
        self.found.insert(id, element.clone());
        self.controls.push(Control {
            id,
            role: role.into(),
            // Said once the walk is over (name_all).
            name: String::new(),
            value,
            min,
            max,
            checked,
            disabled: disabled(element),
            visible,
            options,
            href,
            form,
            sensitive: secret,
            focused: false,
            popup_of: self.owner(near.outer),
            // The extension's panel names the frame's origin when it merges frames.
            frame: None,
        });
        Some(Listed::Role(role))
    }

    pub(super) fn form(&mut self, element: &Element, visible: bool) {
        let attr = |name: &str| element.get_attribute(name).map(|v| squash(&v));
        let id = self.adapter.number(element);
        self.found.insert(id, element.clone());
        self.form_names
            .push(accname::form_name(self.window, element));
        self.forms.push(Form {
            id,
            name: String::new(),
            // Attributes, not properties: a field named `action` shadows the property.
            action: attr("action")
                .filter(|a| !a.is_empty())
                .unwrap_or_else(|| "this page".into()),
            method: attr("method").map_or_else(|| "get".into(), |m| m.to_ascii_lowercase()),
            visible,
        });
    }
}
