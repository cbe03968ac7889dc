//! Agents a player owns: an agent's action changes the agent's rows and not its
//! owner's, one player cannot act as another's agent, and a resident's tools act as the
//! agent through its owner.

use super::*;

fn act_as(store: &LocalStore, agent: i64, action: &str, args: Value) -> Result<Value, StoreError> {
    let mut call = Row::new();
    call.insert("agent".into(), json!(agent));
    call.insert("action".into(), json!(action));
    call.insert("args".into(), args);
    block_on(store.rpc(&Rpc {
        function: "act_as".into(),
        args: call,
    }))
}

#[test]
fn an_agents_action_changes_the_agents_rows_and_not_its_owners() {
    let store = world();
    familiar::world::functions::play_as(&store, familiar::world::PLAYER_ID).unwrap();
    let worked = act_as(&store, 1, "do_work", json!({"job": "farming"})).unwrap();
    assert_eq!(worked["gold"], json!(70));
    assert_eq!(
        (
            user(&store, 1)["gold"].clone(),
            user(&store, 1)["energy"].clone()
        ),
        (json!(70), json!(70)),
        "Dotty worked"
    );
    assert_eq!(user(&store, 3)["gold"], json!(25), "the player did not");
    let ignored = act_as(&store, 4, "ignore_battle", json!({"battle_id": 1})).unwrap();
    assert_eq!(ignored["ignored"], json!(true));
    let unknown = act_as(&store, 1, "drop_everything", json!({})).unwrap_err();
    assert_eq!(
        unknown.to_string(),
        StoreError::Rule("there is no action drop_everything".into()).to_string()
    );
}

#[test]
fn one_player_cannot_act_as_anothers_agent() {
    let store = world();
    // Dotty's own player owns no agent: not Brannoc, whom the seeded player owns.
    familiar::world::functions::play_as(&store, 1).unwrap();
    let before = user(&store, 2);
    let refused = act_as(&store, 2, "do_work", json!({"job": "mining"})).unwrap_err();
    assert!(
        matches!(&refused, StoreError::PermissionDenied(m) if m == "you do not own agent 2"),
        "{refused}"
    );
    assert_eq!(user(&store, 2), before, "Brannoc's rows are untouched");
    // Acting as oneself is allowed.
    assert!(act_as(&store, 1, "do_work", json!({"job": "farming"})).is_ok());
}

#[test]
fn a_residents_tools_act_as_the_agent_through_its_owner() {
    use familiar::world::residents::resident;
    use familiar::world::triggers::agents;
    let store = world();
    familiar::world::functions::play_as(&store, familiar::world::PLAYER_ID).unwrap();
    let shared: Rc<dyn Store> = store.clone();
    let mira = agents().into_iter().find(|a| a.name == "Mira").unwrap();
    let agent = resident(&mira, &shared, None);
    let call = familiar::llm::message::ToolCall {
        id: "c1".into(),
        name: "do_work".into(),
        arguments: json!({"job": "farming"}).to_string().into(),
    };
    let context = familiar::tool::CallContext {
        idempotency_key: Some("mira-work".into()),
        approved: false,
        caller: None,
    };
    let done = block_on(agent.tools.call(&call, context)).unwrap();
    assert_eq!(done["gold"], json!(30));
    assert_eq!(user(&store, 4)["energy"], json!(35));
    assert_eq!(user(&store, 3)["energy"], json!(100));
}
