//! The loader: a whole CDL file loads with its other sections kept and noted; inside
//! `workflows` every problem is an error with its path, all reported at once.

use familiar::workflow::Character;
use serde_json::json;

use super::bar::MARIGOLD;

fn errors_of(file: serde_json::Value) -> Vec<(String, String)> {
    Character::from_json(&file.to_string())
        .unwrap_err()
        .into_iter()
        .map(|e| (e.path, e.message))
        .collect()
}

fn one_state(state: serde_json::Value) -> serde_json::Value {
    json!({
        "identity": {"name": "X"},
        "workflows": {"w": {"enabled": true, "states": [state]}}
    })
}

#[test]
fn the_loader_reports_each_problem_with_its_path() {
    let unknown_state = errors_of(one_state(json!({
        "name": "a",
        "actions": {"create_transaction": {}},
        "next_state": "b"
    })));
    assert_eq!(unknown_state[0].0, "workflows.w.states[0].next_state");
    assert!(unknown_state[0].1.contains("there is no state `b`"));

    let bad_regex = errors_of(one_state(json!({
        "name": "a",
        "triggers": {"intent_patterns": ["ok", "(unclosed"]},
        "actions": {"create_transaction": {}}
    })));
    assert_eq!(
        bad_regex[0].0,
        "workflows.w.states[0].triggers.intent_patterns[1]"
    );
    assert!(bad_regex[0].1.contains("does not compile"));

    let huge_regex = errors_of(one_state(json!({
        "name": "a",
        "triggers": {"intent_patterns": ["(?:a{100}){100}"]},
        "actions": {"create_transaction": {}}
    })));
    assert_eq!(
        huge_regex[0].0,
        "workflows.w.states[0].triggers.intent_patterns[0]"
    );

    let long_regex = errors_of(one_state(json!({
        "name": "a",
        "triggers": {"intent_patterns": ["a".repeat(1001)]},
        "actions": {"create_transaction": {}}
    })));
    assert!(long_regex[0].1.contains("at most 1000"));

    let placeholder = errors_of(one_state(json!({
        "name": "a",
        "triggers": {"intent_patterns": ["(?<drink>\\w+)"]},
        "actions": {"create_transaction": {}, "prompt_injection": "{context.drink} for {context.table}"}
    })));
    assert_eq!(
        placeholder,
        [(
            "workflows.w.states[0].actions.prompt_injection".to_owned(),
            "`{context.table}` names no field of this workflow".to_owned()
        )]
    );

    let reply = errors_of(one_state(json!({
        "name": "a",
        "actions": {"create_transaction": {}, "offline_reply": "Your {context.drnk}, love."}
    })));
    assert_eq!(reply[0].0, "workflows.w.states[0].actions.offline_reply");

    // Several problems come back together; bad JSON is an error at the root.
    let several = errors_of(json!({
        "identity": {"name": "X"},
        "workflows": {"w": {"enabled": true, "states": [
            {"name": "a", "triggers": {"intent_patterns": ["("]}, "actions": {"update_transaction": {}}, "next_state": "zzz"}
        ], "timeout": {"duration_minutes": 0}}}
    }));
    assert_eq!(several.len(), 4, "{several:?}");
    let root = Character::from_json("{\"identity\": {}").unwrap_err();
    assert_eq!(root[0].path, "$");
}

#[test]
fn a_whole_cdl_file_loads_with_its_other_sections_kept_as_notes() {
    let character = Character::from_json(MARIGOLD).unwrap();
    assert_eq!(character.identity.name, "Marigold");
    assert_eq!(character.workflows.len(), 2);
    let notes: Vec<String> = character.notes.iter().map(ToString::to_string).collect();
    assert_eq!(
        notes,
        [
            "identity.age: kept; the workflows do not use it",
            "identity.location: kept; the workflows do not use it",
            "backstory: a section the workflows do not use; kept as written",
            "communication_style: a section the workflows do not use; kept as written",
            "metadata: a section the workflows do not use; kept as written",
        ]
    );
    assert_eq!(
        character.sections["communication_style"]["catchphrases"][0],
        "Right you are."
    );
}

#[test]
fn inside_workflows_an_unknown_field_is_an_error_with_its_path() {
    let misspelt_trigger = errors_of(json!({
        "identity": {"name": "X"},
        "backstory": "kept",
        "workflows": {"w": {"enabled": true, "states": [
            {"name": "a", "triggers": {"intent_pattern": ["x"]}, "actions": {"create_transaction": {}}}
        ]}}
    }));
    assert_eq!(misspelt_trigger.len(), 1, "{misspelt_trigger:?}");
    assert_eq!(
        misspelt_trigger[0].0,
        "workflows.w.states[0].triggers.intent_pattern"
    );
    assert!(
        misspelt_trigger[0]
            .1
            .contains("unknown field `intent_pattern`"),
        "{misspelt_trigger:?}"
    );
    let workflow_level = errors_of(json!({
        "identity": {"name": "X"},
        "workflows": {"w": {"enabled": true, "stats": []}}
    }));
    assert_eq!(workflow_level[0].0, "workflows.w.stats");
    let wrong_type = errors_of(json!({
        "identity": {"name": "X"},
        "workflows": {"w": {"timeout": {"duration_minutes": "soon"}}}
    }));
    assert_eq!(wrong_type[0].0, "workflows.w.timeout.duration_minutes");
}

#[test]
fn the_sections_the_workflows_read_are_checked_with_their_paths() {
    assert_eq!(
        errors_of(json!({"identity": {"name": 3}, "workflows": {}})),
        [(
            "identity.name".to_owned(),
            "invalid type: integer `3`, expected a string".to_owned()
        )]
    );
    let no_identity = errors_of(json!({"workflows": {}, "offline_reply": 7}));
    let paths: Vec<&str> = no_identity.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(paths, ["identity", "offline_reply"]);
    assert_eq!(
        errors_of(json!([1, 2]))[0],
        (
            "$".to_owned(),
            "expected an object, got an array".to_owned()
        )
    );
}

#[test]
fn python_style_named_groups_read_like_the_seeds() {
    let character = Character::from_json(
        &one_state(json!({
            "name": "a",
            "triggers": {"intent_patterns": ["order (?P<drink>\\w+)"]},
            "actions": {"create_transaction": {"price_lookup": {"tea": 2}}}
        }))
        .to_string(),
    )
    .unwrap();
    let pattern = &character.workflows[0].states[0].matcher.patterns[0];
    assert_eq!(&pattern.captures("order tea").unwrap()["drink"], "tea");
}
