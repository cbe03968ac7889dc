//! What a type's `#[serde(...)]` attributes say about reading it: the same attributes
//! serde's `Serialize` derive reads, so a type states its keys, defaults and renames
//! once. Attributes that only concern writing (`skip_serializing_if`,
//! `serialize_with`, …) are passed over; one that would change reading in a way the
//! shared reader does not (`untagged`, `content`, `transparent`, …) is refused at
//! compile time rather than read differently from serde.

use syn::meta::ParseNestedMeta;
use syn::{Attribute, Error, Ident, LitStr, Path, Result};

/// The container's attributes: a struct's or an enum's.
#[derive(Default)]
pub struct Container {
    /// `tag = "…"`: an internally tagged enum's tag field.
    pub tag: Option<String>,
    /// `rename_all = "…"`: the case of a struct's keys or an enum's variant names.
    pub rename_all: Option<Case>,
    /// `deny_unknown_fields`.
    pub deny_unknown: bool,
    /// `default`: a missing field is the value `Default::default()` gives it.
    pub default: bool,
}

/// One field's attributes.
#[derive(Default)]
pub struct Field {
    pub rename: Option<String>,
    pub aliases: Vec<String>,
    pub default: Option<Fallback>,
    pub skip: bool,
    pub flatten: bool,
    /// `with = "module"` (its `deserialize`) or `deserialize_with = "function"`.
    pub with: Option<Path>,
}

/// A field's `default`: its type's, or a function's.
pub enum Fallback {
    Type,
    Path(Path),
}

/// One variant's attributes.
#[derive(Default)]
pub struct Variant {
    pub rename: Option<String>,
    pub aliases: Vec<String>,
    pub rename_all: Option<Case>,
}

