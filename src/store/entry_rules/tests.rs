use super::*;
use crate::ids::ClientMsgId;

fn entry(change: Change, sender: &str) -> NewEntry {
    NewEntry {
        sender_id: UserId::parse(sender).expect("user"),
        channel_id: ChannelId::parse("room").expect("channel"),
        client_msg_id: ClientMsgId::parse("k").expect("key"),
        body: String::new(),
        change,
        mentions: Mentions::default(),
        origin: Default::default(),
        attachments: Vec::new(),
    }
}

/// The §8 rules alone: a sender with `role`, no moderation in force.
fn judge(send: &NewEntry, role: Option<Role>, target: Option<&TargetState>) -> Option<EntryOutcome> {
    refusal(
        send,
        role.map(SenderState::member).as_ref(),
        &ChannelRules::default(),
        target,
        0,
    )
}

/// A stored message of `olive` at ts 100 mentioning `mentions` (and all).
fn stored(mentions: &[&str], all: bool, kind: EntryKind) -> Entry {
    let uid = |u: &str| UserId::parse(u).expect("user");
    Entry {
        message_id: uuid::Uuid::now_v7(),
        channel_id: ChannelId::parse("room").expect("channel"),
        sender_id: uid("olive"),
        client_msg_id: ClientMsgId::parse("k").expect("key"),
        by_admin: false,
        via_http: false,
        seq: 1,
        body: "hi".into(),
        ts: 100,
        kind,
        target_id: None,
        emoji: None,
        add: None,
        edited_body: None,
        edited_at: None,
        deleted: false,
        expired: false,
        noop: false,
        reactions: Vec::new(),
        reply_to: None,
        thread_id: None,
        reply_preview: None,
        thread: None,
        mentions: mentions.iter().map(|u| uid(u)).collect(),
        mention_all: all,
        mentions_asked: None,
        attachments: Vec::new(),
    }
}

#[test]
fn who_is_notified_follows_the_setting_the_mentions_the_snooze_and_blocks() {
    use crate::protocol::Notify;
    let bob = UserId::parse("bob").expect("user");
    let set = |notify, snooze_until| ChannelSettings { notify, snooze_until };
    let plain = stored(&[], false, EntryKind::Message);
    let to_bob = stored(&["bob"], false, EntryKind::Message);
    let to_all = stored(&[], true, EntryKind::Message);
    let reaction = stored(&[], false, EntryKind::Reaction);
    let cases = [
        (&plain, set(Notify::All, None), false, true),
        (&plain, set(Notify::Mentions, None), false, false),
        (&to_bob, set(Notify::Mentions, None), false, true),
        (&to_all, set(Notify::Mentions, None), false, true),
        (&to_bob, set(Notify::None, None), false, false),
        (&plain, set(Notify::All, Some(101)), false, false),
        (&plain, set(Notify::All, Some(100)), false, true),
        (&to_bob, set(Notify::All, None), true, false),
        (&reaction, set(Notify::All, None), false, false),
    ];
    for (n, (message, settings, blocks, want)) in cases.into_iter().enumerate() {
        assert_eq!(wants_notification(message, &bob, settings, blocks), want, "case {n}");
    }
}

#[test]
fn mentions_keep_members_once_and_rows_skip_the_sender_and_mentions_of_all() {
    let uid = |u: &str| UserId::parse(u).expect("user");
    let members = vec![uid("amy"), uid("bob"), uid("olive")];
    let asked = Mentions {
        users: vec![uid("olive"), uid("zed"), uid("bob"), uid("bob")],
        all: false,
    };
    assert_eq!(kept_mentions(&asked, &members), vec![uid("bob"), uid("olive")]);
    let message = stored(&["bob", "olive"], false, EntryKind::Message);
    assert_eq!(mention_rows(&message).collect::<Vec<_>>(), vec![&uid("bob")]);
    let to_all = stored(&["bob"], true, EntryKind::Message);
    assert_eq!(mention_rows(&to_all).count(), 0);
    let member = refusal(
        &NewEntry {
            mentions: Mentions {
                users: Vec::new(),
                all: true,
            },
            ..entry(Change::Message, "amy")
        },
        Some(&SenderState::member(Role::Member)),
        &ChannelRules::default(),
        None,
        0,
    );
    assert_eq!(member, Some(EntryOutcome::MentionAllForbidden));
    let moderator = refusal(
        &NewEntry {
            mentions: Mentions {
                users: Vec::new(),
                all: true,
            },
            ..entry(Change::Message, "amy")
        },
        Some(&SenderState::member(Role::Moderator)),
        &ChannelRules::default(),
        None,
        0,
    );
    assert_eq!(moderator, None);
}

