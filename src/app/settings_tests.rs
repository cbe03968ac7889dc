//! The settings' checks, what may be kept where, and their loading (`super`).

use super::*;

#[test]
fn a_provider_key_in_the_extra_header_is_refused_saying_why_and_what_instead() {
    let mut model = crate::llm::openai::ModelSettings::new("https://llm.example.com/v1", "m");
    let with = |value: &str| {
        let mut model = model.clone();
        model.extra_header = Some(("Authorization".into(), value.into()));
        Settings {
            model: ModelSource::Proxy(model),
            ..Settings::default()
        }
        .problems()
    };
    let refused = with("Bearer sk-proj-4f9c2d7e8a1b3c5d6e7f8a9b"); // fake-key
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert_eq!(refused[0].field, "model");
    let message = &refused[0].message;
    assert!(message.contains("any script on the page"), "{message}");
    assert!(message.contains("Use the Familiar extension"), "{message}");
    assert!(message.contains("a proxy that keeps the key"), "{message}");
    assert!(
        !message.contains("`fetch`"),
        "a person has no fetch to pass: {message}"
    );
    assert_eq!(
        with("Bearer team-token-42"),
        [],
        "a proxy's own token passes"
    );
    model.extra_header = Some((
        "X-Api-Key".into(),
        "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW".into(), // fake-key
    ));
    let google = Settings {
        model: ModelSource::Proxy(model),
        ..Settings::default()
    };
    assert_eq!(google.problems().len(), 1, "a Google key too");
}

#[test]
fn an_embedded_widget_keeps_no_proxy_token_in_storage() {
    let mut model = crate::llm::openai::ModelSettings::new("https://llm.example.com/v1", "m");
    model.extra_header = Some(("X-Proxy-Token".into(), "team-42".into()));
    let settings = Settings {
        model: ModelSource::Proxy(model),
        ..Settings::default()
    };
    let ModelSource::Proxy(kept) = settings.to_store(true).model else {
        panic!("not a proxy");
    };
    assert_eq!(kept.extra_header, None);
    assert_eq!(kept.base_url, "https://llm.example.com/v1");
    assert_eq!(
        settings.to_store(false),
        settings,
        "the demo's own page keeps it"
    );
}

#[test]
fn an_embedded_widget_keeps_no_collector_headers_in_storage() {
    let settings = Settings {
        collector: "https://otel.example:4318".into(),
        collector_headers: "x-api-key: k-123".into(),
        ..Settings::default()
    };
    let kept = settings.to_store(true);
    assert_eq!(kept.collector_headers, "");
    assert_eq!(kept.collector, "https://otel.example:4318");
    assert_eq!(
        settings.to_store(false),
        settings,
        "the demo's own page keeps them"
    );
}

#[test]
fn collector_headers_do_not_follow_a_changed_address_unasked() {
    let collector = |url: &str, headers: &str| Settings {
        collector: url.into(),
        collector_headers: headers.into(),
        ..Settings::default()
    };
    let saved = collector("https://otel.example:4318", "x-api-key: k-123");
    let moved = collector("https://elsewhere.example", "x-api-key: k-123");
    let problem = moved.moved_collector_headers(&saved).unwrap();
    assert_eq!(problem.field, "collector");
    assert_eq!(
        problem.message,
        "the headers were given for https://otel.example:4318: type them again to send \
         them to https://elsewhere.example, or clear them"
    );
    for fine in [
        collector("https://OTEL.example:4318/v1/traces", "x-api-key: k-123"),
        collector("https://elsewhere.example", "x-api-key: k-124"),
        collector("https://elsewhere.example", ""),
    ] {
        assert_eq!(fine.moved_collector_headers(&saved), None, "{fine:?}");
    }
    assert_eq!(moved.moved_collector_headers(&Settings::default()), None);
}

