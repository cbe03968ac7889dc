//! A small, strict subset of JSON Schema for schemas the host writes (a game's tool
//! parameters): `type`, `properties`, `required`, `items`, `enum`, `const`,
//! `additionalProperties: false`. Typed tools need none of this (serde checks their
//! arguments); a host tool's arguments are checked here before its handler runs, so
//! the model hears what was wrong instead of the host getting garbage.

use familiar_json::schema::SchemaText;
use serde_json::{Map, Value};

/// `T`'s schema as a tool's parameters: the text `#[derive(SchemaText)]` wrote at
/// compile time from the type's doc comments and attributes (tests hold it to what
/// schemars derives), read when it is asked for. Deriving it at run time would put
/// schemars' generator and each type's schema code in every build that asks for it.
pub fn parameters<T: SchemaText>() -> Value {
    written(&familiar_json::schema::parameters::<T>())
}

/// `T`'s schema whole, with `$schema` and `title`, as a contract gives it to the
/// model (schemars' `schema_for!`), from the text written at compile time.
pub fn whole<T: SchemaText>() -> Value {
    written(&familiar_json::schema::root::<T>())
}

fn written(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_default()
}

/// Whether `schema` can describe a tool's arguments: an object schema whose keywords
/// this module reads are well formed.
pub fn check_schema(schema: &Value) -> Result<(), String> {
    let Some(object) = schema.as_object() else {
        return Err(format!("expected an object, got {}", describe(schema)));
    };
    match object.get("type") {
        None => {}
        Some(Value::String(t)) if t == "object" => {}
        Some(other) => return Err(format!("its type is {other}")),
    }
    check_keywords(object, "parameters")
}

fn check_keywords(object: &Map<String, Value>, path: &str) -> Result<(), String> {
    if let Some(properties) = object.get("properties") {
        let Some(properties) = properties.as_object() else {
            return Err(format!("`{path}.properties` must be an object"));
        };
        for (name, property) in properties {
            let Some(property) = property.as_object() else {
                return Err(format!("`{path}.properties.{name}` must be an object"));
            };
            check_keywords(property, &format!("{path}.properties.{name}"))?;
        }
    }
    if let Some(required) = object.get("required") {
        let names = required
            .as_array()
            .filter(|a| a.iter().all(Value::is_string));
        if names.is_none() {
            return Err(format!("`{path}.required` must be a list of names"));
        }
    }
    if let Some(items) = object.get("items") {
        let Some(items) = items.as_object() else {
            return Err(format!("`{path}.items` must be an object"));
        };
        check_keywords(items, &format!("{path}.items"))?;
    }
    if let Some(types) = object.get("type") {
        let known = |t: &Value| t.as_str().is_some_and(|t| TYPES.contains(&t));
        let ok = match types {
            Value::Array(list) => list.iter().all(known),
            one => known(one),
        };
        if !ok {
            return Err(format!("`{path}.type` is not a JSON type: {types}"));
        }
    }
    if object.get("enum").is_some_and(|e| !e.is_array()) {
        return Err(format!("`{path}.enum` must be a list"));
    }
    Ok(())
}

const TYPES: [&str; 7] = [
    "object", "array", "string", "number", "integer", "boolean", "null",
];

/// Checks `value` against `schema`; the error names the first problem and its path.
pub fn validate(schema: &Value, value: &Value) -> Result<(), String> {
    if !value.is_object() {
        return Err(format!(
            "the arguments must be an object, got {}",
            describe(value)
        ));
    }
    check(schema, value, "")
}