fn target(kind: EntryKind, deleted: bool, channel: &str, sender: &str) -> TargetState {
    TargetState {
        kind,
        deleted,
        channel_id: ChannelId::parse(channel).expect("channel"),
        sender_id: UserId::parse(sender).expect("user"),
        thread_id: None,
        preview: String::new(),
        participants: Vec::new(),
    }
}

#[test]
fn references_are_checked_replyto_first_then_the_thread() {
    use super::super::References;
    let (a, b) = (uuid::Uuid::from_u128(1), uuid::Uuid::from_u128(2));
    let both = entry(
        References {
            reply_to: Some(a),
            thread_id: Some(b),
        }
        .change(),
        "alice",
    );
    let fine = target(EntryKind::Message, false, "room", "bob");
    assert!(reference_refusal(&both, Some(&fine), Some(&fine)).is_none());
    let not_found = |r| Some(EntryOutcome::ReferenceNotFound(r));
    assert_eq!(reference_refusal(&both, None, None), not_found(Reference::ReplyTo));
    assert_eq!(
        reference_refusal(&both, Some(&fine), None),
        not_found(Reference::ThreadId)
    );
    let deleted = target(EntryKind::Message, true, "room", "bob");
    assert_eq!(
        reference_refusal(&both, Some(&deleted), Some(&fine)),
        not_found(Reference::ReplyTo)
    );
    let reaction = target(EntryKind::Reaction, false, "room", "bob");
    assert_eq!(
        reference_refusal(&both, Some(&fine), Some(&reaction)),
        not_found(Reference::ThreadId)
    );
    let elsewhere = target(EntryKind::Message, false, "other", "bob");
    assert!(matches!(
        reference_refusal(&both, Some(&elsewhere), Some(&fine)),
        Some(EntryOutcome::ReferenceInvalid(Reference::ReplyTo, _))
    ));
    let mut reply = fine.clone();
    reply.thread_id = Some(a);
    // A thread reply may be quoted, but is no root.
    assert!(reference_refusal(&both, Some(&reply), Some(&fine)).is_none());
    assert!(matches!(
        reference_refusal(&both, Some(&fine), Some(&reply)),
        Some(EntryOutcome::ReferenceInvalid(Reference::ThreadId, _))
    ));
    // A deleted root's thread is read, not answered.
    let room = ChannelId::parse("room").expect("channel");
    assert!(thread_root_refusal(&room, Some(&deleted)).is_none());
    assert_eq!(thread_root_refusal(&room, None), not_found(Reference::ThreadId));
    assert!(thread_root_refusal(&room, Some(&reply)).is_some());
}

#[test]
fn a_thread_keeps_its_first_ten_distinct_participants() {
    let mut participants = Vec::new();
    let user = |n: usize| UserId::parse(&format!("u{n}")).expect("user");
    assert!(joins_thread(&mut participants, &user(0)));
    assert!(!joins_thread(&mut participants, &user(0)), "once each");
    for n in 1..20 {
        joins_thread(&mut participants, &user(n));
    }
    assert_eq!(participants, (0..10).map(user).collect::<Vec<_>>());
}

#[test]
fn a_preview_shows_the_current_text_until_deleted() {
    let mut quoted = target(EntryKind::Message, false, "room", "bob");
    quoted.edited(&"é".repeat(150));
    assert_eq!(quoted.reply_preview().body, "é".repeat(100));
    quoted.erase();
    let preview = quoted.reply_preview();
    assert_eq!((preview.body.as_str(), preview.deleted), ("", true));
}

#[test]
fn a_message_needs_only_membership() {
    let send = entry(Change::Message, "alice");
    assert!(judge(&send, Some(Role::Member), None).is_none());
    assert!(matches!(judge(&send, None, None), Some(EntryOutcome::Forbidden)));
}