#[test]
fn the_proxy_models_price_is_the_one_runs_are_counted_at_and_older_saves_have_none() {
    let price = crate::llm::usage::Price {
        input: 0.15,
        output: 0.6,
    };
    let proxy = Settings {
        model: ModelSource::Proxy(crate::llm::openai::ModelSettings::new(
            "https://llm.example.com/v1",
            "gpt-4o-mini",
        )),
        price: Some(price),
        ..Settings::default()
    };
    assert_eq!(proxy.prices().of("gpt-4o-mini"), Some(price));
    let rules = Settings {
        price: Some(price),
        ..Settings::default()
    };
    assert_eq!(rules.prices(), crate::llm::usage::Prices::default());
    let older: Settings =
        crate::base::json::from_text(r#"{"temperature": 0.5}"#).unwrap_or_default();
    assert_eq!(
        (older.price, older.budgets),
        (None, crate::app::Budgets::default())
    );
}

#[test]
fn a_proxy_token_does_not_follow_a_changed_address_unasked() {
    let proxy = |url: &str, token: Option<&str>| {
        let mut model = crate::llm::openai::ModelSettings::new(url, "m");
        model.extra_header = token.map(|t| ("X-Proxy-Token".into(), t.into()));
        Settings {
            model: ModelSource::Proxy(model),
            ..Settings::default()
        }
    };
    let saved = proxy("https://llm.example.com/v1", Some("team-42"));
    let moved = proxy("https://elsewhere.example/v1", Some("team-42"));
    let problem = moved.moved_token(&saved).unwrap();
    assert_eq!(problem.field, "model");
    assert_eq!(
        problem.message,
        "the extra header was given for https://llm.example.com: type it again to send \
         it to https://elsewhere.example, or clear it"
    );
    for fine in [
        proxy("https://LLM.example.com/v2", Some("team-42")),
        proxy("https://elsewhere.example/v1", Some("team-43")),
        proxy("https://elsewhere.example/v1", None),
    ] {
        assert_eq!(fine.moved_token(&saved), None, "{:?}", fine.model);
    }
    assert_eq!(moved.moved_token(&Settings::default()), None);
}

#[test]
fn supabase_over_plain_http_is_refused_except_on_loopback() {
    let with = |url: &str| Settings {
        backend: Backend::Supabase {
            url: url.into(),
            anon_key: "sb_publishable_abc".into(),
        },
        ..Settings::default()
    };
    let problems = with("http://db.example.com").problems();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].message.contains("https://"));
    assert!(with("http://127.0.0.1:54321").problems().is_empty());
    assert!(with("https://db.example.com").problems().is_empty());
}

/// A JWT with these claims (the signature is not checked here).
fn jwt(claims: &str) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let encode = |bytes: &[u8]| -> String {
        bytes
            .chunks(3)
            .flat_map(|chunk| {
                let n = chunk.iter().fold(0u32, |n, b| (n << 8) | u32::from(*b))
                    << (8 * (3 - chunk.len()));
                (0..=chunk.len()).map(move |i| ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char)
            })
            .collect()
    };
    format!(
        "{}.{}.signature",
        encode(br#"{"alg":"HS256","typ":"JWT"}"#),
        encode(claims.as_bytes())
    )
}

fn supabase(anon_key: &str) -> Settings {
    Settings {
        backend: Backend::Supabase {
            url: "https://abc.supabase.co".into(),
            anon_key: anon_key.into(),
        },
        ..Settings::default()
    }
}

#[test]
fn the_defaults_are_valid() {
    assert_eq!(Settings::default().problems(), []);
}

