//! `#[derive(Read)]`: a struct's or an internally tagged enum's `Deserialize`, written
//! as familiar-json's shared field-by-field reader (`familiar_json::fields::Fields`)
//! rather than serde's derived visitor, from the same `#[serde(...)]` attributes the
//! type's `Serialize` derive reads. A type states its keys, renames and defaults once;
//! what is read is what serde's derive would read (held to it by familiar-json's
//! tests), and each field costs one call to a `Fields` method compiled once per field
//! *type*, not 1–10 KB of visitor per type.
//!
//! What it reads: on the container `rename_all`, `deny_unknown_fields`, `default`,
//! and on an enum `tag = "…"` (internally tagged: struct, unit and newtype variants);
//! on a field `rename`, `alias`, `default`, `default = "path"`, `skip` (or
//! `skip_deserializing`), `flatten` (one per type, read from the fields left), `with`
//! and `deserialize_with`; on a variant `rename`, `alias` and `rename_all`. Attributes
//! for writing only are passed over; any other is refused at compile time.
//!
//! `#[derive(SchemaText)]` (the `schema` module) writes the type's JSON Schema as
//! schemars' derive gives it, as text at compile time, from the same doc comments and
//! attributes.

mod attrs;
mod schema;

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::{Data, DeriveInput, Error, Fields, Ident, Result, spanned::Spanned};

use attrs::{Case, Container, Fallback, Field, Variant, unraw};

/// `Deserialize` through familiar-json's shared reader, from the type's `#[serde]`
/// attributes. See the crate's documentation for the attributes it reads.
#[proc_macro_derive(Read, attributes(serde))]
pub fn derive_read(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    let input = syn::parse_macro_input!(input as DeriveInput);
    read(&input)
        .unwrap_or_else(Error::into_compile_error)
        .into()
}

/// `familiar_json::schema::SchemaText`: the type's JSON Schema as schemars' derive
/// gives it, written as text at compile time from its doc comments and `#[serde]`
/// attributes (see the `schema` module for what it writes).
#[proc_macro_derive(SchemaText, attributes(serde))]
pub fn derive_schema_text(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    let input = syn::parse_macro_input!(input as DeriveInput);
    schema::derive(&input)
        .unwrap_or_else(Error::into_compile_error)
        .into()
}

fn read(input: &DeriveInput) -> Result<TokenStream> {
    if !input.generics.params.is_empty() {
        return Err(Error::new(
            input.generics.span(),
            "#[derive(Read)] reads types without generic parameters",
        ));
    }
    let container = Container::read(&input.attrs)?;
    match &input.data {
        Data::Struct(data) => {
            if container.tag.is_some() {
                return Err(Error::new(Span::call_site(), "`tag` is for enums"));
            }
            strukt(&input.ident, &container, &data.fields)
        }
        Data::Enum(data) => {
            let Some(tag) = &container.tag else {
                return Err(Error::new(
                    Span::call_site(),
                    "#[derive(Read)] reads internally tagged enums (#[serde(tag = \"…\")]); \
                     derive serde's Deserialize for others",
                ));
            };
            if container.deny_unknown || container.default {
                return Err(Error::new(
                    Span::call_site(),
                    "`deny_unknown_fields` and `default` are for structs",
                ));
            }
            tagged(&input.ident, &container, tag, data.variants.iter())
        }
        Data::Union(_) => Err(Error::new(Span::call_site(), "unions are not read")),
    }
}

/// The names a function's locals go by: never a field's.
fn local(name: &str) -> Ident {
    Ident::new(name, Span::mixed_site())
}

