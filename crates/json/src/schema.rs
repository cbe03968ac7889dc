//! Schemas written at compile time. `#[derive(SchemaText)]` writes a type's JSON
//! Schema, as schemars' `JsonSchema` derive gives it, into constant text from the
//! same doc comments and `#[serde]` attributes; a build that hands schemas to a model
//! (a tool's parameters, a contract's shape) joins that text here instead of carrying
//! schemars' generator and each type's derived schema code. `tests/schema.rs` holds
//! the text to what schemars derives.

/// A type's JSON Schema as text (`#[derive(SchemaText)]`, or written by hand beside a
/// hand-written `Deserialize`).
pub trait SchemaText {
    /// Its name among the definitions (`$defs`) of a schema that refers to it.
    const NAME: &'static str;
    /// Its schema, as a JSON object; the types it refers to as `{"$ref": "#/$defs/…"}`.
    const BODY: &'static str;

    /// Adds the types its schema refers to, and theirs.
    fn defs(defs: &mut Defs) {
        let _ = defs;
    }
}

/// The definitions a schema refers to, each once, in the order first met.
#[derive(Default)]
pub struct Defs(Vec<(&'static str, &'static str)>);

impl Defs {
    /// Adds `T`'s definition and those it refers to, unless already there.
    pub fn add<T: SchemaText>(&mut self) {
        if self.0.iter().all(|(name, _)| *name != T::NAME) {
            self.0.push((T::NAME, T::BODY));
            T::defs(self);
        }
    }
}

/// `T`'s schema as a tool's parameters: its body and the definitions it refers to.
pub fn parameters<T: SchemaText>() -> String {
    let mut defs = Defs::default();
    T::defs(&mut defs);
    joined(T::BODY, &defs, None)
}

/// `T`'s schema as schemars' `schema_for!` gives it: with `$schema` and `title`.
pub fn root<T: SchemaText>() -> String {
    let mut defs = Defs::default();
    T::defs(&mut defs);
    joined(T::BODY, &defs, Some(T::NAME))
}

/// `body` (an object's text) with `$defs` and, for a root, `$schema` and `title`.
fn joined(body: &str, defs: &Defs, title: Option<&str>) -> String {
    let mut members = Vec::new();
    if !defs.0.is_empty() {
        let each: Vec<String> = defs
            .0
            .iter()
            .map(|(name, body)| format!("\"{name}\":{body}"))
            .collect();
        members.push(format!("\"$defs\":{{{}}}", each.join(",")));
    }
    if let Some(title) = title {
        members.push("\"$schema\":\"https://json-schema.org/draft/2020-12/schema\"".to_owned());
        members.push(format!("\"title\":\"{title}\""));
    }
    let inner = body
        .strip_prefix('{')
        .and_then(|rest| rest.strip_suffix('}'))
        .unwrap_or_default();
    if !inner.is_empty() {
        members.push(inner.to_owned());
    }
    format!("{{{}}}", members.join(","))
}