fn check(schema: &Value, value: &Value, path: &str) -> Result<(), String> {
    let Some(schema) = schema.as_object() else {
        return Ok(());
    };
    let at = |what: String| {
        if path.is_empty() {
            format!("the arguments {what}")
        } else {
            format!("`{path}` {what}")
        }
    };
    if let Some(types) = schema.get("type") {
        let allowed: Vec<&str> = match types {
            Value::Array(list) => list.iter().filter_map(Value::as_str).collect(),
            one => one.as_str().into_iter().collect(),
        };
        if !allowed.iter().any(|t| is_type(value, t)) {
            let article = |t: &str| match t {
                "object" | "array" | "integer" => format!("an {t}"),
                "null" => "null".to_owned(),
                t => format!("a {t}"),
            };
            let wanted: Vec<String> = allowed.iter().map(|t| article(t)).collect();
            return Err(at(format!(
                "must be {}, got {}",
                wanted.join(" or "),
                short(value)
            )));
        }
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array)
        && !options.contains(value)
    {
        let options: Vec<String> = options.iter().map(Value::to_string).collect();
        return Err(at(format!(
            "must be one of {}, got {}",
            options.join(", "),
            short(value)
        )));
    }
    if let Some(constant) = schema.get("const")
        && constant != value
    {
        return Err(at(format!("must be {constant}, got {}", short(value))));
    }
    match value {
        Value::Object(fields) => check_fields(schema, fields, path),
        Value::Array(items) => match schema.get("items") {
            Some(item_schema) => items
                .iter()
                .enumerate()
                .try_for_each(|(i, item)| check(item_schema, item, &format!("{path}[{i}]"))),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

fn check_fields(
    schema: &Map<String, Value>,
    fields: &Map<String, Value>,
    path: &str,
) -> Result<(), String> {
    let join = |name: &str| {
        if path.is_empty() {
            name.to_owned()
        } else {
            format!("{path}.{name}")
        }
    };
    for name in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !fields.contains_key(name) {
            return Err(format!("`{}` is required", join(name)));
        }
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    for (name, value) in fields {
        match properties.and_then(|p| p.get(name)) {
            Some(property) => check(property, value, &join(name))?,
            None if closed => return Err(format!("`{}` is not a known argument", join(name))),
            None => {}
        }
    }
    Ok(())
}

fn is_type(value: &Value, t: &str) -> bool {
    match t {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        _ => false,
    }
}

/// What kind of JSON value `value` is, as a sentence names it ("an array").
pub fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A value as an error quotes it: short ones whole, long ones by their kind.
fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 40 {
        text
    } else {
        describe(value).to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "kind": {"type": "string", "enum": ["goblin", "troll"]},
                "count": {"type": "integer"},
                "at": {"type": "object", "properties": {"x": {"type": "number"}},
                       "required": ["x"]},
                "tags": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["kind"],
            "additionalProperties": false
        })
    }

    #[test]
    fn good_arguments_pass() {
        let args = json!({"kind": "troll", "count": 2, "at": {"x": 1.5}, "tags": ["big"]});
        assert_eq!(validate(&schema(), &args), Ok(()));
        assert_eq!(validate(&json!({}), &json!({"anything": 1})), Ok(()));
    }

    #[test]
    fn each_problem_is_named_with_its_path() {
        let cases = [
            (json!([]), "the arguments must be an object, got an array"),
            (json!({}), "`kind` is required"),
            (
                json!({"kind": "dragon"}),
                r#"`kind` must be one of "goblin", "troll", got "dragon""#,
            ),
            (
                json!({"kind": "troll", "count": 1.5}),
                "`count` must be an integer, got 1.5",
            ),
            (json!({"kind": "troll", "at": {}}), "`at.x` is required"),
            (
                json!({"kind": "troll", "tags": ["a", 2]}),
                "`tags[1]` must be a string, got 2",
            ),
            (
                json!({"kind": "troll", "colour": "red"}),
                "`colour` is not a known argument",
            ),
        ];
        for (args, error) in cases {
            assert_eq!(validate(&schema(), &args), Err(error.to_owned()), "{args}");
        }
    }

    #[test]
    fn schemas_a_model_cannot_use_are_refused() {
        assert!(check_schema(&schema()).is_ok());
        assert!(check_schema(&json!({})).is_ok());
        assert!(check_schema(&json!("object")).is_err());
        assert!(check_schema(&json!({"type": "string"})).is_err());
        assert!(check_schema(&json!({"properties": {"a": {"type": "text"}}})).is_err());
        assert!(check_schema(&json!({"required": "a"})).is_err());
    }
}
