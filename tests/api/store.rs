//! Store conformance suite: the same cases against PostgreSQL and SQLite.

use chatd::ids::{ChannelId, ClientMsgId, UserId};
use chatd::permissions::{Denied, Role};
use chatd::store::{EntryOutcome, MemberEvent, MembershipChange, NewEntry, Store, StoreError};

use chatd_testkit::on_both_stores;
use chatd_testkit::{Backend, TestDb};

on_both_stores!(
    channels_and_members,
    batch_assigns_gapless_seqs_and_resolves_keys,
    ts_never_decreases_when_the_clock_steps_back,
    pages_report_has_more_exactly,
    watermarks_only_move_forward,
    bodies_round_trip_byte_identical,
    migrations_are_idempotent,
    large_batches_over_many_channels,
    batches_mixing_new_sends_and_stored_keys,
    concurrent_batches_over_overlapping_channels_neither_deadlock_nor_gap,
    batches_racing_for_the_same_keys_in_opposite_orders_do_not_deadlock,
    a_member_is_recorded_with_the_seq_it_joined_at,
    a_members_change_is_judged_by_the_roles_under_the_channel_lock,
    a_membership_change_says_what_changed_and_at_which_seq,
    one_channels_state_is_its_entry_of_channel_states,
);

mod postgres_only {
    use super::*;

    /// Membership is checked against the member list in byte order, whatever
    /// collation the database sorts text with: a member must never be
    /// refused because `ORDER BY user_id` put `Bob` after `alice`.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn members_are_recognised_under_an_icu_collation() {
        if chatd_testkit::postgres_url().is_none() {
            return;
        }
        let db = TestDb::postgres_with("TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'").await;
        let store = db.store().await;
        store.migrate().await.expect("migrate");
        let names = [
            "alice", "Bob", "carol", "Dave", "erin", "Frank", "a-c", "ab", "Zed", "zoe",
        ];
        let members: Vec<_> = names.iter().map(|n| user(n)).collect();
        store.create_channel(&ch("room"), &members, 1).await.expect("create");
        for (n, name) in names.iter().enumerate() {
            let out = store
                .write_batch(&[send(name, "room", &format!("k{n}"), "hi")], 10)
                .await
                .expect("batch");
            assert!(
                matches!(&out.outcomes[0], EntryOutcome::Stored(m) if m.seq == n as i64 + 1),
                "{name}: {:?}",
                out.outcomes[0]
            );
        }
        let all: Vec<_> = names
            .iter()
            .enumerate()
            .map(|(n, name)| send(name, "room", &format!("b{n}"), "hi"))
            .collect();
        let out = store.write_batch(&all, 20).await.expect("batch");
        for (name, outcome) in names.iter().zip(&out.outcomes) {
            assert!(matches!(outcome, EntryOutcome::Stored(_)), "{name}: {outcome:?}");
        }
        let channel = store.channel(&ch("room")).await.expect("read").expect("exists");
        let mut sorted = members.clone();
        sorted.sort();
        assert_eq!(channel.members, sorted, "members in byte order");

        // HELLO's channels are in byte order of the id too: under en-US,
        // `_c` and `ac` sorted before `Zc` (found by a hostile run).
        let ids = ["Zc", "ac", "_c", "-c", "room"];
        for id in &ids[..4] {
            store
                .create_channel(&ch(id), &[user("alice")], 1)
                .await
                .expect("create");
        }
        let states = store.channel_states(&user("alice")).await.expect("states");
        let got: Vec<&str> = states.iter().map(|s| s.channel_id.as_str()).collect();
        let mut want = ids.to_vec();
        want.sort_unstable();
        assert_eq!(got, want, "channel states in byte order of the id");
    }
}

/// The PostgreSQL set-based batch path against the per-row one, for
/// batches holding edits, deletes and reactions.
mod postgres_set_based_changes {
    use super::*;
    use chatd::store::{BatchOutcome, Change, Mentions, References};

    const EMOJIS: [&str; 3] = ["+1", "tada", "x"];
    const USERS: [&str; 4] = ["alice", "bob", "carol", "dave"];

    /// A small deterministic generator (xorshift64*), so a failure can be rerun.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// A send with targets named by label (an index into the seeded targets).
    #[derive(Clone)]
    enum Plan {
        Message,
        Edit(usize),
        Delete(usize),
        React(usize, &'static str, bool),
        /// A message quoting a target and/or answering in its thread (§14).
        Reply(Option<usize>, Option<usize>),
    }

    /// One database with channels `c1` (alice, bob, carol) and `c2` (alice,
    /// bob), and the targets seeded: messages of each member, and an edit
    /// (a target that is not a message). dave is in no channel.
    struct Side {
        store: Store,
        db: TestDb,
        /// Per label: the target's id and channel.
        targets: Vec<(uuid::Uuid, &'static str)>,
    }

    async fn side() -> Side {
        side_with(None).await
    }

