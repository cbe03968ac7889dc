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
    joined(T::BODY, T::defs, None)
}

/// `T`'s schema as schemars' `schema_for!` gives it: with `$schema` and `title`.
pub fn root<T: SchemaText>() -> String {
    joined(T::BODY, T::defs, Some(T::NAME))
}

/// `body` (an object's text) with the `$defs` that `defs` adds and, for a root,
/// `$schema` and `title`. One function for every type: the generic callers above are
/// a call each.
#[inline(never)]
fn joined(body: &str, defs: fn(&mut Defs), title: Option<&str>) -> String {
    let mut all = Defs::default();
    defs(&mut all);
    let mut text = String::from("{");
    if !all.0.is_empty() {
        text.push_str("\"$defs\":{");
        for (i, (name, body)) in all.0.iter().enumerate() {
            if i > 0 {
                text.push(',');
            }
            text.push('"');
            text.push_str(name);
            text.push_str("\":");
            text.push_str(body);
        }
        text.push_str("},");
    }
    if let Some(title) = title {
        text.push_str("\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"title\":\"");
        text.push_str(title);
        text.push_str("\",");
    }
    match body.strip_prefix('{') {
        Some("}") | None => {
            if text.len() > 1 {
                text.pop();
            }
            text.push('}');
        }
        Some(rest) => text.push_str(rest),
    }
    text
}
