//! Communities: posting and voting need membership, a fighter cannot change sides by
//! changing communities, and a member abstains once while a proposal keeps its
//! description.

use super::*;

#[test]
fn posting_and_voting_in_a_community_need_its_membership() {
    let store = newcomer();
    let posts = rows(&store, Select::from("posts")).len();
    let votes = rows(&store, Select::from("votes")).len();
    assert_eq!(
        refusal(call(
            &store,
            "create_post",
            json!({"content": "Vote no!", "community_id": 1})
        )),
        "you are not a member of community 1"
    );
    assert_eq!(
        refusal(call(
            &store,
            "vote_on_proposal",
            json!({"proposal_id": 1, "in_favour": false})
        )),
        "you are not a member of community 1"
    );
    assert_eq!(
        refusal(call(
            &store,
            "create_post",
            json!({"content": "Hi", "community_id": 99})
        )),
        "there is no community 99"
    );
    assert_eq!(rows(&store, Select::from("posts")).len(), posts, "no post");
    assert_eq!(rows(&store, Select::from("votes")).len(), votes, "no vote");

    // A post to no community is anyone's; joining opens the community's.
    call(&store, "create_post", json!({"content": "Hello, town."})).unwrap();
    call(&store, "join_community", json!({"community_id": 1})).unwrap();
    let post = call(
        &store,
        "create_post",
        json!({"content": "Lit.", "community_id": 1}),
    );
    assert_eq!(post.unwrap()["community_id"], json!(1));
    let vote = call(
        &store,
        "vote_on_proposal",
        json!({"proposal_id": 1, "in_favour": true}),
    );
    assert_eq!(vote.unwrap()["in_favour"], json!(true));

    // Once out, neither again.
    call(&store, "leave_community", json!({"community_id": 1})).unwrap();
    assert_eq!(
        refusal(call(
            &store,
            "create_post",
            json!({"content": "Still here", "community_id": 1})
        )),
        "you are not a member of community 1"
    );
}

#[test]
fn a_fighter_cannot_change_sides_by_changing_communities() {
    let store = world();
    familiar::world::functions::play_as(&store, 3).unwrap();
    let battle = || {
        rows(&store, Select::from("battles").eq("id", 1))
            .pop()
            .unwrap()
    };
    let before = battle();
    // The player fought for the Lantern Guild (side 1); now of the Ashen Circle only.
    call(&store, "join_community", json!({"community_id": 2})).unwrap();
    call(&store, "leave_community", json!({"community_id": 1})).unwrap();
    assert_eq!(
        refusal(call(
            &store,
            "join_battle",
            json!({"battle_id": 1, "energy": 10})
        )),
        "you fight for side 1 of battle 1; you cannot change sides"
    );
    assert_eq!(battle(), before, "no damage to either side");
    assert_eq!(int(&user(&store, 3), "energy"), 100, "no energy spent");
}

#[test]
fn a_member_abstains_once_and_a_proposal_keeps_its_description() {
    let store = world();
    familiar::world::functions::play_as(&store, familiar::world::PLAYER_ID).unwrap();
    let abstain = |proposal: i64| {
        let mut args = Row::new();
        args.insert("proposal_id".into(), json!(proposal));
        args.insert("key".into(), Value::Null);
        block_on(store.rpc(&Rpc {
            function: "abstain_from_vote".into(),
            args,
        }))
    };
    let mut made = Row::new();
    made.insert("community_id".into(), json!(1));
    made.insert("title".into(), json!("A well for the tavern"));
    made.insert("description".into(), json!("Dig a well behind the tavern."));
    made.insert("key".into(), Value::Null);
    let made = block_on(store.rpc(&Rpc {
        function: "create_proposal".into(),
        args: made,
    }))
    .unwrap();
    assert_eq!(made["description"], json!("Dig a well behind the tavern."));
    let id = made["id"].as_i64().unwrap();
    let described = rows(
        &store,
        Select::from("proposal_descriptions").eq("proposal_id", id),
    );
    assert_eq!(described.len(), 1);
    assert!(abstain(id).is_ok());
    assert_eq!(
        refusal(abstain(id)),
        format!("you already voted on proposal {id}")
    );
    // The player voted on proposal 1 already: no abstaining after a vote.
    assert_eq!(refusal(abstain(1)), "you already voted on proposal 1");
    assert_eq!(rows(&store, Select::from("abstentions")).len(), 1);
}