    /// [`side`] with `max_reactions_per_message` at `most` (`None`: the default).
    async fn side_with(most: Option<usize>) -> Side {
        let (store, db) = open(Backend::Postgres).await;
        let store = match most {
            Some(most) => store.with_max_reactions_per_message(most),
            None => store,
        };
        store
            .create_channel(&ch("c1"), &[user("alice"), user("bob"), user("carol")], 1)
            .await
            .expect("c1");
        store
            .create_channel(&ch("c2"), &[user("alice"), user("bob")], 1)
            .await
            .expect("c2");
        let mut seed = Vec::new();
        for (i, (sender, channel)) in [
            ("alice", "c1"),
            ("bob", "c1"),
            ("carol", "c1"),
            ("alice", "c1"),
            ("alice", "c2"),
            ("bob", "c2"),
        ]
        .into_iter()
        .enumerate()
        {
            seed.push(send(sender, channel, &format!("seed{i}"), &format!("text {i}")));
        }
        let out = store.write_batch(&seed, 5).await.expect("seed");
        let mut targets: Vec<(uuid::Uuid, &'static str)> = out
            .outcomes
            .iter()
            .zip(["c1", "c1", "c1", "c1", "c2", "c2"])
            .map(|(o, c)| match o {
                EntryOutcome::Stored(m) => (m.message_id, c),
                other => panic!("seed: {other:?}"),
            })
            .collect();
        let edit = NewEntry {
            change: Change::Edit { target: targets[0].0 },
            ..send("alice", "c1", "seed-edit", "edited 0")
        };
        let out = store
            .write_batch_on_path(&[edit], 6, false)
            .await
            .expect("edit")
            .expect("rows");
        match &out.outcomes[0] {
            EntryOutcome::Stored(m) => targets.push((m.message_id, "c1")),
            other => panic!("seed edit: {other:?}"),
        }
        // A target that was never stored.
        targets.push((uuid::Uuid::from_u128(0x0190_0000_0000_7000_8000_0000_0000_0042), "c1"));
        // A reply in the thread of target 0 (a root), so a thread's reply
        // can be named as a root (refused) and quoted (fine).
        let reply = NewEntry {
            change: References {
                reply_to: None,
                thread_id: Some(targets[0].0),
            }
            .change(),
            ..send("bob", "c1", "seed-reply", "in thread 0")
        };
        let out = store
            .write_batch_on_path(&[reply], 7, false)
            .await
            .expect("reply")
            .expect("rows");
        match &out.outcomes[0] {
            EntryOutcome::Stored(m) => targets.push((m.message_id, "c1")),
            other => panic!("seed reply: {other:?}"),
        }
        Side { store, db, targets }
    }

    /// Moderation (§17) on a side: c1 in slow mode (3 ms, against the
    /// rounds' `now` of 100.. that step by 1 ms), bob muted in c1 until 120
    /// (the first rounds), c2 an announcement channel where alice moderates.
    async fn moderate(side: &Side) {
        let patch = |posting_role, slow_mode_ms| chatd::store::ChannelPatch {
            posting_role,
            slow_mode_ms,
            ..Default::default()
        };
        side.store
            .update_channel(&ch("c1"), &patch(None, Some(3)))
            .await
            .expect("slow");
        side.store
            .update_channel(&ch("c2"), &patch(Some(chatd::protocol::Role::Moderator), None))
            .await
            .expect("read only");
        for (channel, who, change) in [
            ("c1", "bob", MembershipChange::Mute(Some(120))),
            (
                "c2",
                "alice",
                MembershipChange::Add(Some(chatd::protocol::Role::Moderator)),
            ),
        ] {
            side.store
                .change_membership(&ch(channel), &user(who), change, None, 7)
                .await
                .expect("moderation");
        }
    }

    fn to_send(side: &Side, sender: &str, key: &str, plan: &Plan, channel: &str) -> NewEntry {
        let (change, channel, body) = match plan {
            Plan::Message => (Change::Message, channel, format!("body {key}")),
            Plan::Edit(t) => (
                Change::Edit {
                    target: side.targets[*t].0,
                },
                side.targets[*t].1,
                format!("edit {key}"),
            ),
            Plan::Delete(t) => (
                Change::Delete {
                    target: side.targets[*t].0,
                },
                side.targets[*t].1,
                String::new(),
            ),
            Plan::React(t, emoji, add) => (
                Change::React {
                    target: side.targets[*t].0,
                    emoji: (*emoji).to_owned(),
                    add: *add,
                },
                side.targets[*t].1,
                String::new(),
            ),
            Plan::Reply(quote, thread) => (
                References {
                    reply_to: quote.map(|t| side.targets[t].0),
                    thread_id: thread.map(|t| side.targets[t].0),
                }
                .change(),
                channel,
                format!("reply {key}"),
            ),
        };
        NewEntry {
            change,
            ..send(sender, channel, key, &body)
        }
    }

    /// An outcome with the ids that differ between databases (a new
    /// entry's UUIDv7, a seeded target's) replaced by names that do not.
    fn normal(side: &Side, outcome: &EntryOutcome) -> String {
        let label = |id: uuid::Uuid| {
            side.targets
                .iter()
                .position(|(t, _)| *t == id)
                .map_or_else(|| "?".to_owned(), |i| format!("t{i}"))
        };
        match outcome {
            EntryOutcome::Stored(m) | EntryOutcome::Duplicate(m) => {
                let mut m = m.clone();
                let target = m.target_id.map(label);
                let refs = (m.reply_to.map(label), m.thread_id.map(label));
                m.message_id = uuid::Uuid::nil();
                m.target_id = None;
                m.reply_to = None;
                m.thread_id = None;
                let kind = if matches!(outcome, EntryOutcome::Stored(_)) {
                    "Stored"
                } else {
                    "Duplicate"
                };
                format!("{kind} {m:?} target={target:?} refs={refs:?}")
            }
            other => format!("{other:?}"),
        }
    }

    /// The rows of messages, reactions and reaction_counts, with ids named
    /// by the key of the entry they point at.
    async fn tables(side: &Side) -> Vec<String> {
        let pool = sqlx::PgPool::connect(&side.db.url).await.expect("pool");
        let mut rows = Vec::new();
        for query in [
            "SELECT format('%L|%L|%L|%L|%L|%L|%L|%L|%L|%L|%L|%L|%L|%L', m.channel_id, m.seq, m.sender_id, \
             m.client_msg_id, m.body, m.ts, m.kind, t.sender_id || '/' || t.client_msg_id, m.emoji, m.op, \
             m.edited_body, m.edited_at, m.deleted, m.noop) || format('|%L|%L|%L|%L|%L|%L', \
             q.sender_id || '/' || q.client_msg_id, r.sender_id || '/' || r.client_msg_id, \
             m.reply_count, m.last_reply_at, m.last_reply_seq, m.participants) \
             FROM messages m LEFT JOIN messages t ON t.message_id = m.target_id \
             LEFT JOIN messages q ON q.message_id = m.reply_to LEFT JOIN messages r ON r.message_id = m.thread_id \
             ORDER BY m.channel_id, m.seq",
            "SELECT format('reaction %L|%L|%L', t.sender_id || '/' || t.client_msg_id, r.emoji, r.user_id) \
             FROM reactions r LEFT JOIN messages t ON t.message_id = r.message_id ORDER BY 1",
            "SELECT format('count %L|%L|%L|%L', t.sender_id || '/' || t.client_msg_id, c.emoji, c.count, c.first_seq) \
             FROM reaction_counts c LEFT JOIN messages t ON t.message_id = c.message_id ORDER BY 1",
            "SELECT format('channel %L|%L|%L', channel_id, last_seq, last_ts) FROM channels ORDER BY 1",
            "SELECT format('limits %L|%L|%L|%L', channel_id, user_id, muted_until, last_message_ts) \
             FROM member_limits ORDER BY 1",
            "SELECT format('mentioned %L|%L|%L|%L|%L', channel_id, seq, mentions, mention_all, mentions_asked) \
             FROM messages ORDER BY 1",
            "SELECT format('mention %L|%L|%L', user_id, channel_id, seq) FROM mentions ORDER BY 1",
        ] {
            let part: Vec<String> = sqlx::query_scalar(query).fetch_all(&pool).await.expect("tables");
            rows.extend(part);
        }
        pool.close().await;
        rows
    }

    fn random_plan(rng: &mut Rng, targets: usize) -> Plan {
        // Targets: mostly the first four (repeats), sometimes any.
        let target = if rng.below(4) == 0 {
            rng.below(targets)
        } else {
            rng.below(4)
        };
        let maybe = |rng: &mut Rng| (rng.below(2) == 0).then(|| rng.below(targets));
        match rng.below(24) {
            20 | 21 => Plan::Reply(Some(target), maybe(rng)),
            22 | 23 => Plan::Reply(maybe(rng), Some(target)),
            0..=5 => Plan::Message,
            6..=8 => Plan::Edit(target),
            9 => Plan::Delete(target),
            10..=15 => Plan::React(target, EMOJIS[rng.below(EMOJIS.len())], true),
            _ => Plan::React(target, EMOJIS[rng.below(EMOJIS.len())], false),
        }
    }

    /// Random mixed batches (sends, edits, deletes, reaction adds and
    /// removes, repeated targets, non-members, edits of someone else's
    /// message, targets unknown or not a message, now and then a key
    /// already stored) go through the set-based path on one database and
    /// the per-row path on another: every outcome and every row of
    /// messages, reactions, reaction_counts and channels is the same.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn random_mixed_batches_decide_as_the_per_row_path() {
        random_mixed_batches(None).await;
    }

