//! Schedules through the API: listed, replaced by id, and refused when too often or
//! malformed.

use super::*;

#[wasm_bindgen_test]
async fn schedules_are_listed_replaced_by_id_and_refused_when_too_often_or_malformed() {
    let agent = agent("").await;
    let trigger =
        r#"trigger: { kind: "schedule", event: "market.check", subject: "check the market" }"#;
    let id = agent
        .schedule(js(&format!("{{ id: 'market', every: 60000, {trigger} }}")))
        .unwrap();
    assert_eq!(id, "market");
    // The same id replaces it.
    agent
        .schedule(js(&format!(
            "{{ id: 'market', every: 2000, missed: 'catchUp', {trigger} }}"
        )))
        .unwrap();
    let made = agent
        .schedule(js(&format!("{{ every: 1000, {trigger} }}")))
        .unwrap();
    assert!(made.starts_with("schedule-"), "{made}");
    let listed = agent.schedules();
    let listed = Array::from(&listed);
    assert_eq!(listed.length(), 2);
    assert_eq!(text(&listed.get(0), "id"), "market");
    assert_eq!(get(&listed.get(0), "every_ms").as_f64(), Some(2000.0));
    assert_eq!(text(&listed.get(0), "missed"), "catch_up");
    let now = js_sys::Date::now();
    let next = get(&listed.get(0), "next_ms").as_f64().unwrap();
    assert!(next > now && next <= now + 2000.0, "{next} vs {now}");
    assert_eq!(text(&listed.get(1), "id"), made);
    assert_eq!(text(&listed.get(1), "missed"), "skip");

    for (schedule, expected) in [
        (format!("{{ every: 999, {trigger} }}"), "too often"),
        ("{ every: 5000 }".to_owned(), "`trigger`"),
        (format!("{{ {trigger} }}"), "`every`"),
        (
            format!("{{ every: 5000, missed: 'later', {trigger} }}"),
            "`missed`",
        ),
        (
            format!("{{ every: 5000, often: true, {trigger} }}"),
            "`often`",
        ),
        (
            "{ every: 5000, trigger: { subject: 'x' } }".to_owned(),
            "event.kind",
        ),
    ] {
        let refused = agent.schedule(js(&schedule)).unwrap_err();
        let message = text(&refused, "message");
        assert!(message.contains(expected), "{schedule}: {message}");
    }
    assert_eq!(
        Array::from(&agent.schedules()).length(),
        2,
        "nothing refused was kept"
    );
    assert!(agent.unschedule("market".into()));
    assert!(!agent.unschedule("market".into()));
    assert!(agent.unschedule(made));
    assert_eq!(Array::from(&agent.schedules()).length(), 0);
    agent.destroy();
}
