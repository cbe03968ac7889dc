//! The strict-JSON discipline: extraction, repair, typed contracts and the re-ask loop.
#![allow(clippy::unwrap_used, clippy::panic)]

use familiar::base::json::{self, Contract, JsonError};
use familiar::llm::ChatRequest;
use familiar::llm::contract::{self, ContractError};
use familiar::llm::message::{Message, Role};
use familiar::llm::scripted::ScriptedModel;
use futures::executor::block_on;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

fn repaired(input: &str) -> Value {
    let text = json::extract(input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{input:?} gave invalid {text:?}: {e}"))
}

#[test]
fn valid_json_passes_through_unchanged() {
    for input in [
        r#"{"b": 1, "a": [true, null, 2.50]}"#,
        "  [1, 2]\n",
        r#"{"a": "x", "a": "y"}"#,
        "42",
        r#""just a string""#,
    ] {
        assert_eq!(json::extract(input).unwrap(), input);
    }
}

#[test]
fn json_is_found_in_fences_and_prose() {
    let cases = [
        ("```json\n{\"a\": 1}\n```", json!({"a": 1})),
        (
            "Sure! Here it is:\n```\n[1, 2]\n```\nAnything else?",
            json!([1, 2]),
        ),
        (
            "The plan is {\"steps\": [\"a\", \"b\"]} as requested.",
            json!({"steps": ["a", "b"]}),
        ),
        (
            "See [1]. Answer: {\"verdict\": \"finished\", \"notes\": \"ok\"}",
            json!({"verdict": "finished", "notes": "ok"}),
        ),
        ("```json\n{\"a\": 1,\n", json!({"a": 1})),
        (
            "{\"text\": \"a } inside\"} trailing words",
            json!({"text": "a } inside"}),
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(repaired(input), expected, "{input:?}");
    }
}

/// One case of the corpus in `tests/fixtures/json-repair/`: the input and the value a
/// person would intend (`None`: the input must be refused).
struct Case {
    class: String,
    input: String,
    intended: Option<Value>,
}

/// Every case of the corpus (its format is in the folder's README).
fn corpus() -> Vec<Case> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/json-repair");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "txt"))
        .collect();
    familiar::base::sort::sort_by(&mut files, |a, b| a.cmp(b));
    let mut cases = Vec::new();
    for path in files {
        let class = path.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        for chunk in text.split("--- input\n").skip(1) {
            let (input, intended) = chunk
                .split_once("\n--- intended\n")
                .unwrap_or_else(|| panic!("{class}: a case without `--- intended`"));
            let intended = intended.trim();
            let intended = (intended != "REFUSED").then(|| {
                serde_json::from_str(intended)
                    .unwrap_or_else(|e| panic!("{class}: intended {intended:?}: {e}"))
            });
            cases.push(Case {
                class: class.clone(),
                input: input.to_owned(),
                intended,
            });
        }
    }
    cases
}

/// The floor tests/counts.txt records as `figure {name} N`: the ratchet guards it there,
/// so it falls only with a reason line (scripts/counts.py).
fn figure(name: &str) -> usize {
    include_str!("counts.txt")
        .lines()
        .find_map(|line| {
            let rest = line.strip_prefix("figure ")?.strip_prefix(name)?;
            rest.trim().parse().ok()
        })
        .unwrap_or_else(|| panic!("tests/counts.txt has no `figure {name} N` line"))
}

#[test]
fn every_corpus_case_is_repaired_to_the_intended_value_or_refused() {
    let cases = corpus();
    // Every case of the corpus is read: one lost to a broken line fails here.
    let floor = figure("tests/json_discipline.rs corpus cases");
    assert!(
        cases.len() >= floor,
        "the corpus shrank to {} (floor {floor})",
        cases.len()
    );
    let mut wrong = Vec::new();
    for case in &cases {
        let got =
            json::extract(&case.input).map(|text| serde_json::from_str::<Value>(&text).unwrap());
        let right = match (&got, &case.intended) {
            (Ok(value), Some(intended)) => value == intended,
            (Err(_), None) => true,
            _ => false,
        };
        if !right {
            wrong.push(format!("{}: {:?} gave {:?}", case.class, case.input, got));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} cases wrong:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
}

#[test]
fn valid_corpus_cases_pass_through_byte_identical() {
    for case in corpus().iter().filter(|case| case.class == "valid") {
        assert_eq!(json::extract(&case.input).unwrap(), case.input.as_str());
    }
}

#[test]
fn tool_arguments_with_a_raw_newline_are_repaired_before_validation() {
    let repaired = json::repair("{\"fact\": \"The ale is gone.\nBuy more.\"}").unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&repaired).unwrap(),
        json!({"fact": "The ale is gone.\nBuy more."})
    );
}

#[test]
fn hostile_wrappers_and_concatenations_are_bounded() {
    let wrapped = format!("{}1{}", "f(".repeat(10_000), ")".repeat(10_000));
    assert!(json::repair(&wrapped).is_err());
    let joined = format!("[{}\"x\"]", "\"a\" + ".repeat(50_000));
    let value: Value = serde_json::from_str(&json::repair(&joined).unwrap()).unwrap();
    assert_eq!(value[0].as_str().unwrap().len(), 50_001);
}