    /// As [`random_mixed_batches_decide_as_the_per_row_path`], with
    /// `max_reactions_per_message` at 2 (of the three emoji): adds refused
    /// at the bound, and removes freeing a place, in the same batches.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn random_mixed_batches_under_a_reaction_bound_decide_as_the_per_row_path() {
        random_mixed_batches(Some(2)).await;
    }

    async fn random_mixed_batches(most: Option<usize>) {
        if chatd_testkit::postgres_url().is_none() {
            return;
        }
        let (sets, rows) = (side_with(most).await, side_with(most).await);
        moderate(&sets).await;
        moderate(&rows).await;
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut set_based = 0;
        let mut stored_keys: Vec<(usize, String)> = Vec::new();
        let mut seen: Vec<String> = Vec::new();
        let rounds = 40;
        for round in 0..rounds {
            let n = 1 + rng.below(25);
            let mut batch = Vec::new();
            for i in 0..n {
                let sender = rng.below(USERS.len());
                let plan = random_plan(&mut rng, sets.targets.len());
                let channel = if rng.below(3) == 0 { "c2" } else { "c1" };
                // Now and then a key stored by an earlier round (a retry:
                // the set-based path falls back, or answers a refused one).
                let key = match stored_keys.get(rng.below(stored_keys.len().max(1) * 30)) {
                    Some((s, k)) if *s == sender => k.clone(),
                    _ => format!("r{round}-{i}"),
                };
                // §16: a third of the messages mention some users (dave is
                // in no channel), one in four of those mention all (only
                // alice moderates, in c2).
                let mut mentions = Mentions::default();
                if matches!(plan, Plan::Message | Plan::Reply(..)) && rng.below(3) == 0 {
                    for _ in 0..1 + rng.below(3) {
                        mentions.users.push(user(USERS[rng.below(USERS.len())]));
                    }
                    mentions.all = rng.below(4) == 0;
                }
                batch.push((sender, key, plan, channel, mentions));
            }
            let make = |side: &Side| -> Vec<NewEntry> {
                batch
                    .iter()
                    .map(|(s, k, p, c, m)| NewEntry {
                        mentions: m.clone(),
                        ..to_send(side, USERS[*s], k, p, c)
                    })
                    .collect()
            };
            let now = 100 + round as i64;
            let a: BatchOutcome = match sets
                .store
                .write_batch_on_path(&make(&sets), now, true)
                .await
                .expect("sets")
            {
                Some(out) => {
                    set_based += 1;
                    out
                }
                None => sets
                    .store
                    .write_batch_on_path(&make(&sets), now, false)
                    .await
                    .expect("rows")
                    .expect("rows"),
            };
            let b = rows
                .store
                .write_batch_on_path(&make(&rows), now, false)
                .await
                .expect("rows")
                .expect("rows");
            let na: Vec<String> = a.outcomes.iter().map(|o| normal(&sets, o)).collect();
            let nb: Vec<String> = b.outcomes.iter().map(|o| normal(&rows, o)).collect();
            assert_eq!(na, nb, "round {round}: outcomes");
            seen.extend(na);
            assert_eq!(a.members, b.members, "round {round}: members");
            assert_eq!(tables(&sets).await, tables(&rows).await, "round {round}: tables");
            for (o, (s, k, _, _, _)) in b.outcomes.iter().zip(&batch) {
                if matches!(o, EntryOutcome::Stored(_)) {
                    stored_keys.push((*s, k.clone()));
                }
            }
        }
        assert!(
            set_based >= rounds / 2,
            "only {set_based} of {rounds} batches were set-based"
        );
        let all = tables(&rows).await;
        assert!(
            all.iter()
                .any(|r| r.split('|').rev().nth(3).is_some_and(|count| count != "'0'")),
            "no root with replies: the test proves nothing"
        );
        for expected in [
            "'reaction'",
            "'edit'",
            "'delete'",
            "reaction '",
            "count '",
            "limits 'c1'|'alice'",
            "mention '",
            "|'t'|",
        ] {
            assert!(
                all.iter().any(|r| r.contains(expected)),
                "no {expected} row: the test proves nothing"
            );
        }
        for expected in ["Muted", "SlowMode", "ReadOnly", "MentionAllForbidden"] {
            assert!(
                seen.iter().any(|o| o.starts_with(expected)),
                "no {expected} outcome: the test proves nothing"
            );
        }
        assert_eq!(
            seen.iter().any(|o| o.starts_with("TooManyReactions")),
            most.is_some(),
            "TooManyReactions outcomes exactly under a bound"
        );
    }

    /// A batch of replies stays on the set-based path (§14: no per-row
    /// fallback) and moves the root's summary: two replies in thread t0, a
    /// quote, the seeded reply (target 8) deleted, and references refused
    /// in the same batch.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_batch_of_replies_stays_on_the_set_based_path() {
        if chatd_testkit::postgres_url().is_none() {
            return;
        }
        let side = side().await;
        let batch = vec![
            to_send(&side, "alice", "a1", &Plan::Reply(None, Some(0)), "c1"),
            to_send(&side, "carol", "a2", &Plan::Reply(Some(1), Some(0)), "c1"),
            to_send(&side, "bob", "a3", &Plan::Delete(8), "c1"),
            to_send(&side, "bob", "a4", &Plan::Reply(Some(8), None), "c1"),
            to_send(&side, "bob", "a5", &Plan::Reply(None, Some(4)), "c1"),
            to_send(&side, "bob", "a6", &Plan::Reply(Some(0), None), "c1"),
        ];
        let out = side
            .store
            .write_batch_on_path(&batch, 60, true)
            .await
            .expect("batch")
            .expect("the set-based path decided");
        let o = &out.outcomes;
        assert!(matches!(&o[0], EntryOutcome::Stored(m) if m.thread_id == Some(side.targets[0].0)));
        match &o[1] {
            EntryOutcome::Stored(m) => {
                let preview = m.reply_preview.as_ref().expect("preview in the fan-out");
                assert_eq!((preview.sender_id.as_str(), preview.body.as_str()), ("bob", "text 1"));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(o[2], EntryOutcome::Stored(_)));
        assert_eq!(
            o[3],
            EntryOutcome::ReferenceNotFound(chatd::store::Reference::ReplyTo),
            "deleted earlier in the batch"
        );
        assert!(matches!(
            o[4],
            EntryOutcome::ReferenceInvalid(chatd::store::Reference::ThreadId, _)
        ));
        assert!(matches!(o[5], EntryOutcome::Stored(_)));
        let root = side
            .store
            .message(side.targets[0].0)
            .await
            .expect("read")
            .expect("root");
        let thread = root.thread.expect("a summary");
        let stored_seq = |i: usize| match &o[i] {
            EntryOutcome::Stored(m) => m.seq,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            (thread.reply_count, thread.last_reply_seq),
            (2, stored_seq(1)),
            "the seeded reply deleted, two added"
        );
        let participants: Vec<&str> = thread.participants.iter().map(|u| u.as_str()).collect();
        assert_eq!(participants, ["bob", "alice", "carol"]);
    }

