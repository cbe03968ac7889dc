//! The page's links and forms as the model reads them: each link by its element number
//! with where it leads, and each form with the numbered fields it holds — cut to the
//! limits the tools' descriptions state.

use super::index::line;
use super::{Control, Snapshot, clip};

/// How many characters of an address a line shows.
const MAX_HREF: usize = 200;

/// The visible links, `[n] "text" → address`, at most `max` of them; and how many
/// there are in all.
pub fn links(snapshot: &Snapshot, max: usize) -> (Vec<String>, usize) {
    let all: Vec<&Control> = snapshot
        .controls
        .iter()
        .filter(|c| c.visible && c.role == "link")
        .collect();
    let lines = all
        .iter()
        .take(max)
        .map(|c| {
            let to = c.href.as_deref().unwrap_or("(no address: a scripted link)");
            format!(
                "[{}] \"{}\" → {}",
                c.id,
                clip(&c.name, 80),
                clip(to, MAX_HREF)
            )
        })
        .collect();
    (lines, all.len())
}

/// One form as the model reads it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FormListing {
    /// `[n] form "name" (post → address)`.
    pub form: String,
    /// Its visible fields and buttons, as page_elements lists them.
    pub fields: Vec<String>,
    /// Its visible fields and buttons in all (the listing may show fewer).
    pub total_fields: usize,
}

/// The visible forms with their visible fields, at most `max_forms` forms of at most
/// `max_fields` lines each; and how many visible forms there are.
pub fn forms(
    snapshot: &Snapshot,
    max_forms: usize,
    max_fields: usize,
) -> (Vec<FormListing>, usize) {
    let visible: Vec<_> = snapshot.forms.iter().filter(|f| f.visible).collect();
    let listings = visible
        .iter()
        .take(max_forms)
        .map(|form| {
            let fields: Vec<&Control> = snapshot
                .controls
                .iter()
                .filter(|c| c.visible && c.form == Some(form.id))
                .collect();
            let name = if form.name.is_empty() {
                "(unnamed)".to_owned()
            } else {
                format!("\"{}\"", clip(&form.name, 80))
            };
            FormListing {
                form: format!(
                    "[{}] form {name} ({} → {})",
                    form.id,
                    form.method,
                    clip(&form.action, MAX_HREF)
                ),
                fields: fields
                    .iter()
                    .take(max_fields)
                    .map(|c| line(c, false))
                    .collect(),
                total_fields: fields.len(),
            }
        })
        .collect();
    (listings, visible.len())
}

#[cfg(test)]
mod tests {
    use super::super::Form;
    use super::super::index::tests::control;
    use super::*;

    fn page() -> Snapshot {
        let mut home = control(1, "link", "Home");
        home.href = Some("https://owls.example/".into());
        let mut hidden = control(2, "link", "Admin");
        hidden.visible = false;
        let mut email = control(4, "textbox", "Email");
        email.form = Some(3);
        let mut send = control(5, "button", "Send");
        send.form = Some(3);
        let mut trap = control(6, "textbox", "Leave empty");
        trap.form = Some(3);
        trap.visible = false;
        let search = control(8, "searchbox", "Search");
        let form = |id, name: &str, visible| Form {
            id,
            name: name.into(),
            action: "https://owls.example/send".into(),
            method: "post".into(),
            visible,
        };
        Snapshot {
            controls: vec![home, hidden, email, send, trap, search],
            forms: vec![form(3, "Contact", true), form(7, "", false)],
            ..Snapshot::default()
        }
    }

    #[test]
    fn links_are_the_visible_ones_with_their_address_up_to_the_limit() {
        let (lines, total) = links(&page(), 10);
        assert_eq!(lines, ["[1] \"Home\" → https://owls.example/"]);
        assert_eq!(total, 1);
        assert_eq!(links(&page(), 0), (Vec::new(), 1));
    }

    #[test]
    fn a_form_lists_its_visible_fields_by_number_and_hidden_forms_are_left_out() {
        let (listed, total) = forms(&page(), 10, 10);
        assert_eq!(total, 1);
        assert_eq!(
            listed,
            [FormListing {
                form: "[3] form \"Contact\" (post → https://owls.example/send)".into(),
                fields: vec!["[4] textbox \"Email\"".into(), "[5] button \"Send\"".into()],
                total_fields: 2,
            }]
        );
        let (cut, _) = forms(&page(), 10, 1);
        assert_eq!((cut[0].fields.len(), cut[0].total_fields), (1, 2));
    }
}