#[test]
fn an_anon_key_is_accepted_and_a_service_key_refused() {
    assert_eq!(
        supabase(&jwt(r#"{"iss":"supabase","role":"anon"}"#)).problems(),
        []
    );
    assert_eq!(supabase("sb_publishable_abc123").problems(), []);
    for key in [
        jwt(r#"{"role":"service_role"}"#),
        "sb_secret_abc".to_owned(),
    ] {
        let problems = supabase(&key).problems();
        assert_eq!(problems.len(), 1, "{key}");
        assert_eq!(problems[0].field, "backend.anon_key");
        assert!(problems[0].message.contains("service key"), "{problems:?}");
    }
    let problems = supabase("not-a-key").problems();
    assert!(problems[0].message.contains("not a Supabase key"));
}

#[test]
fn every_problem_is_reported_with_its_field() {
    let settings = Settings {
        model: ModelSource::Proxy(ModelSettings::new("ftp://x", "m")),
        temperature: 3.0,
        max_iterations: 0,
        backend: Backend::Supabase {
            url: "abc.supabase.co".into(),
            anon_key: String::new(),
        },
        ..Settings::default()
    };
    let fields: Vec<_> = settings.problems().iter().map(|p| p.field).collect();
    assert_eq!(
        fields,
        [
            "model",
            "temperature",
            "max_iterations",
            "backend.url",
            "backend.anon_key"
        ]
    );
}

#[test]
fn settings_round_trip_and_missing_fields_take_defaults() {
    let settings = supabase("sb_publishable_x");
    let json = serde_json::to_string(&settings).unwrap();
    assert_eq!(serde_json::from_str::<Settings>(&json).unwrap(), settings);
    let partial: Settings = serde_json::from_str(r#"{"reflection": true}"#).unwrap();
    assert!(partial.reflection);
    assert!(
        !partial.goal_guess,
        "a save from before goal guessing guesses none"
    );
    assert_eq!(partial.max_iterations, 10);
}

#[test]
fn unreadable_or_invalid_settings_are_kept_aside_and_said() {
    use crate::app::{Notice, Storage, VolatileStorage};
    let storage = VolatileStorage::new();
    assert_eq!(load_settings(&storage, "s"), (Settings::default(), None));
    storage.save("s", "{not json").unwrap();
    let (settings, notice) = load_settings(&storage, "s");
    assert_eq!(settings, Settings::default());
    assert!(matches!(notice, Some(Notice::Corrupt { ref kept_as, .. }) if kept_as == "s.corrupt"));
    assert_eq!(storage.load("s.corrupt").as_deref(), Some("{not json"));
    let invalid = Settings {
        max_iterations: 0,
        ..Settings::default()
    };
    assert!(!invalid.problems().is_empty());
    let text = serde_json::to_string(&invalid).unwrap();
    storage.save("s", &text).unwrap();
    let (settings, notice) = load_settings(&storage, "s");
    assert_eq!(settings, Settings::default());
    assert!(
        matches!(notice, Some(Notice::Corrupt { ref error, .. }) if error.contains("max_iterations")),
        "{notice:?}"
    );
    assert_eq!(storage.load("s.corrupt").as_deref(), Some(text.as_str()));
}

#[test]
fn a_collector_is_named_by_its_address_and_header_lines_and_checked() {
    let with = |url: &str, headers: &str| Settings {
        collector: url.into(),
        collector_headers: headers.into(),
        ..Settings::default()
    };
    assert_eq!(Settings::default().collector(), Ok(None));
    let named = with("https://otel.example", "x-api-key: k1\n\nx-tenant:tavern");
    let collector = named.collector().unwrap().unwrap();
    assert_eq!(collector.url, "https://otel.example/v1/traces");
    assert_eq!(
        collector.headers,
        [
            ("x-api-key".into(), "k1".into()),
            ("x-tenant".into(), "tavern".into())
        ]
    );
    assert!(named.problems().is_empty());
    for (url, headers) in [
        ("http://otel.example", ""),
        ("https://otel.example", "no colon"),
        ("", "x-api-key: k1"),
    ] {
        let problems = with(url, headers).problems();
        assert_eq!(problems.len(), 1, "{url} {headers}");
        assert_eq!(problems[0].field, "collector");
    }
}