    /// One batch on the set-based path: a delete makes a later edit and
    /// reaction of its target `TargetNotFound` and erases an edit made
    /// earlier in the batch; a reaction added then removed leaves nothing;
    /// a second add of a held reaction is a no-op entry.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_delete_earlier_in_a_set_based_batch_refuses_a_later_edit() {
        if chatd_testkit::postgres_url().is_none() {
            return;
        }
        let side = side().await;
        let (t0, t1) = (0, 1);
        let batch = vec![
            to_send(&side, "alice", "e1", &Plan::Edit(t0), "c1"),
            to_send(&side, "bob", "r1", &Plan::React(t0, "x", true), "c1"),
            to_send(&side, "alice", "d1", &Plan::Delete(t0), "c1"),
            to_send(&side, "alice", "e2", &Plan::Edit(t0), "c1"),
            to_send(&side, "carol", "r2", &Plan::React(t0, "x", true), "c1"),
            to_send(&side, "carol", "r3", &Plan::React(t1, "x", true), "c1"),
            to_send(&side, "carol", "r4", &Plan::React(t1, "x", false), "c1"),
            to_send(&side, "alice", "r5", &Plan::React(t1, "tada", true), "c1"),
            to_send(&side, "alice", "r6", &Plan::React(t1, "tada", true), "c1"),
        ];
        let out = side
            .store
            .write_batch_on_path(&batch, 50, true)
            .await
            .expect("batch")
            .expect("the set-based path decided");
        let o = &out.outcomes;
        let stored = |i: usize| match &o[i] {
            EntryOutcome::Stored(m) => m.clone(),
            other => panic!("entry {i}: {other:?}"),
        };
        let edit = stored(0);
        assert!(!stored(1).noop && !stored(2).noop);
        assert_eq!(o[3], EntryOutcome::TargetNotFound, "edit after the delete");
        assert_eq!(o[4], EntryOutcome::TargetNotFound, "reaction after the delete");
        assert!(!stored(5).noop && !stored(6).noop, "add then remove both change");
        assert!(!stored(7).noop);
        assert!(stored(8).noop, "a second add of a held reaction is a no-op");
        let seqs: Vec<i64> = [0, 1, 2, 5, 6, 7, 8].iter().map(|&i| stored(i).seq).collect();
        assert_eq!(
            seqs,
            vec![7, 8, 9, 10, 11, 12, 13],
            "gapless seqs in batch order, after c1's six seeded entries"
        );

        let target = side
            .store
            .message(side.targets[t0].0)
            .await
            .expect("read")
            .expect("target");
        assert!(target.deleted);
        assert_eq!(
            (target.body.as_str(), target.edited_body, target.edited_at),
            ("", None, None)
        );
        let edit = side.store.message(edit.message_id).await.expect("read").expect("edit");
        assert_eq!(edit.body, "", "the batch's own edit is erased by its delete");
        let all = tables(&side).await;
        let reactions: Vec<&String> = all
            .iter()
            .filter(|r| r.starts_with("reaction") || r.starts_with("count"))
            .collect();
        assert_eq!(
            reactions,
            vec![
                "reaction 'bob/seed1'|'tada'|'alice'",
                "count 'bob/seed1'|'tada'|'1'|'12'"
            ],
            "only alice's tada on t1 is left (first used at seq 12)"
        );
    }
}

/// Edits and the `messages` table's pages (migration 0007).
mod postgres_edit_pages {
    use super::*;
    use chatd::store::Change;

    /// The page (block number) holding the row of `message_id`.
    async fn page_of(pool: &sqlx::PgPool, message_id: uuid::Uuid) -> i64 {
        sqlx::query_scalar("SELECT (ctid::text::point)[0]::int8 FROM messages WHERE message_id = $1::uuid")
            .bind(message_id.hyphenated().to_string())
            .fetch_one(pool)
            .await
            .expect("ctid")
    }

    /// An edit updates its target on the target's own page (a heap-only
    /// tuple, which writes no index), even after the messages stored after
    /// it filled that page: `messages` keeps 15 % of each page free. At
    /// the default fillfactor (100) the page is full and the new version of
    /// the row goes to another page, with an entry in every index.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_edit_updates_its_target_on_the_targets_own_page() {
        if chatd_testkit::postgres_url().is_none() {
            return;
        }
        let (store, db) = open(Backend::Postgres).await;
        store
            .create_channel(&ch("room"), &[user("alice")], 1)
            .await
            .expect("room");
        let body = "x".repeat(100);
        // Keys in byte order (the order rows go in): k000 is on page 0, and
        // the 99 after it fill that page and more.
        let sends: Vec<NewEntry> = (0..100)
            .map(|i| send("alice", "room", &format!("k{i:03}"), &body))
            .collect();
        let out = store.write_batch(&sends, 5).await.expect("messages");
        let target = match &out.outcomes[0] {
            EntryOutcome::Stored(m) => m.message_id,
            other => panic!("k000: {other:?}"),
        };
        let pool = sqlx::PgPool::connect(&db.url).await.expect("pool");
        assert_eq!(page_of(&pool, target).await, 0);
        let last = match &out.outcomes[99] {
            EntryOutcome::Stored(m) => m.message_id,
            other => panic!("k099: {other:?}"),
        };
        assert!(page_of(&pool, last).await > 0, "the messages fill more than page 0");

        let edit = NewEntry {
            change: Change::Edit { target },
            ..send("alice", "room", "edit", &"y".repeat(100))
        };
        let out = store.write_batch(&[edit], 6).await.expect("edit");
        assert!(
            matches!(&out.outcomes[0], EntryOutcome::Stored(_)),
            "{:?}",
            out.outcomes[0]
        );
        let stored = store.message(target).await.expect("read").expect("target");
        assert_eq!(stored.edited_body.as_deref(), Some("y".repeat(100).as_str()));
        assert_eq!(page_of(&pool, target).await, 0, "the edited row stayed on its page");
        pool.close().await;
    }
}

async fn open(backend: Backend) -> (Store, TestDb) {
    let db = TestDb::new(backend).await;
    let store = db.store().await;
    store.migrate().await.expect("migrate");
    (store, db)
}

fn ch(s: &str) -> ChannelId {
    ChannelId::parse(s).expect("channel id")
}

fn user(s: &str) -> UserId {
    UserId::parse(s).expect("user id")
}

fn send(sender: &str, channel: &str, key: &str, body: &str) -> NewEntry {
    NewEntry {
        sender_id: user(sender),
        channel_id: ch(channel),
        client_msg_id: ClientMsgId::parse(key).expect("key"),
        body: body.into(),
        change: chatd::store::Change::Message,
        mentions: Default::default(),
        origin: Default::default(),
        attachments: Vec::new(),
    }
}