/// A struct's `Deserialize`: its object read by a plain function, one take per field.
fn strukt(name: &Ident, container: &Container, fields: &Fields) -> Result<TokenStream> {
    let Fields::Named(named) = fields else {
        return Err(Error::new(
            fields.span(),
            "#[derive(Read)] reads structs with named fields",
        ));
    };
    let fields_ = local("fields");
    let read_ = local("read");
    let base_ = local("base");
    let list = FieldList::read(named.named.iter(), container.rename_all)?;
    let base = container
        .default
        .then(|| quote!(let #base_ = <#name as ::core::default::Default>::default();));
    let takes = list.takes(&fields_, container.default.then_some(&base_))?;
    if container.deny_unknown && list.fields.iter().any(|(_, _, attrs)| attrs.flatten) {
        return Err(Error::new(
            Span::call_site(),
            "`deny_unknown_fields` leaves nothing for a flattened field",
        ));
    }
    let deny = container.deny_unknown.then(|| {
        let known = list.known();
        quote!(#fields_.deny_unknown(&[#(#known),*])?;)
    });
    let build = list.build(&fields_, &read_, quote!(#name));
    let expected = format!("struct {name}");
    Ok(quote! {
        const _: () = {
            #[allow(unused_mut, clippy::redundant_closure)]
            fn #read_(
                mut #fields_: ::familiar_json::fields::Fields,
            ) -> ::core::result::Result<#name, ::familiar_json::ReadError> {
                #deny
                #base
                let #read_ = (#(#takes,)*);
                #build
            }

            impl<'de> ::serde::Deserialize<'de> for #name {
                fn deserialize<D: ::serde::Deserializer<'de>>(
                    deserializer: D,
                ) -> ::core::result::Result<Self, D::Error> {
                    let fields = ::familiar_json::fields::Fields::read(deserializer, #expected)?;
                    #read_(fields).map_err(::familiar_json::fields::Fields::refused)
                }
            }
        };
    })
}

/// An internally tagged enum's `Deserialize`: a match on the tag, each variant's fields
/// taken as a struct's.
fn tagged<'a>(
    name: &Ident,
    container: &Container,
    tag: &str,
    variants: impl Iterator<Item = &'a syn::Variant>,
) -> Result<TokenStream> {
    let fields_ = local("fields");
    let read_ = local("read");
    let tag_ = local("tag");
    let mut arms = Vec::new();
    let mut names = Vec::new();
    for variant in variants {
        let attrs = Variant::read(&variant.attrs)?;
        let ident = &variant.ident;
        let key = attrs.rename.clone().unwrap_or_else(|| {
            let name = unraw(ident);
            container
                .rename_all
                .map_or(name.clone(), |case| case.variant(&name))
        });
        let read = match &variant.fields {
            Fields::Unnamed(unnamed) => {
                let mut inner = unnamed.unnamed.iter();
                let (Some(only), None) = (inner.next(), inner.next()) else {
                    return Err(Error::new(
                        unnamed.span(),
                        "an internally tagged variant holds one value or named fields",
                    ));
                };
                let ty = &only.ty;
                quote!(#fields_.rest::<#ty>().map(#name::#ident))
            }
            Fields::Named(named) => {
                let list = FieldList::read(named.named.iter(), attrs.rename_all)?;
                let takes = list.takes(&fields_, None)?;
                let build = list.build(&fields_, &read_, quote!(#name::#ident));
                quote!({
                    let #read_ = (#(#takes,)*);
                    #build
                })
            }
            Fields::Unit => {
                let build = FieldList::default().build(&fields_, &read_, quote!(#name::#ident));
                quote!({
                    let #read_ = ();
                    #build
                })
            }
        };
        let aliases = &attrs.aliases;
        arms.push(quote!(#key #(| #aliases)* => #read));
        names.push(key);
        names.extend(attrs.aliases);
    }
    let expected = format!("internally tagged enum {name}");
    Ok(quote! {
        const _: () = {
            #[allow(unused_mut, clippy::redundant_closure)]
            fn #read_(
                mut #fields_: ::familiar_json::fields::Fields,
                #tag_: &str,
            ) -> ::core::result::Result<#name, ::familiar_json::ReadError> {
                match #tag_ {
                    #(#arms,)*
                    other => ::core::result::Result::Err(::serde::de::Error::unknown_variant(
                        other,
                        &[#(#names),*],
                    )),
                }
            }

            impl<'de> ::serde::Deserialize<'de> for #name {
                fn deserialize<D: ::serde::Deserializer<'de>>(
                    deserializer: D,
                ) -> ::core::result::Result<Self, D::Error> {
                    let (fields, tag) = ::familiar_json::fields::Fields::read_tagged(
                        deserializer,
                        #tag,
                        #expected,
                    )?;
                    #read_(fields, &tag).map_err(::familiar_json::fields::Fields::refused)
                }
            }
        };
    })
}

/// A struct's or a variant's fields, each with its key and attributes; the one
/// flattened field, if any, last, as it reads the fields the others left.
#[derive(Default)]
struct FieldList<'a> {
    fields: Vec<(&'a Ident, String, Field)>,
}

impl<'a> FieldList<'a> {
    fn read(fields: impl Iterator<Item = &'a syn::Field>, case: Option<Case>) -> Result<Self> {
        let mut list = Vec::new();
        let mut flattened = None;
        for field in fields {
            let Some(ident) = &field.ident else {
                return Err(Error::new(field.span(), "a field without a name"));
            };
            let attrs = Field::read(&field.attrs)?;
            let key = attrs.rename.clone().unwrap_or_else(|| {
                let name = unraw(ident);
                case.map_or(name.clone(), |case| case.field(&name))
            });
            if attrs.flatten {
                if flattened.is_some() {
                    return Err(Error::new(field.span(), "one flattened field per type"));
                }
                flattened = Some((ident, key, attrs));
            } else {
                list.push((ident, key, attrs));
            }
        }
        list.extend(flattened);
        Ok(Self { fields: list })
    }

    /// The keys a reader knows (`deny_unknown_fields`), in serde's order: field by
    /// field, each field's key and aliases sorted.
    fn known(&self) -> Vec<&str> {
        self.fields
            .iter()
            .filter(|(_, _, attrs)| !attrs.skip && !attrs.flatten)
            .flat_map(|(_, key, attrs)| {
                let names: std::collections::BTreeSet<&str> = std::iter::once(key.as_str())
                    .chain(attrs.aliases.iter().map(String::as_str))
                    .collect();
                names
            })
            .collect()
    }

    /// Each field taken from `fields` (an `Option`, `None` when it did not read); with
    /// `base`, a missing field is `base`'s (the container's `default`).
    fn takes(&self, fields: &Ident, base: Option<&Ident>) -> Result<Vec<TokenStream>> {
        self.fields
            .iter()
            .map(|(ident, key, attrs)| {
                let take = take(fields, ident, key, attrs, base)?;
                Ok(if attrs.aliases.is_empty() {
                    take
                } else {
                    let aliases = &attrs.aliases;
                    quote!({
                        #(#fields.alias(#aliases, #key);)*
                        #take
                    })
                })
            })
            .collect()
    }

    /// The value built from the fields read, or the first error.
    fn build(&self, fields: &Ident, read: &Ident, path: TokenStream) -> TokenStream {
        let idents: Vec<_> = self.fields.iter().map(|(ident, _, _)| *ident).collect();
        quote! {{
            #[allow(unreachable_patterns, clippy::match_single_binding)]
            match #read {
                (#(::core::option::Option::Some(#idents),)*) => {
                    ::core::result::Result::Ok(#path { #(#idents),* })
                }
                _ => ::core::result::Result::Err(#fields.error()),
            }
        }}
    }
}

/// One field's take: what `Fields` method reads it, and what it is when missing.
fn take(
    fields: &Ident,
    ident: &Ident,
    key: &str,
    attrs: &Field,
    base: Option<&Ident>,
) -> Result<TokenStream> {
    let span = ident.span();
    let missing = match (&attrs.default, base) {
        (Some(Fallback::Type), _) => Some(quote!(::core::default::Default::default)),
        (Some(Fallback::Path(path)), _) => Some(quote!(#path)),
        (None, _) => None,
    };
    if attrs.flatten {
        if attrs.default.is_some() || attrs.with.is_some() || base.is_some() {
            return Err(Error::new(
                span,
                "a flattened field reads the fields left, as is",
            ));
        }
        return Ok(quote!(#fields.take_rest()));
    }
    if attrs.skip {
        return Ok(match (missing, base) {
            (Some(missing), _) => quote!(::core::option::Option::Some(#missing())),
            (None, Some(base)) => quote!(::core::option::Option::Some(#base.#ident)),
            (None, None) => {
                quote!(::core::option::Option::Some(
                    ::core::default::Default::default()
                ))
            }
        });
    }
    if let Some(with) = &attrs.with {
        let missing = match (missing, base) {
            (Some(missing), _) => quote!(::core::option::Option::Some(#missing)),
            (None, None) => quote!(::core::option::Option::None),
            (None, Some(_)) => {
                return Err(Error::new(
                    span,
                    "`with` under a container's `default` needs the field's own `default`",
                ));
            }
        };
        return Ok(quote_spanned!(span=> #fields.take_with(#key, |value| #with(value), #missing)));
    }
    Ok(match (missing, base) {
        (Some(missing), _) => quote!(#fields.take_or(#key, #missing)),
        (None, Some(base)) => quote!(#fields.take_or_value(#key, #base.#ident)),
        (None, None) => quote!(#fields.take(#key)),
    })
}