#[test]
fn an_entrys_checks_run_in_the_contracts_order() {
    let t = uuid::Uuid::from_u128(1);
    let edit = entry(Change::Edit { target: t }, "alice");
    let mine = target(EntryKind::Message, false, "room", "alice");
    // The target's own refusals come before membership.
    assert!(matches!(judge(&edit, None, None), Some(EntryOutcome::TargetNotFound)));
    let not_a_message = target(EntryKind::Reaction, false, "room", "alice");
    assert!(matches!(
        judge(&edit, None, Some(&not_a_message)),
        Some(EntryOutcome::TargetNotAMessage)
    ));
    let deleted = target(EntryKind::Message, true, "room", "alice");
    assert!(matches!(
        judge(&edit, None, Some(&deleted)),
        Some(EntryOutcome::TargetNotFound)
    ));
    assert!(matches!(judge(&edit, None, Some(&mine)), Some(EntryOutcome::Forbidden)));
    let elsewhere = target(EntryKind::Message, false, "other", "alice");
    assert!(matches!(
        judge(&edit, Some(Role::Member), Some(&elsewhere)),
        Some(EntryOutcome::Forbidden)
    ));
    assert!(judge(&edit, Some(Role::Member), Some(&mine)).is_none());
    // Only the sender edits or deletes; any member reacts.
    let bobs = target(EntryKind::Message, false, "room", "bob");
    assert!(matches!(
        judge(&edit, Some(Role::Member), Some(&bobs)),
        Some(EntryOutcome::NotTheSender)
    ));
    let delete = entry(Change::Delete { target: t }, "alice");
    assert!(matches!(
        judge(&delete, Some(Role::Member), Some(&bobs)),
        Some(EntryOutcome::NotTheSender)
    ));
    let react = entry(
        Change::React {
            target: t,
            emoji: "👍".into(),
            add: true,
        },
        "alice",
    );
    assert!(judge(&react, Some(Role::Member), Some(&bobs)).is_none());
    // A moderator or owner deletes anyone's message, edits only its own.
    for role in [Role::Moderator, Role::Owner] {
        assert!(judge(&delete, Some(role), Some(&bobs)).is_none(), "{role}");
        assert!(matches!(
            judge(&edit, Some(role), Some(&bobs)),
            Some(EntryOutcome::NotTheSender)
        ));
    }
}

#[test]
fn reactions_move_holders_and_counts() {
    assert!(reaction_changes(false, true));
    assert!(!reaction_changes(true, true), "an add of a held reaction is a no-op");
    assert!(!reaction_changes(false, false), "a remove of one not held is a no-op");
    assert_eq!(next_count(None, true, 7), Some((1, 7)));
    assert_eq!(next_count(Some((1, 7)), true, 9), Some((2, 7)), "first use kept");
    assert_eq!(next_count(Some((2, 7)), false, 9), Some((1, 7)));
    assert_eq!(next_count(Some((1, 7)), false, 9), None);
}

#[test]
fn an_add_of_a_new_emoji_at_the_bound_is_refused_a_held_one_is_not() {
    let t = uuid::Uuid::from_u128(1);
    let react = |emoji: &str, add: bool| {
        entry(
            Change::React {
                target: t,
                emoji: emoji.into(),
                add,
            },
            "alice",
        )
    };
    assert_eq!(added_reaction(&react("x", true)), Some((t, "x")));
    assert_eq!(added_reaction(&react("x", false)), None, "a remove is never judged");
    assert_eq!(added_reaction(&entry(Change::Delete { target: t }, "alice")), None);
    let held = |distinct, emoji_held| ReactionsHeld { distinct, emoji_held };
    assert_eq!(reaction_refusal(held(2, false), 3), None, "room for one more");
    assert_eq!(
        reaction_refusal(held(3, false), 3),
        Some(EntryOutcome::TooManyReactions { most: 3 })
    );
    assert_eq!(
        reaction_refusal(held(7, false), 3),
        Some(EntryOutcome::TooManyReactions { most: 3 }),
        "stored over the bound"
    );
    assert_eq!(reaction_refusal(held(3, true), 3), None, "a +1 of a held emoji");
    assert_eq!(reaction_refusal(held(7, true), 3), None);
}