/// `member_since` gives the channel's last seq at the (last) join: 0 for the
/// channel's first members, the seq at the `PUT` for later ones, kept by a
/// repeated `PUT`, renewed by a join after a removal.
async fn a_member_is_recorded_with_the_seq_it_joined_at(backend: Backend) {
    let (store, _db) = open(backend).await;
    store
        .create_channel(&ch("room"), &[user("alice")], 1)
        .await
        .expect("create");
    let since = |who: &'static str| {
        let store = store.clone();
        async move { store.member_since(&ch("room"), &user(who)).await.expect("read") }
    };
    assert_eq!(since("alice").await, Some(0));
    assert_eq!(since("bob").await, None);
    let two = [send("alice", "room", "k1", "x"), send("alice", "room", "k2", "y")];
    store.write_batch(&two, 10).await.expect("batch");
    assert_eq!(
        store
            .set_member(&ch("room"), &user("bob"), true, 20)
            .await
            .expect("add"),
        2
    );
    assert_eq!(since("bob").await, Some(2));
    store
        .write_batch(&[send("alice", "room", "k3", "z")], 30)
        .await
        .expect("batch");
    store
        .set_member(&ch("room"), &user("bob"), true, 40)
        .await
        .expect("add again");
    assert_eq!(since("bob").await, Some(2), "a repeated PUT keeps the join");
    store
        .set_member(&ch("room"), &user("bob"), false, 50)
        .await
        .expect("remove");
    assert_eq!(since("bob").await, None);
    store
        .set_member(&ch("room"), &user("bob"), true, 60)
        .await
        .expect("rejoin");
    assert_eq!(since("bob").await, Some(3), "a join after a removal is a new join");
    assert_eq!(store.member_since(&ch("nope"), &user("bob")).await.expect("read"), None);
}

/// `channel_state` (a membership task's `CHANNEL_ADDED` after a stale
/// removal) reads what `channel_states` (HELLO) has for that channel, and
/// nothing for a non-member or an unknown channel.
async fn one_channels_state_is_its_entry_of_channel_states(backend: Backend) {
    let (store, _db) = open(backend).await;
    for id in ["a", "room"] {
        store
            .create_channel(&ch(id), &[user("alice"), user("bob")], 1)
            .await
            .expect("create");
    }
    store
        .write_batch(&[send("alice", "room", "k1", "x")], 10)
        .await
        .expect("batch");
    let all = store.channel_states(&user("bob")).await.expect("states");
    let one = store
        .channel_state(&user("bob"), &ch("room"))
        .await
        .expect("state")
        .expect("a member");
    assert_eq!(one, all[1]);
    assert_eq!((one.last_seq, one.unread), (1, 1));
    assert!(store
        .channel_state(&user("carol"), &ch("room"))
        .await
        .expect("state")
        .is_none());
    assert!(store
        .channel_state(&user("bob"), &ch("nope"))
        .await
        .expect("state")
        .is_none());
}

async fn channels_and_members(backend: Backend) {
    let (store, _db) = open(backend).await;
    let created = store
        .create_channel(&ch("room"), &[user("bob"), user("alice")], 42)
        .await
        .expect("create");
    assert_eq!(created.members, vec![user("alice"), user("bob")]);
    assert!(matches!(
        store.create_channel(&ch("room"), &[], 43).await,
        Err(StoreError::Exists)
    ));
    let got = store.channel(&ch("room")).await.expect("read").expect("exists");
    assert_eq!(got.created_at, 42);
    assert_eq!(got.last_seq, 0);
    assert!(store.channel(&ch("nope")).await.expect("read").is_none());
    store
        .set_member(&ch("room"), &user("carol"), true, 50)
        .await
        .expect("add");
    store
        .set_member(&ch("room"), &user("carol"), true, 50)
        .await
        .expect("add again");
    store
        .set_member(&ch("room"), &user("bob"), false, 50)
        .await
        .expect("remove");
    assert!(matches!(
        store.set_member(&ch("nope"), &user("bob"), true, 50).await,
        Err(StoreError::NotFound)
    ));
    assert!(store.is_member(&ch("room"), &user("carol")).await.expect("member"));
    assert!(!store.is_member(&ch("room"), &user("bob")).await.expect("member"));
    assert!(!store.is_member(&ch("nope"), &user("carol")).await.expect("member"));
    let states = store.channel_states(&user("carol")).await.expect("states");
    assert_eq!(states.len(), 1);
    assert_eq!(states[0].channel_id, "room");
    store.ping().await.expect("ping");
}

async fn batch_assigns_gapless_seqs_and_resolves_keys(backend: Backend) {
    let (store, _db) = open(backend).await;
    store
        .create_channel(&ch("a"), &[user("alice"), user("bob")], 1)
        .await
        .expect("create");
    store
        .create_channel(&ch("b"), &[user("alice")], 1)
        .await
        .expect("create");
    let batch = vec![
        send("alice", "a", "k1", "one"),
        send("alice", "b", "k2", "two"),
        send("alice", "a", "k1", "one"),        // duplicate inside the batch
        send("alice", "a", "k1", "different"),  // conflict inside the batch
        send("bob", "b", "k3", "not a member"), // forbidden
        send("bob", "zzz", "k4", "unknown"),    // forbidden
        send("bob", "a", "k1", "same key, other sender"),
        send("alice", "a", "k5", "three"),
    ];
    let out = store.write_batch(&batch, 100).await.expect("batch");
    let EntryOutcome::Stored(first) = &out.outcomes[0] else {
        panic!("{:?}", out.outcomes[0])
    };
    assert_eq!(first.seq, 1);
    assert!(matches!(&out.outcomes[1], EntryOutcome::Stored(m) if m.seq == 1 && m.channel_id == ch("b")));
    assert!(matches!(&out.outcomes[2], EntryOutcome::Duplicate(m) if m.message_id == first.message_id));
    assert_eq!(out.outcomes[3], EntryOutcome::Conflict);
    assert_eq!(out.outcomes[4], EntryOutcome::Forbidden);
    assert_eq!(out.outcomes[5], EntryOutcome::Forbidden);
    assert!(matches!(&out.outcomes[6], EntryOutcome::Stored(m) if m.seq == 2));
    assert!(
        matches!(&out.outcomes[7], EntryOutcome::Stored(m) if m.seq == 3),
        "no seq used by refusals"
    );
    let members: Vec<_> = out
        .members
        .iter()
        .map(|(c, m)| (c.as_str().to_owned(), m.len()))
        .collect();
    assert_eq!(members, vec![("a".to_owned(), 2), ("b".to_owned(), 1)]);
    // Against stored rows in a later batch.
    let out = store
        .write_batch(
            &[
                send("alice", "a", "k1", "one"),
                send("alice", "b", "k1", "one"),
                send("alice", "a", "k6", "four"),
            ],
            200,
        )
        .await
        .expect("batch");
    assert!(matches!(&out.outcomes[0], EntryOutcome::Duplicate(m) if m.seq == 1 && m.ts == 100));
    assert_eq!(out.outcomes[1], EntryOutcome::Conflict);
    assert!(matches!(&out.outcomes[2], EntryOutcome::Stored(m) if m.seq == 4));
    // A sender who left: a retry of a stored key still gets the original
    // (the key decides before membership); a new key is refused.
    store
        .set_member(&ch("a"), &user("bob"), false, 300)
        .await
        .expect("remove");
    let out = store
        .write_batch(
            &[
                send("bob", "a", "k1", "same key, other sender"),
                send("bob", "a", "k7", "after leaving"),
                send("bob", "b", "k1", "same key, other sender"),
                send("bob", "zzz", "k1", "same key, other sender"),
            ],
            300,
        )
        .await
        .expect("batch");
    assert!(matches!(&out.outcomes[0], EntryOutcome::Duplicate(m) if m.seq == 2));
    assert_eq!(out.outcomes[1], EntryOutcome::Forbidden);
    assert_eq!(out.outcomes[2], EntryOutcome::Conflict);
    assert_eq!(out.outcomes[3], EntryOutcome::Conflict);
    assert!(out.members.is_empty(), "nothing new stored");
    let (messages, more) = store.messages_after(&ch("a"), 0, 100).await.expect("read");
    assert!(!more);
    assert_eq!(messages.iter().map(|m| m.seq).collect::<Vec<_>>(), vec![1, 2, 3, 4]);
    assert_eq!(
        store.channel(&ch("a")).await.expect("read").expect("exists").last_seq,
        4
    );
    let by_key = store
        .message_by_key(&user("alice"), &ClientMsgId::parse("k1").expect("key"))
        .await
        .expect("read")
        .expect("stored");
    assert_eq!(by_key.message_id, first.message_id);
    assert_eq!(
        store.message(first.message_id).await.expect("read").expect("stored"),
        *first
    );
    assert!(store.message(uuid::Uuid::now_v7()).await.expect("read").is_none());
}

