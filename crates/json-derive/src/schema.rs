//! `#[derive(SchemaText)]`: a type's JSON Schema, as schemars' `JsonSchema` derive
//! would give it, written out as text at compile time from the same doc comments and
//! `#[serde(...)]` attributes. A build that only hands schemas to a model then carries
//! text, not schemars' generator. What it writes: structs with named fields (each
//! field's type one of the standard ones below, or a type that derives `SchemaText`
//! itself, referred to through `$defs`) and enums of unit variants. Anything it cannot
//! write exactly as schemars does is refused at compile time.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{
    Attribute, Data, DeriveInput, Error, Expr, ExprLit, Fields, GenericArgument, Lit, Meta,
    PathArguments, Result, Type, spanned::Spanned,
};

use crate::attrs::{Container, Fallback, Field, Variant, unraw};

pub fn derive(input: &DeriveInput) -> Result<TokenStream> {
    if !input.generics.params.is_empty() {
        return Err(Error::new(
            input.generics.span(),
            "#[derive(SchemaText)] writes types without generic parameters",
        ));
    }
    let name = &input.ident;
    let container = Container::read(&input.attrs)?;
    let mut refs = Vec::new();
    let mut members = Vec::new();
    let mut serialized = Vec::new();
    match &input.data {
        Data::Struct(data) => {
            let Fields::Named(named) = &data.fields else {
                return Err(Error::new(
                    data.fields.span(),
                    "#[derive(SchemaText)] writes structs with named fields",
                ));
            };
            if container.default || container.tag.is_some() {
                return Err(Error::new(
                    name.span(),
                    "#[derive(SchemaText)] does not write a container's `default` or `tag`",
                ));
            }
            members.push(("type".to_owned(), string("object")));
            if container.deny_unknown {
                members.push(("additionalProperties".to_owned(), "false".to_owned()));
            }
            let mut properties = Vec::new();
            let mut required = Vec::new();
            for field in &named.named {
                let attrs = Field::read(&field.attrs)?;
                let Some(ident) = &field.ident else {
                    return Err(Error::new(field.span(), "a field without a name"));
                };
                if attrs.skip {
                    continue;
                }
                if attrs.flatten || attrs.with.is_some() {
                    return Err(Error::new(
                        field.span(),
                        "#[derive(SchemaText)] does not write `flatten` or `with` fields",
                    ));
                }
                let key = attrs.rename.clone().unwrap_or_else(|| {
                    let name = unraw(ident);
                    container
                        .rename_all
                        .map_or(name.clone(), |case| case.field(&name))
                });
                let shape = Shape::of(&field.ty, &mut refs)?;
                let mut schema = Vec::new();
                if let Some(fallback) = &attrs.default {
                    let Fallback::Type = fallback else {
                        return Err(Error::new(
                            field.span(),
                            "#[derive(SchemaText)] cannot know what `default = \"…\"` gives",
                        ));
                    };
                    let skipped = skipped_when_default(&field.attrs, &field.ty)?;
                    if !skipped {
                        let Some(default) = shape.default.clone() else {
                            return Err(Error::new(
                                field.ty.span(),
                                "#[derive(SchemaText)] does not know this type's default",
                            ));
                        };
                        schema.push(("default".to_owned(), default));
                        // schemars writes a default only for a type it can serialize.
                        serialized.push(field.ty.clone());
                    }
                }
                if let Some(doc) = description(&field.attrs) {
                    schema.push(("description".to_owned(), string(&doc)));
                }
                properties.push((key.clone(), shape.with(schema)));
                if attrs.default.is_none() && !shape.option {
                    required.push(string(&key));
                }
            }
            if !properties.is_empty() {
                members.push(("properties".to_owned(), object(&properties)));
            }
            if !required.is_empty() {
                members.push(("required".to_owned(), format!("[{}]", required.join(","))));
            }
        }
        Data::Enum(data) => {
            if container.tag.is_some() {
                return Err(Error::new(
                    name.span(),
                    "#[derive(SchemaText)] writes enums of unit variants only",
                ));
            }
            let mut plain = Vec::new();
            let mut described = Vec::new();
            for variant in &data.variants {
                if !matches!(variant.fields, Fields::Unit) {
                    return Err(Error::new(
                        variant.span(),
                        "#[derive(SchemaText)] writes enums of unit variants only",
                    ));
                }
                let attrs = Variant::read(&variant.attrs)?;
                let key = attrs.rename.clone().unwrap_or_else(|| {
                    let name = unraw(&variant.ident);
                    container
                        .rename_all
                        .map_or(name.clone(), |case| case.variant(&name))
                });
                match description(&variant.attrs) {
                    None => plain.push(string(&key)),
                    Some(doc) => described.push(object(&[
                        ("type".to_owned(), string("string")),
                        ("const".to_owned(), string(&key)),
                        ("description".to_owned(), string(&doc)),
                    ])),
                }
            }
            let plain_schema = object(&[
                ("type".to_owned(), string("string")),
                ("enum".to_owned(), format!("[{}]", plain.join(","))),
            ]);
            if described.is_empty() {
                members.push(("type".to_owned(), string("string")));
                members.push(("enum".to_owned(), format!("[{}]", plain.join(","))));
            } else {
                let mut one_of = Vec::new();
                if !plain.is_empty() {
                    one_of.push(plain_schema);
                }
                one_of.extend(described);
                members.push(("oneOf".to_owned(), format!("[{}]", one_of.join(","))));
            }
        }
        Data::Union(_) => return Err(Error::new(name.span(), "unions have no schema")),
    }
    if let Some(doc) = description(&input.attrs) {
        members.push(("description".to_owned(), string(&doc)));
    }
    let body = object(&members);
    let schema_name = name.to_string();
    let adds = refs.iter().map(|ty| quote!(defs.add::<#ty>();));
    Ok(quote! {
        const _: () = {
            fn serialize<T: ::serde::Serialize>() {}
            fn each() {
                #(serialize::<#serialized>();)*
            }
        };

        impl ::familiar_json::schema::SchemaText for #name {
            const NAME: &'static str = #schema_name;
            const BODY: &'static str = #body;
            fn defs(defs: &mut ::familiar_json::schema::Defs) {
                #(#adds)*
            }
        }
    })
}

/// What a field's type looks like in a schema.
struct Shape {
    /// Its schema's members (`type`, `items`, …), or `None` for "anything" (`true`).
    members: Option<Vec<(String, String)>>,
    /// Its `Default` as JSON, when the type's default is known.
    default: Option<String>,
    /// Whether it is an `Option` (not required when missing).
    option: bool,
}

impl Shape {
    fn new(members: Vec<(String, String)>, default: &str) -> Self {
        Self {
            members: Some(members),
            default: Some(default.to_owned()),
            option: false,
        }
    }

    fn typed(kind: &str, more: &[(&str, &str)], default: &str) -> Self {
        let mut members = vec![("type".to_owned(), string(kind))];
        members.extend(more.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
        Self::new(members, default)
    }

    /// The schema schemars writes for a value of `ty`; the named types it refers to
    /// are added to `refs`.
    fn of(ty: &Type, refs: &mut Vec<Type>) -> Result<Self> {
        let Type::Path(path) = ty else {
            return Err(Error::new(
                ty.span(),
                "#[derive(SchemaText)] does not write this type",
            ));
        };
        let Some(last) = path.path.segments.last() else {
            return Err(Error::new(ty.span(), "an empty type"));
        };
        let args: Vec<&Type> = match &last.arguments {
            PathArguments::AngleBracketed(args) => args
                .args
                .iter()
                .filter_map(|arg| match arg {
                    GenericArgument::Type(ty) => Some(ty),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        let unsigned = |format: &str| {
            Self::typed(
                "integer",
                &[("format", &string(format)), ("minimum", "0")],
                "0",
            )
        };
        let ranged = |format: &str, min: &str, max: &str| {
            Self::typed(
                "integer",
                &[
                    ("format", &string(format)),
                    ("minimum", min),
                    ("maximum", max),
                ],
                "0",
            )
        };
        let signed = |format: &str| Self::typed("integer", &[("format", &string(format))], "0");
        Ok(match (last.ident.to_string().as_str(), args.as_slice()) {
            ("String", []) => Self::typed("string", &[], "\"\""),
            ("bool", []) => Self::typed("boolean", &[], "false"),
            ("u8", []) => ranged("uint8", "0", "255"),
            ("u16", []) => ranged("uint16", "0", "65535"),
            ("u32", []) => unsigned("uint32"),
            ("u64", []) => unsigned("uint64"),
            ("usize", []) => unsigned("uint"),
            ("i8", []) => ranged("int8", "-128", "127"),
            ("i16", []) => ranged("int16", "-32768", "32767"),
            ("i32", []) => signed("int32"),
            ("i64", []) => signed("int64"),
            ("isize", []) => signed("int"),
            ("f32", []) => Self::typed("number", &[("format", &string("float"))], "0.0"),
            ("f64", []) => Self::typed("number", &[("format", &string("double"))], "0.0"),
            ("Value", []) => Self {
                members: None,
                default: Some("null".to_owned()),
                option: false,
            },
            ("Map", [] | [_, _]) => {
                Self::typed("object", &[("additionalProperties", "true")], "{}")
            }
            ("Vec", [item]) => {
                let item = Self::of(item, refs)?.text(Vec::new());
                Self::typed("array", &[("items", &item)], "[]")
            }
            ("BTreeMap" | "HashMap", [_, value]) => {
                let value = Self::of(value, refs)?.text(Vec::new());
                Self::typed("object", &[("additionalProperties", &value)], "{}")
            }
            ("Option", [inner]) => {
                let inner = Self::of(inner, refs)?;
                let members = match inner.members {
                    Some(members) if members.iter().any(|(key, _)| key == "$ref") => vec![(
                        "anyOf".to_owned(),
                        format!(
                            "[{},{}]",
                            object(&members),
                            object(&[("type".to_owned(), string("null"))])
                        ),
                    )],
                    Some(members) => members
                        .into_iter()
                        .map(|(key, value)| match key.as_str() {
                            "type" => (key, format!("[{value},{}]", string("null"))),
                            _ => (key, value),
                        })
                        .collect(),
                    None => {
                        return Err(Error::new(ty.span(), "an optional `Value` is not written"));
                    }
                };
                Self {
                    members: Some(members),
                    default: Some("null".to_owned()),
                    option: true,
                }
            }
            (_, []) => {
                refs.push(ty.clone());
                Self {
                    members: Some(vec![(
                        "$ref".to_owned(),
                        string(&format!("#/$defs/{}", last.ident)),
                    )]),
                    default: None,
                    option: false,
                }
            }
            _ => {
                return Err(Error::new(
                    ty.span(),
                    "#[derive(SchemaText)] does not write this type",
                ));
            }
        })
    }

    /// Its schema with `more` (a field's `default`, `description`) beside it.
    fn with(&self, more: Vec<(String, String)>) -> String {
        self.text(more)
    }

    fn text(&self, more: Vec<(String, String)>) -> String {
        match &self.members {
            None if more.is_empty() => "true".to_owned(),
            None => object(&more),
            Some(members) => {
                let mut all = members.clone();
                all.extend(more);
                object(&all)
            }
        }
    }
}

/// Whether a field's `skip_serializing_if` leaves its default out of what is written
/// (schemars then gives no `default`): known for the standard emptiness tests only.
fn skipped_when_default(attrs: &[Attribute], ty: &Type) -> Result<bool> {
    let mut test = None;
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("serde")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("skip_serializing_if") {
                test = Some(meta.value()?.parse::<syn::LitStr>()?.value());
            } else if meta.input.peek(syn::Token![=]) {
                meta.value()?.parse::<Expr>()?;
            }
            Ok(())
        })?;
    }
    match test.as_deref() {
        None => Ok(false),
        Some("Option::is_none" | "Vec::is_empty" | "String::is_empty" | "BTreeMap::is_empty") => {
            Ok(true)
        }
        Some(other) => Err(Error::new(
            ty.span(),
            format!("#[derive(SchemaText)] cannot tell whether `{other}` skips the default"),
        )),
    }
}

/// The doc comment as schemars reads it: each line without its first space, joined
/// by line breaks, trimmed; `None` when there is none.
fn description(attrs: &[Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|attr| attr.path().is_ident("doc"))
        .filter_map(|attr| match &attr.meta {
            Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(ExprLit {
                    lit: Lit::Str(text),
                    ..
                }) => {
                    let text = text.value();
                    Some(text.strip_prefix(' ').map(str::to_owned).unwrap_or(text))
                }
                _ => None,
            },
            _ => None,
        })
        .collect();
    let doc = lines.join("\n");
    let doc = doc.trim();
    (!doc.is_empty() && !doc.starts_with('#')).then(|| doc.to_owned())
}

/// A JSON object of these members, in this order.
fn object(members: &[(String, String)]) -> String {
    let members: Vec<String> = members
        .iter()
        .map(|(key, value)| format!("{}:{value}", string(key)))
        .collect();
    format!("{{{}}}", members.join(","))
}

/// `text` as a JSON string.
fn string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for ch in text.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            ch if (ch as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", ch as u32)),
            ch => out.push(ch),
        }
    }
    out.push('"');
    out
}
