//! The community's rules: messages and replies, posts, joining and leaving
//! communities, proposals and votes (the Rust twin of their functions in
//! `migrations/0006_actions.sql`).

use serde_json::{Value, json};

use super::{Actor, Outcome, exists, first, insert, int, is_member, rule, text};
use crate::store::{Delete, Filtered, Row, Select, StoreError};
use crate::world::actions::{
    AbstainArgs, MessageArgs, PostArgs, ProposalArgs, ReplyArgs, VoteArgs,
};
use crate::world::data::CommunityArgs;

pub(super) fn send_message(actor: &Actor, args: MessageArgs) -> Outcome {
    let content = text(&args.content, "message", 2000)?;
    if !exists(actor.store, Select::from("users").eq("id", args.user_id))? {
        return Err(rule(format!("there is no user {}", args.user_id)));
    }
    let mut message = Row::new();
    message.insert("sender_id".into(), json!(actor.id()));
    message.insert("receiver_id".into(), json!(args.user_id));
    message.insert("content".into(), json!(content));
    insert(actor.store, "messages", message).map(Value::Object)
}

pub(super) fn reply_to_message(actor: &Actor, args: ReplyArgs) -> Outcome {
    let content = text(&args.content, "reply", 2000)?;
    let me = actor.id();
    let original = first(
        actor.store,
        Select::from("messages").eq("id", args.message_id),
    )?
    .filter(|m| int(m, "sender_id") == me || int(m, "receiver_id") == me)
    .ok_or_else(|| rule(format!("there is no message {}", args.message_id)))?;
    let to = if int(&original, "sender_id") == me {
        int(&original, "receiver_id")
    } else {
        int(&original, "sender_id")
    };
    let mut reply = Row::new();
    reply.insert("sender_id".into(), json!(me));
    reply.insert("receiver_id".into(), json!(to));
    reply.insert("reply_to".into(), json!(args.message_id));
    reply.insert("content".into(), json!(content));
    insert(actor.store, "messages", reply).map(Value::Object)
}

/// A post to no community is anyone's; one in a community needs its membership.
pub(super) fn create_post(actor: &Actor, args: PostArgs) -> Outcome {
    let content = text(&args.content, "post", 2000)?;
    if let Some(community) = args.community_id {
        if !exists(actor.store, Select::from("communities").eq("id", community))? {
            return Err(rule(format!("there is no community {community}")));
        }
        if !is_member(actor, community)? {
            return Err(not_a_member(community));
        }
    }
    let mut post = Row::new();
    post.insert("author_id".into(), json!(actor.id()));
    post.insert("community_id".into(), json!(args.community_id));
    post.insert("content".into(), json!(content));
    insert(actor.store, "posts", post).map(Value::Object)
}

pub(super) fn join_community(actor: &Actor, args: CommunityArgs) -> Outcome {
    let community = first(
        actor.store,
        Select::from("communities")
            .columns("id,name")
            .eq("id", args.community_id),
    )?
    .ok_or_else(|| rule(format!("there is no community {}", args.community_id)))?;
    if is_member(actor, args.community_id)? {
        let name = community.get("name").and_then(Value::as_str).unwrap_or("");
        return Err(rule(format!("you already belong to {name}")));
    }
    let mut member = Row::new();
    member.insert("user_id".into(), json!(actor.id()));
    member.insert("community_id".into(), json!(args.community_id));
    insert(actor.store, "user_communities", member)?;
    Ok(json!({ "joined": community }))
}

pub(super) fn leave_community(actor: &Actor, args: CommunityArgs) -> Outcome {
    let membership = Delete {
        table: "user_communities".into(),
        filters: Vec::new(),
        returning: true,
    }
    .eq("user_id", actor.id())
    .eq("community_id", args.community_id);
    if actor.store.run_delete(&membership)?.is_empty() {
        return Err(rule(format!(
            "you are not a member of community {}",
            args.community_id
        )));
    }
    Ok(json!({ "left": args.community_id }))
}

pub(super) fn vote_on_proposal(actor: &Actor, args: VoteArgs) -> Outcome {
    let proposal = first(
        actor.store,
        Select::from("proposals").eq("id", args.proposal_id),
    )?
    .ok_or_else(|| rule(format!("there is no proposal {}", args.proposal_id)))?;
    let community = int(&proposal, "community_id");
    if !is_member(actor, community)? {
        return Err(not_a_member(community));
    }
    if proposal.get("status") != Some(&json!("open")) {
        return Err(rule(format!("proposal {} is closed", args.proposal_id)));
    }
    let voted = Select::from("votes")
        .eq("proposal_id", args.proposal_id)
        .eq("user_id", actor.id());
    if exists(actor.store, voted)? {
        return Err(rule(format!(
            "you already voted on proposal {}",
            args.proposal_id
        )));
    }
    let mut vote = Row::new();
    vote.insert("proposal_id".into(), json!(args.proposal_id));
    vote.insert("user_id".into(), json!(actor.id()));
    vote.insert("in_favour".into(), json!(args.in_favour));
    insert(actor.store, "votes", vote).map(Value::Object)
}

pub(super) fn create_proposal(actor: &Actor, args: ProposalArgs) -> Outcome {
    let title = text(&args.title, "title", 200)?;
    if !is_member(actor, args.community_id)? {
        return Err(not_a_member(args.community_id));
    }
    let description = match &args.description {
        Some(description) => Some(text(description, "description", 2000)?),
        None => None,
    };
    let mut proposal = Row::new();
    proposal.insert("community_id".into(), json!(args.community_id));
    proposal.insert("author_id".into(), json!(actor.id()));
    proposal.insert("title".into(), json!(title));
    let mut made = insert(actor.store, "proposals", proposal)?;
    if let Some(description) = description {
        let mut row = Row::new();
        row.insert("proposal_id".into(), json!(int(&made, "id")));
        row.insert("description".into(), json!(description));
        insert(actor.store, "proposal_descriptions", row)?;
        made.insert("description".into(), json!(description));
    }
    Ok(Value::Object(made))
}

/// `migrations/0009_world_triggers.sql`'s `abstain_from_vote`.
pub(super) fn abstain_from_vote(actor: &Actor, args: AbstainArgs) -> Outcome {
    let proposal = first(
        actor.store,
        Select::from("proposals").eq("id", args.proposal_id),
    )?
    .ok_or_else(|| rule(format!("there is no proposal {}", args.proposal_id)))?;
    let community = int(&proposal, "community_id");
    if !is_member(actor, community)? {
        return Err(not_a_member(community));
    }
    if proposal.get("status") != Some(&json!("open")) {
        return Err(rule(format!("proposal {} is closed", args.proposal_id)));
    }
    let mine = |table: &str| {
        Select::from(table)
            .eq("proposal_id", args.proposal_id)
            .eq("user_id", actor.id())
    };
    if exists(actor.store, mine("votes"))? || exists(actor.store, mine("abstentions"))? {
        return Err(rule(format!(
            "you already voted on proposal {}",
            args.proposal_id
        )));
    }
    let mut abstained = Row::new();
    abstained.insert("proposal_id".into(), json!(args.proposal_id));
    abstained.insert("user_id".into(), json!(actor.id()));
    insert(actor.store, "abstentions", abstained).map(Value::Object)
}

fn not_a_member(community: i64) -> StoreError {
    rule(format!("you are not a member of community {community}"))
}