async fn ts_never_decreases_when_the_clock_steps_back(backend: Backend) {
    let (store, _db) = open(backend).await;
    store
        .create_channel(&ch("a"), &[user("alice")], 1)
        .await
        .expect("create");
    let first = store
        .write_batch(&[send("alice", "a", "k1", "x")], 5_000)
        .await
        .expect("batch");
    let later = store
        .write_batch(&[send("alice", "a", "k2", "x")], 4_000)
        .await
        .expect("batch");
    let (EntryOutcome::Stored(a), EntryOutcome::Stored(b)) = (&first.outcomes[0], &later.outcomes[0]) else {
        panic!()
    };
    assert_eq!(a.ts, 5_000);
    assert_eq!(b.ts, 5_000, "the clock stepped back; ts did not");
    assert_eq!(b.seq, 2);
}

async fn pages_report_has_more_exactly(backend: Backend) {
    let (store, _db) = open(backend).await;
    store
        .create_channel(&ch("a"), &[user("alice")], 1)
        .await
        .expect("create");
    let sends: Vec<_> = (0..10).map(|n| send("alice", "a", &format!("k{n}"), "x")).collect();
    store.write_batch(&sends, 10).await.expect("batch");
    let (page, more) = store.messages_after(&ch("a"), 0, 9).await.expect("read");
    assert_eq!((page.len(), more), (9, true));
    let (page, more) = store.messages_after(&ch("a"), 0, 10).await.expect("read");
    assert_eq!((page.len(), more), (10, false));
    let (page, more) = store.messages_after(&ch("a"), 8, 1).await.expect("read");
    assert_eq!((page[0].seq, more), (9, true));
    let (page, more) = store.messages_after(&ch("a"), 10, 5).await.expect("read");
    assert_eq!((page.len(), more), (0, false));
}

