//! The role an element plays for the page tools: from its tag, `type` and `role`.

/// The role an element plays, from its tag, `type` and `role` attributes; `None` when
/// it is not interactive. An explicit interactive `role` wins.
pub fn role_of(tag: &str, kind: Option<&str>, role: Option<&str>) -> Option<&'static str> {
    const ROLES: [&str; 17] = [
        "button",
        "link",
        "checkbox",
        "radio",
        "switch",
        "tab",
        "menuitem",
        "menuitemcheckbox",
        "menuitemradio",
        "treeitem",
        "option",
        "combobox",
        "listbox",
        "textbox",
        "searchbox",
        "slider",
        "spinbutton",
    ];
    if let Some(role) = role.map(str::trim).map(str::to_ascii_lowercase)
        && let Some(known) = ROLES.iter().find(|r| **r == role)
    {
        return Some(known);
    }
    let kind = kind.map(str::to_ascii_lowercase);
    match tag.to_ascii_lowercase().as_str() {
        "a" => Some("link"),
        "button" | "summary" => Some("button"),
        "select" => Some("combobox"),
        "textarea" => Some("textbox"),
        "input" => match kind.as_deref().unwrap_or("text") {
            "hidden" => None,
            "checkbox" => Some("checkbox"),
            "radio" => Some("radio"),
            "submit" | "button" | "reset" | "image" => Some("button"),
            "range" => Some("slider"),
            "number" => Some("spinbutton"),
            "search" => Some("searchbox"),
            _ => Some("textbox"),
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_come_from_tag_and_type_and_an_explicit_role_wins() {
        assert_eq!(role_of("A", None, None), Some("link"));
        assert_eq!(role_of("input", None, None), Some("textbox"));
        assert_eq!(role_of("input", Some("email"), None), Some("textbox"));
        assert_eq!(role_of("input", Some("CHECKBOX"), None), Some("checkbox"));
        assert_eq!(role_of("input", Some("submit"), None), Some("button"));
        assert_eq!(role_of("input", Some("hidden"), None), None);
        assert_eq!(role_of("select", None, None), Some("combobox"));
        assert_eq!(role_of("div", None, Some("button")), Some("button"));
        assert_eq!(role_of("div", None, Some("presentation")), None);
        assert_eq!(
            role_of("li", None, Some("menuitemcheckbox")),
            Some("menuitemcheckbox")
        );
        assert_eq!(role_of("li", None, Some("treeitem")), Some("treeitem"));
        assert_eq!(role_of("p", None, None), None);
    }
}