#[test]
fn a_mute_in_force_refuses_all_but_a_delete_until_it_ends() {
    let t = uuid::Uuid::from_u128(1);
    let mine = target(EntryKind::Message, false, "room", "alice");
    let muted = SenderState {
        muted_until: Some(10_000),
        ..SenderState::member(Role::Member)
    };
    let rules = ChannelRules::default();
    let react = entry(
        Change::React {
            target: t,
            emoji: "x".into(),
            add: true,
        },
        "alice",
    );
    for send in [
        entry(Change::Message, "alice"),
        entry(Change::Edit { target: t }, "alice"),
        react,
    ] {
        assert_eq!(
            refusal(&send, Some(&muted), &rules, Some(&mine), 9_000),
            Some(EntryOutcome::Muted { retry_after_ms: 1_000 }),
            "{send:?}"
        );
        assert_eq!(refusal(&send, Some(&muted), &rules, Some(&mine), 10_000), None, "ended");
    }
    let delete = entry(Change::Delete { target: t }, "alice");
    assert_eq!(refusal(&delete, Some(&muted), &rules, Some(&mine), 9_000), None);
    // The §8 refusals come first.
    let bobs = target(EntryKind::Message, false, "room", "bob");
    assert_eq!(
        refusal(
            &entry(Change::Edit { target: t }, "alice"),
            Some(&muted),
            &rules,
            Some(&bobs),
            0
        ),
        Some(EntryOutcome::NotTheSender)
    );
}

#[test]
fn an_announcement_channel_takes_messages_from_moderators_only() {
    let rules = ChannelRules {
        posting_role: Role::Moderator,
        slow_mode_ms: 0,
    };
    let send = entry(Change::Message, "alice");
    let member = SenderState::member(Role::Member);
    assert_eq!(
        refusal(&send, Some(&member), &rules, None, 0),
        Some(EntryOutcome::ReadOnly)
    );
    for role in [Role::Moderator, Role::Owner] {
        assert_eq!(refusal(&send, Some(&SenderState::member(role)), &rules, None, 0), None);
    }
    // A member still reacts.
    let t = uuid::Uuid::from_u128(1);
    let react = entry(
        Change::React {
            target: t,
            emoji: "x".into(),
            add: true,
        },
        "alice",
    );
    let theirs = target(EntryKind::Message, false, "room", "olive");
    assert_eq!(refusal(&react, Some(&member), &rules, Some(&theirs), 0), None);
    // A member's own older message: no edit (as no send), a delete still.
    let own = target(EntryKind::Message, false, "room", "alice");
    let edit = entry(Change::Edit { target: t }, "alice");
    assert_eq!(
        refusal(&edit, Some(&member), &rules, Some(&own), 0),
        Some(EntryOutcome::ReadOnly)
    );
    let moderator = SenderState::member(Role::Moderator);
    assert_eq!(refusal(&edit, Some(&moderator), &rules, Some(&own), 0), None);
    let delete = entry(Change::Delete { target: t }, "alice");
    assert_eq!(refusal(&delete, Some(&member), &rules, Some(&own), 0), None);
}

#[test]
fn slow_mode_spaces_a_members_messages_exactly() {
    let rules = ChannelRules {
        posting_role: Role::Member,
        slow_mode_ms: 5_000,
    };
    let send = entry(Change::Message, "alice");
    let posted = SenderState {
        last_message_ts: Some(100_000),
        ..SenderState::member(Role::Member)
    };
    assert_eq!(
        refusal(&send, Some(&posted), &rules, None, 101_000),
        Some(EntryOutcome::SlowMode { retry_after_ms: 4_000 })
    );
    assert_eq!(
        refusal(&send, Some(&posted), &rules, None, 104_999),
        Some(EntryOutcome::SlowMode { retry_after_ms: 1 })
    );
    assert_eq!(refusal(&send, Some(&posted), &rules, None, 105_000), None);
    let first = SenderState::member(Role::Member);
    assert_eq!(refusal(&send, Some(&first), &rules, None, 101_000), None);
    let moderator = SenderState {
        role: Role::Moderator,
        ..posted
    };
    assert_eq!(refusal(&send, Some(&moderator), &rules, None, 101_000), None);
}

#[test]
fn a_blocked_sender_is_refused() {
    let blocked = SenderState {
        blocked: true,
        ..SenderState::member(Role::Member)
    };
    let send = entry(Change::Message, "alice");
    assert_eq!(
        refusal(&send, Some(&blocked), &ChannelRules::default(), None, 0),
        Some(EntryOutcome::Blocked)
    );
}