async fn watermarks_only_move_forward(backend: Backend) {
    let (store, _db) = open(backend).await;
    store
        .create_channel(&ch("a"), &[user("alice"), user("bob")], 1)
        .await
        .expect("create");
    let sends: Vec<_> = (0..5).map(|n| send("alice", "a", &format!("k{n}"), "x")).collect();
    let out = store.write_batch(&sends, 10).await.expect("batch");
    let m: Vec<_> = out
        .outcomes
        .iter()
        .map(|o| match o {
            EntryOutcome::Stored(m) => m.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    let bob = user("bob");
    assert!(store.advance_watermark(&bob, &m[2], false).await.expect("delivered"));
    assert!(!store.advance_watermark(&bob, &m[1], false).await.expect("backwards"));
    assert!(!store.advance_watermark(&bob, &m[2], false).await.expect("same"));
    assert!(store.advance_watermark(&bob, &m[3], true).await.expect("read"));
    let state = &store.channel_states(&bob).await.expect("states")[0];
    assert_eq!((state.delivered_seq, state.read_seq), (4, 4), "read implies delivered");
    assert!(!store
        .advance_watermark(&bob, &m[0], true)
        .await
        .expect("read backwards"));
    assert!(store
        .advance_watermark(&bob, &m[4], false)
        .await
        .expect("delivered ahead of read"));
    let state = &store.channel_states(&bob).await.expect("states")[0];
    assert_eq!((state.delivered_seq, state.read_seq), (5, 4));
    let alice_state = &store.channel_states(&user("alice")).await.expect("states")[0];
    assert_eq!(
        (alice_state.delivered_seq, alice_state.read_seq),
        (0, 0),
        "sending moves no watermark"
    );
}

async fn bodies_round_trip_byte_identical(backend: Backend) {
    let (store, _db) = open(backend).await;
    store
        .create_channel(&ch("a"), &[user("alice")], 1)
        .await
        .expect("create");
    let bodies = [
        " leading and trailing spaces ",
        "tabs\tand\nnewlines\r\n",
        "e\u{301} vs \u{e9}",
        "\u{feff}BOM and zero\u{200b}width",
        "emoji 👩‍👩‍👧‍👦 and flags 🇫🇷",
        "RTL \u{202e}reversed\u{202c} text",
        "quotes \" ' ` and backslash \\ and %s %n",
        "<script>alert(1)</script>",
        "'; DROP TABLE messages; --",
        "\u{10ffff}\u{fffd}\u{1}\u{1f}",
        "ＡＢＣ full width",
    ];
    let sends: Vec<_> = bodies
        .iter()
        .enumerate()
        .map(|(n, b)| send("alice", "a", &format!("k{n}"), b))
        .collect();
    store.write_batch(&sends, 10).await.expect("batch");
    let (page, _) = store.messages_after(&ch("a"), 0, 100).await.expect("read");
    for (stored, body) in page.iter().zip(bodies) {
        assert_eq!(stored.body.as_bytes(), body.as_bytes());
    }
}

async fn migrations_are_idempotent(backend: Backend) {
    let (store, _db) = open(backend).await;
    store.migrate().await.expect("second run is a no-op");
    store.close().await;
}

/// Channel `c{n}` for n in 0..channels, each with `members` users `u0..`.
async fn channels(store: &Store, channels: usize, members: usize) {
    let users: Vec<_> = (0..members).map(|u| user(&format!("u{u}"))).collect();
    for c in 0..channels {
        store
            .create_channel(&ch(&format!("c{c}")), &users, 1)
            .await
            .expect("create");
    }
}

/// Checks that every channel's stored seqs are exactly 1..=last_seq.
async fn assert_gapless(store: &Store, channels: usize) -> Vec<i64> {
    let mut lasts = Vec::new();
    for c in 0..channels {
        let channel = ch(&format!("c{c}"));
        let (page, more) = store.messages_after(&channel, 0, 100_000).await.expect("read");
        assert!(!more);
        let seqs: Vec<i64> = page.iter().map(|m| m.seq).collect();
        let want: Vec<i64> = (1..=seqs.len() as i64).collect();
        assert_eq!(seqs, want, "c{c} gapless");
        let last = store.channel(&channel).await.expect("read").expect("exists").last_seq;
        assert_eq!(last, seqs.len() as i64, "c{c} last_seq matches the rows");
        lasts.push(last);
    }
    lasts
}

/// A batch the size group commit builds under load: hundreds of new sends
/// over dozens of channels, interleaved, with refusals among them.
async fn large_batches_over_many_channels(backend: Backend) {
    let (store, _db) = open(backend).await;
    channels(&store, 30, 4).await;
    let mut batch = Vec::new();
    for n in 0..300 {
        let channel = format!("c{}", (n * 7) % 30);
        if n % 50 == 49 {
            // Not a member of any channel.
            batch.push(send("stranger", &channel, &format!("s{n}"), "no"));
        } else {
            batch.push(send(
                &format!("u{}", n % 4),
                &channel,
                &format!("k{n}"),
                &format!("body {n}"),
            ));
        }
    }
    let out = store.write_batch(&batch, 100).await.expect("batch");
    assert_eq!(out.outcomes.len(), batch.len());
    let mut next = std::collections::HashMap::new();
    for (send, outcome) in batch.iter().zip(&out.outcomes) {
        if send.sender_id.as_str() == "stranger" {
            assert_eq!(*outcome, EntryOutcome::Forbidden);
            continue;
        }
        let EntryOutcome::Stored(m) = outcome else {
            panic!("{outcome:?}")
        };
        let seq = next.entry(send.channel_id.clone()).or_insert(0);
        *seq += 1;
        assert_eq!(m.seq, *seq, "seqs follow the batch order within a channel");
        assert_eq!((&m.channel_id, &m.body, m.ts), (&send.channel_id, &send.body, 100));
        assert_eq!(store.message(m.message_id).await.expect("read").as_ref(), Some(m));
    }
    assert_eq!(out.members.len(), 30);
    for (_, members) in &out.members {
        assert_eq!(
            members.iter().map(|u| u.as_str()).collect::<Vec<_>>(),
            ["u0", "u1", "u2", "u3"]
        );
    }
    let lasts = assert_gapless(&store, 30).await;
    assert_eq!(lasts.iter().sum::<i64>(), 294);
}

/// Retries of stored keys in a batch of new sends: the retries get their
/// original message (or `Conflict`), the new sends get the next seqs, and
/// no seq is used by a retry.
async fn batches_mixing_new_sends_and_stored_keys(backend: Backend) {
    let (store, _db) = open(backend).await;
    channels(&store, 3, 2).await;
    let first: Vec<_> = (0..30)
        .map(|n| send("u0", &format!("c{}", n % 3), &format!("k{n}"), "one"))
        .collect();
    let stored = store.write_batch(&first, 10).await.expect("batch");
    let mut batch = Vec::new();
    for n in 30..60 {
        batch.push(send("u1", &format!("c{}", n % 3), &format!("k{n}"), "new"));
        if n % 10 == 0 {
            let old = n - 30;
            batch.push(send("u0", &format!("c{}", old % 3), &format!("k{old}"), "one"));
            batch.push(send(
                "u0",
                &format!("c{}", old % 3),
                &format!("k{}", old + 1),
                "changed",
            ));
        }
    }
    let out = store.write_batch(&batch, 20).await.expect("batch");
    let mut next = [10i64; 3];
    for (send, outcome) in batch.iter().zip(&out.outcomes) {
        let key: usize = send.client_msg_id.as_str()[1..].parse().expect("n");
        if key < 30 {
            if send.body == "one" {
                let EntryOutcome::Stored(original) = &stored.outcomes[key] else {
                    panic!()
                };
                assert!(
                    matches!(outcome, EntryOutcome::Duplicate(m) if m == original),
                    "{outcome:?}"
                );
            } else {
                assert_eq!(*outcome, EntryOutcome::Conflict);
            }
            continue;
        }
        let c = key % 3;
        next[c] += 1;
        assert!(
            matches!(outcome, EntryOutcome::Stored(m) if m.seq == next[c]),
            "{outcome:?}"
        );
    }
    assert_eq!(assert_gapless(&store, 3).await, vec![20, 20, 20]);
    // A sender who left retries a stored message beside a member's new one:
    // the key decides before membership.
    store
        .set_member(&ch("c0"), &user("u0"), false, 30)
        .await
        .expect("leave");
    let out = store
        .write_batch(
            &[
                send("u0", "c0", "k0", "one"),
                send("u0", "c0", "k99", "new after leaving"),
                send("u1", "c0", "k100", "new"),
            ],
            30,
        )
        .await
        .expect("batch");
    let EntryOutcome::Stored(original) = &stored.outcomes[0] else {
        panic!()
    };
    assert!(matches!(&out.outcomes[0], EntryOutcome::Duplicate(m) if m == original));
    assert_eq!(out.outcomes[1], EntryOutcome::Forbidden);
    assert!(matches!(&out.outcomes[2], EntryOutcome::Stored(m) if m.seq == 21));
    assert_eq!(assert_gapless(&store, 3).await, vec![21, 20, 20]);
}

/// Writers batching over overlapping channels at the same time (several
/// writer shards, or several nodes on one PostgreSQL) lock channels in one
/// order, so they neither deadlock nor leave gaps.
async fn concurrent_batches_over_overlapping_channels_neither_deadlock_nor_gap(backend: Backend) {
    let (store, _db) = open(backend).await;
    channels(&store, 12, 2).await;
    let mut tasks = Vec::new();
    for w in 0..4 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let mut stored = 0;
            for b in 0..15 {
                // Each writer walks the channels in its own order.
                let batch: Vec<_> = (0..24)
                    .map(|n| {
                        let c = if w % 2 == 0 { n % 12 } else { 11 - n % 12 };
                        send(&format!("u{}", w % 2), &format!("c{c}"), &format!("w{w}b{b}n{n}"), "x")
                    })
                    .collect();
                // A deadlock would surface as an error (PostgreSQL aborts one side).
                let out = store
                    .write_batch(&batch, 10)
                    .await
                    .unwrap_or_else(|e| panic!("writer {w} batch {b}: {e:?}"));
                stored += out
                    .outcomes
                    .iter()
                    .filter(|o| matches!(o, EntryOutcome::Stored(_)))
                    .count();
            }
            stored
        }));
    }
    let mut total = 0;
    for task in tasks {
        total += task.await.expect("writer");
    }
    assert_eq!(total, 4 * 15 * 24);
    let lasts = assert_gapless(&store, 12).await;
    assert_eq!(lasts.iter().sum::<i64>(), 4 * 15 * 24);
}