#[test]
fn stray_quotes_by_the_thousand_still_repair_to_json() {
    // Each of these made the old repair go back over the rest of the text at every
    // quote; now going back is paid from a budget and the result stays JSON.
    for input in [
        format!("{{\"k\": \"{}", "a\"b".repeat(5_000)),
        format!("[\"{}]", "x, \"".repeat(5_000)),
        format!("{{{}}}", "\"a\": \"x, ".repeat(5_000)),
    ] {
        let text = json::extract(&input).unwrap();
        assert!(serde_json::from_str::<Value>(&text).is_ok());
    }
}

#[test]
fn hopeless_text_is_refused_with_a_reason() {
    assert_eq!(
        json::extract("I cannot help with that."),
        Err(JsonError::NoJson)
    );
    assert_eq!(json::extract(""), Err(JsonError::NoJson));
    for input in [
        "{ this is not json at all }",
        "{\"a\" 1 2 3 ::}",
        "{\"a\": @}",
        "{:::}",
    ] {
        assert!(
            matches!(json::extract(input), Err(JsonError::Unrepairable { .. })),
            "{input:?} gave {:?}",
            json::extract(input)
        );
    }
}

#[test]
fn hostile_nesting_is_refused_without_exhausting_the_stack() {
    let deep = "[".repeat(100_000);
    assert!(matches!(
        json::extract(&deep),
        Err(JsonError::Unrepairable { .. })
    ));
    let fine = format!("{}{}", "[".repeat(50), "]".repeat(50));
    assert_eq!(json::extract(&fine).unwrap(), fine);
}

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct Verdict {
    verdict: String,
    confidence: f64,
}

impl Contract for Verdict {
    fn validate(&self) -> Result<(), String> {
        if !(0.0..=1.0).contains(&self.confidence) {
            return Err(format!("confidence {} is outside 0..1", self.confidence));
        }
        if !["finished", "revise", "more"].contains(&self.verdict.as_str()) {
            return Err(format!(
                "verdict `{}` is not finished, revise or more",
                self.verdict
            ));
        }
        Ok(())
    }
}

#[test]
fn a_contract_picks_the_candidate_that_fits_it() {
    let text = r#"For example {"x": 1}. My verdict: {'verdict': 'finished', 'confidence': 0.9,}"#;
    assert_eq!(
        json::parse::<Verdict>(text),
        Ok(Verdict {
            verdict: "finished".into(),
            confidence: 0.9
        })
    );
}

#[test]
fn a_contract_refuses_wrong_types_missing_fields_and_failed_rules() {
    for (text, fragment) in [
        (r#"{"verdict": "finished"}"#, "missing field `confidence`"),
        (r#"{"verdict": 3, "confidence": 1}"#, "invalid type"),
        (
            r#"{"verdict": "finished", "confidence": 7}"#,
            "outside 0..1",
        ),
    ] {
        let error = json::parse::<Verdict>(text).unwrap_err();
        assert!(matches!(error, JsonError::Invalid(_)), "{error}");
        assert!(error.to_string().contains(fragment), "{error}");
    }
}

fn request() -> ChatRequest {
    ChatRequest {
        messages: vec![Message::user("Judge the answer.")].into(),
        ..ChatRequest::default()
    }
}

#[test]
fn an_invalid_answer_is_re_asked_with_the_error_then_accepted() {
    let model = ScriptedModel::new();
    model
        .push_text("I think it is finished.")
        .push_text(r#"{"verdict": "done", "confidence": 0.5}"#)
        .push_text(r#"{"verdict": "finished", "confidence": 0.5}"#);
    let verdict: Verdict = block_on(contract::ask(&model, request(), 2, &mut |_| {})).unwrap();
    assert_eq!(verdict.verdict, "finished");

    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    let format = requests[0].response_format.as_ref().unwrap();
    assert_eq!(format.name, "Verdict");
    assert_eq!(format.schema["required"], json!(["verdict", "confidence"]));
    let reask = requests[1].messages.last().unwrap();
    assert_eq!(reask.role, Role::User);
    assert!(
        reask.content.contains("no JSON object or array"),
        "{}",
        reask.content
    );
    let reask = requests[2].messages.last().unwrap();
    assert!(
        reask.content.contains("`done` is not finished"),
        "{}",
        reask.content
    );
}

#[test]
fn an_answer_still_invalid_after_the_re_asks_is_rejected() {
    let model = ScriptedModel::new();
    model
        .push_text("no")
        .push_text("still no")
        .push_text("never");
    let result = block_on(contract::ask::<Verdict>(&model, request(), 2, &mut |_| {}));
    assert_eq!(
        result,
        Err(ContractError::Rejected {
            attempts: 3,
            last: JsonError::NoJson
        })
    );
    assert_eq!(model.remaining(), 0);
}

#[test]
fn a_model_error_stops_the_loop_at_once() {
    let model = ScriptedModel::new();
    model.push(Err(familiar::llm::LlmError::Aborted));
    let result = block_on(contract::ask::<Verdict>(&model, request(), 2, &mut |_| {}));
    assert_eq!(
        result,
        Err(ContractError::Model(familiar::llm::LlmError::Aborted))
    );
    assert_eq!(model.requests().len(), 1);
}