/// serde's `rename_all` cases.
#[derive(Clone, Copy)]
pub enum Case {
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

impl Container {
    pub fn read(attrs: &[Attribute]) -> Result<Self> {
        let mut container = Self::default();
        each(attrs, |meta| {
            if meta.path.is_ident("tag") {
                container.tag = Some(string(&meta)?);
            } else if meta.path.is_ident("rename_all") {
                container.rename_all = Some(Case::read(&meta)?);
            } else if meta.path.is_ident("deny_unknown_fields") {
                container.deny_unknown = true;
            } else if meta.path.is_ident("default") {
                if meta.input.peek(syn::Token![=]) {
                    return Err(meta.error("a container's `default = \"…\"` is not supported"));
                }
                container.default = true;
            } else if meta.path.is_ident("rename") || meta.path.is_ident("bound") {
                // The type's own name (`rename`) only shows in error messages, which
                // keep the Rust name as the shared reader always did.
                skip_value(&meta)?;
            } else {
                return Err(unsupported(&meta));
            }
            Ok(())
        })?;
        Ok(container)
    }
}

impl Field {
    pub fn read(attrs: &[Attribute]) -> Result<Self> {
        let mut field = Self::default();
        each(attrs, |meta| {
            if meta.path.is_ident("rename") {
                field.rename = Some(string(&meta)?);
            } else if meta.path.is_ident("alias") {
                field.aliases.push(string(&meta)?);
            } else if meta.path.is_ident("default") {
                field.default = Some(if meta.input.peek(syn::Token![=]) {
                    Fallback::Path(lit(&meta)?.parse_with(Path::parse_mod_style)?)
                } else {
                    Fallback::Type
                });
            } else if meta.path.is_ident("skip") || meta.path.is_ident("skip_deserializing") {
                field.skip = true;
            } else if meta.path.is_ident("flatten") {
                field.flatten = true;
            } else if meta.path.is_ident("with") {
                let module: Path = lit(&meta)?.parse_with(Path::parse_mod_style)?;
                field.with = Some(syn::parse_quote!(#module::deserialize));
            } else if meta.path.is_ident("deserialize_with") {
                field.with = Some(lit(&meta)?.parse_with(Path::parse_mod_style)?);
            } else if ["skip_serializing", "skip_serializing_if", "serialize_with"]
                .iter()
                .any(|name| meta.path.is_ident(name))
            {
                skip_value(&meta)?;
            } else {
                return Err(unsupported(&meta));
            }
            Ok(())
        })?;
        Ok(field)
    }
}

impl Variant {
    pub fn read(attrs: &[Attribute]) -> Result<Self> {
        let mut variant = Self::default();
        each(attrs, |meta| {
            if meta.path.is_ident("rename") {
                variant.rename = Some(string(&meta)?);
            } else if meta.path.is_ident("alias") {
                variant.aliases.push(string(&meta)?);
            } else if meta.path.is_ident("rename_all") {
                variant.rename_all = Some(Case::read(&meta)?);
            } else {
                return Err(unsupported(&meta));
            }
            Ok(())
        })?;
        Ok(variant)
    }
}

impl Case {
    fn read(meta: &ParseNestedMeta) -> Result<Self> {
        let value = lit(meta)?;
        Ok(match value.value().as_str() {
            "lowercase" => Self::Lower,
            "UPPERCASE" => Self::Upper,
            "PascalCase" => Self::Pascal,
            "camelCase" => Self::Camel,
            "snake_case" => Self::Snake,
            "SCREAMING_SNAKE_CASE" => Self::ScreamingSnake,
            "kebab-case" => Self::Kebab,
            "SCREAMING-KEBAB-CASE" => Self::ScreamingKebab,
            other => return Err(Error::new(value.span(), format!("unknown case `{other}`"))),
        })
    }

    /// A variant's name (PascalCase in Rust) in this case, as serde writes it.
    pub fn variant(self, name: &str) -> String {
        match self {
            Self::Pascal => name.to_owned(),
            Self::Lower => name.to_ascii_lowercase(),
            Self::Upper => name.to_ascii_uppercase(),
            Self::Camel => {
                let mut chars = name.chars();
                chars.next().map_or_else(String::new, |first| {
                    first.to_ascii_lowercase().to_string() + chars.as_str()
                })
            }
            Self::Snake => {
                let mut snake = String::new();
                for (i, ch) in name.char_indices() {
                    if i > 0 && ch.is_uppercase() {
                        snake.push('_');
                    }
                    snake.push(ch.to_ascii_lowercase());
                }
                snake
            }
            Self::ScreamingSnake => Self::Snake.variant(name).to_ascii_uppercase(),
            Self::Kebab => Self::Snake.variant(name).replace('_', "-"),
            Self::ScreamingKebab => Self::ScreamingSnake.variant(name).replace('_', "-"),
        }
    }

    /// A field's name (snake_case in Rust) in this case, as serde writes it.
    pub fn field(self, name: &str) -> String {
        match self {
            Self::Lower | Self::Snake => name.to_owned(),
            Self::Upper | Self::ScreamingSnake => name.to_ascii_uppercase(),
            Self::Pascal => {
                let mut pascal = String::new();
                let mut capital = true;
                for ch in name.chars() {
                    if ch == '_' {
                        capital = true;
                    } else if capital {
                        pascal.push(ch.to_ascii_uppercase());
                        capital = false;
                    } else {
                        pascal.push(ch);
                    }
                }
                pascal
            }
            Self::Camel => {
                let pascal = Self::Pascal.field(name);
                let mut chars = pascal.chars();
                chars.next().map_or_else(String::new, |first| {
                    first.to_ascii_lowercase().to_string() + chars.as_str()
                })
            }
            Self::Kebab => name.replace('_', "-"),
            Self::ScreamingKebab => Self::ScreamingSnake.field(name).replace('_', "-"),
        }
    }
}

/// An identifier as serde names it: without `r#`.
pub fn unraw(ident: &Ident) -> String {
    let name = ident.to_string();
    name.strip_prefix("r#").map(str::to_owned).unwrap_or(name)
}

/// Calls `each` with every item of every `#[serde(...)]` attribute.
fn each(attrs: &[Attribute], mut each: impl FnMut(ParseNestedMeta) -> Result<()>) -> Result<()> {
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("serde")) {
        attr.parse_nested_meta(&mut each)?;
    }
    Ok(())
}

fn lit(meta: &ParseNestedMeta) -> Result<LitStr> {
    meta.value()?.parse()
}

fn string(meta: &ParseNestedMeta) -> Result<String> {
    Ok(lit(meta)?.value())
}

/// Passes over an item that only concerns writing, with its value if it has one.
fn skip_value(meta: &ParseNestedMeta) -> Result<()> {
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse::<syn::Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| skip_value(&inner))?;
    }
    Ok(())
}

fn unsupported(meta: &ParseNestedMeta) -> Error {
    let name = meta
        .path
        .get_ident()
        .map_or_else(|| "this attribute".to_owned(), |ident| format!("`{ident}`"));
    meta.error(format!(
        "#[derive(Read)] does not read #[serde({name})]; derive serde's Deserialize for this type"
    ))
}