/// Two writers (two nodes on one database) store the same idempotency keys
/// at once, in opposite orders and into different channels: one copy of each
/// key wins, the other is a conflict, and neither batch fails. Inserting in
/// batch order let each transaction wait on a key the other held (a deadlock
/// PostgreSQL breaks after `deadlock_timeout`, failing a whole batch).
async fn batches_racing_for_the_same_keys_in_opposite_orders_do_not_deadlock(backend: Backend) {
    let (store, _db) = open(backend).await;
    channels(&store, 2, 1).await;
    for round in 0..10 {
        let forward: Vec<_> = (0..50)
            .map(|n| send("u0", "c0", &format!("r{round}k{n}"), "x"))
            .collect();
        let backward: Vec<_> = (0..50)
            .rev()
            .map(|n| send("u0", "c1", &format!("r{round}k{n}"), "x"))
            .collect();
        let (a, b) = tokio::join!(store.write_batch(&forward, 10), store.write_batch(&backward, 10));
        let (a, b) = (a.expect("forward batch"), b.expect("backward batch"));
        for n in 0..50 {
            let pair = (&a.outcomes[n], &b.outcomes[49 - n]);
            let stored =
                matches!(pair.0, EntryOutcome::Stored(_)) as usize + matches!(pair.1, EntryOutcome::Stored(_)) as usize;
            assert_eq!(stored, 1, "round {round} key {n}: {pair:?}");
        }
    }
    let lasts = assert_gapless(&store, 2).await;
    assert_eq!(lasts.iter().sum::<i64>(), 500);
}

/// The roles a change is judged by are those in force when the channel is
/// locked: a route that read the roles before (a moderator's request for a
/// user an owner promoted meanwhile) is refused by the store. Before, the
/// store applied whatever the route had decided, so a moderator could
/// demote an owner in that race (found by a review).
async fn a_members_change_is_judged_by_the_roles_under_the_channel_lock(backend: Backend) {
    let (store, _db) = open(backend).await;
    let room = ch("club");
    store
        .create_channel(&room, &[user("mo"), user("x")], 1)
        .await
        .expect("create");
    store
        .change_membership(
            &room,
            &user("mo"),
            MembershipChange::Add(Some(Role::Moderator)),
            None,
            2,
        )
        .await
        .expect("mo a moderator");
    // The owner (here the admin) promotes x, committing first...
    store
        .change_membership(&room, &user("x"), MembershipChange::Add(Some(Role::Owner)), None, 3)
        .await
        .expect("x an owner");
    // ...then the moderator's "x as a member" and removal of x are refused.
    let demote = store
        .change_membership(
            &room,
            &user("x"),
            MembershipChange::Add(Some(Role::Member)),
            Some(&user("mo")),
            4,
        )
        .await;
    assert!(
        matches!(demote, Err(StoreError::Denied(Denied::Role { needed: Role::Owner }))),
        "{demote:?}"
    );
    let remove = store
        .change_membership(&room, &user("x"), MembershipChange::Remove, Some(&user("mo")), 5)
        .await;
    assert!(matches!(remove, Err(StoreError::Denied(_))), "{remove:?}");
    assert_eq!(store.role_of(&room, &user("x")).await.expect("role"), Some(Role::Owner));
    // A member it may manage, it may.
    store
        .change_membership(&room, &user("y"), MembershipChange::Add(None), Some(&user("mo")), 6)
        .await
        .expect("add y");
    store
        .change_membership(&room, &user("y"), MembershipChange::Remove, Some(&user("mo")), 7)
        .await
        .expect("remove y");
    // Patching and deleting: an owner's, judged the same way.
    let patch = chatd::store::ChannelPatch {
        name: Some(Some("Club".to_owned())),
        metadata: None,
        visibility: None,
        ..Default::default()
    };
    let by_mo = store.update_channel_by(&room, &patch, Some(&user("mo"))).await;
    assert!(matches!(by_mo, Err(StoreError::Denied(_))), "{by_mo:?}");
    assert!(matches!(
        store.delete_channel_by(&room, Some(&user("mo"))).await,
        Err(StoreError::Denied(_))
    ));
    store
        .update_channel_by(&room, &patch, Some(&user("x")))
        .await
        .expect("the owner renames");
    store
        .delete_channel_by(&room, Some(&user("x")))
        .await
        .expect("the owner deletes");
}

/// What `MEMBER`, `CHANNEL_ADDED` and `CHANNEL_REMOVED` are built from
/// (§13.3): each change says what it changed (`None` when already so, so
/// nothing is announced), the channel's last seq when it took effect, the
/// members after it and, for a join, the new member's HELLO entry read
/// under the lock.
async fn a_membership_change_says_what_changed_and_at_which_seq(backend: Backend) {
    let (store, _db) = open(backend).await;
    let room = ch("room");
    store.create_channel(&room, &[user("alice")], 1).await.expect("create");
    store
        .write_batch(&[send("alice", "room", "k1", "hi")], 2)
        .await
        .expect("send");
    let change = |who: &'static str, change: MembershipChange, at: i64| {
        let store = store.clone();
        let room = room.clone();
        async move {
            store
                .change_membership(&room, &user(who), change, None, at)
                .await
                .expect("change")
        }
    };
    let join = change("bob", MembershipChange::Add(None), 10).await;
    assert_eq!(join.event, Some(MemberEvent::Join(Role::Member)));
    assert_eq!((join.after_seq, join.ts), (1, 10));
    assert_eq!(join.members, vec![user("alice"), user("bob")]);
    let added = join.added.expect("a join has the new member's entry");
    assert_eq!(
        (
            added.channel_id.as_str(),
            added.last_seq,
            added.member_count,
            added.role,
            added.unread
        ),
        ("room", 1, 2, Role::Member, 1)
    );
    // Adding again without a role, or with the same one: nothing changed.
    for again in [MembershipChange::Add(None), MembershipChange::Add(Some(Role::Member))] {
        let same = change("bob", again, 11).await;
        assert_eq!((same.event, same.members.len(), same.added), (None, 0, None));
    }
    store
        .write_batch(&[send("bob", "room", "k2", "yo")], 12)
        .await
        .expect("send");
    let promote = change("bob", MembershipChange::Add(Some(Role::Moderator)), 13).await;
    assert_eq!(
        (promote.event, promote.after_seq),
        (Some(MemberEvent::Role(Role::Moderator)), 2)
    );
    assert_eq!(
        store.role_of(&room, &user("bob")).await.expect("role"),
        Some(Role::Moderator)
    );
    let leave = change("bob", MembershipChange::Remove, 14).await;
    assert_eq!(
        (leave.event, leave.members),
        (Some(MemberEvent::Leave), vec![user("alice")])
    );
    let again = change("bob", MembershipChange::Remove, 15).await;
    assert_eq!(again.event, None);
    // A new member with a role is added with it.
    let owner = change("carol", MembershipChange::Add(Some(Role::Owner)), 16).await;
    assert_eq!(owner.event, Some(MemberEvent::Join(Role::Owner)));
    assert_eq!(owner.added.map(|a| a.role), Some(Role::Owner));
}
