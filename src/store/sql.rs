//! The SQL text of each backend. Both modules define the same names; the
//! statements differ only where the dialects do (row locks, UUID columns).
//! Parameters are `$N` in both (sqlx binds `$N` by number on SQLite too).

/// Columns of a message row, in the order [`super::backend`] reads them.
macro_rules! message_columns {
    ($id:literal, $target:literal) => {
        concat!(
            $id,
            " AS message_id, channel_id, seq, sender_id, client_msg_id, body, ts, kind, ",
            $target,
            " AS target_id, emoji, op, edited_body, edited_at, deleted, noop"
        )
    };
}

/// The two `WITH` queries of `pg::INSERT_ENTRIES` (`$1`..`$16`): the
/// batch's entries inserted (`inserted`) and its channels' seqs set
/// (`updated`), one row per piece each.
macro_rules! insert_entries {
    () => {
        "WITH inserted AS (\
         INSERT INTO messages (message_id, channel_id, seq, sender_id, client_msg_id, body, ts, offline_members, \
         kind, target_id, emoji, op, noop) \
         SELECT * FROM UNNEST($1::uuid[], $2::text[], $3::int8[], $4::text[], $5::text[], $6::text[], $7::int8[], $11::text[], \
         $12::text[], $13::uuid[], $14::text[], $15::text[], $16::bool[]) \
         ON CONFLICT (sender_id, client_msg_id) DO NOTHING RETURNING 1), \
         updated AS (UPDATE channels AS c SET last_seq = u.last_seq, last_ts = u.last_ts \
         FROM UNNEST($8::text[], $9::int8[], $10::int8[]) AS u(channel_id, last_seq, last_ts) \
         WHERE c.channel_id = u.channel_id RETURNING 1)"
    };
}

/// PostgreSQL: `FOR UPDATE` row locks serialise writers per channel across
/// connections and nodes; `message_id` is a `uuid` column.
pub mod pg {
    /// A read of several statements from one snapshot.
    pub const BEGIN_SNAPSHOT: &str = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";
    pub const LOCK_CHANNEL: &str = "SELECT last_seq, last_ts FROM channels WHERE channel_id = $1 FOR UPDATE";
    pub const INSERT_MESSAGE: &str =
        "INSERT INTO messages (message_id, channel_id, seq, sender_id, client_msg_id, body, ts, kind, target_id, emoji, op, offline_members) \
         VALUES ($1::uuid, $2, $3, $4, $5, $6, $7, $8, $9::uuid, $10, $11, $12) ON CONFLICT (sender_id, client_msg_id) DO NOTHING RETURNING seq";
    /// Sets message `$1`'s current text `$2` and edit time `$3`.
    pub const APPLY_EDIT: &str = "UPDATE messages SET edited_body = $2, edited_at = $3 WHERE message_id = $1::uuid";
    /// Marks message `$1` deleted and erases its text.
    pub const ERASE_MESSAGE: &str =
        "UPDATE messages SET body = '', edited_body = NULL, edited_at = NULL, deleted = TRUE \
         WHERE message_id = $1::uuid";
    /// Erases the text of every edit of message `$1`.
    pub const ERASE_EDITS: &str = "UPDATE messages SET body = '' WHERE target_id = $1::uuid AND kind = 'edit'";
    pub const DELETE_REACTIONS: &str = "DELETE FROM reactions WHERE message_id = $1::uuid";
    /// Marks entry `$1` as having changed nothing.
    pub const MARK_NOOP: &str = "UPDATE messages SET noop = TRUE WHERE message_id = $1::uuid";
    pub const DELETE_REACTION_COUNTS: &str = "DELETE FROM reaction_counts WHERE message_id = $1::uuid";
    /// Adds `$3`'s reaction `$2` on `$1`; affects no row when held.
    pub const ADD_REACTION: &str = "INSERT INTO reactions (message_id, emoji, user_id) VALUES ($1::uuid, $2, $3) \
         ON CONFLICT DO NOTHING";
    /// One more holder of `$2` on `$1`; a new row (first use at seq `$3`) when none held it.
    pub const COUNT_UP: &str =
        "INSERT INTO reaction_counts (message_id, emoji, count, first_seq) VALUES ($1::uuid, $2, 1, $3) \
         ON CONFLICT (message_id, emoji) DO UPDATE SET count = reaction_counts.count + 1";
    /// Removes `$3`'s reaction `$2` on `$1`; affects no row when not held.
    pub const REMOVE_REACTION: &str =
        "DELETE FROM reactions WHERE message_id = $1::uuid AND emoji = $2 AND user_id = $3";
    /// The last holder of `$2` on `$1` left: the row goes.
    pub const COUNT_GONE: &str = "DELETE FROM reaction_counts WHERE message_id = $1::uuid AND emoji = $2 AND count = 1";
    pub const COUNT_DOWN: &str =
        "UPDATE reaction_counts SET count = count - 1 WHERE message_id = $1::uuid AND emoji = $2";
    /// The reactions of the messages `$1` (text[] of ids), with whether
    /// `$2` holds each, by first use. Whether `$2` holds it is a scalar
    /// subquery (one probe of the primary key per reaction): as a join, the
    /// planner read every row of `reactions` held by `$2` through the
    /// primary key (whose first column is the message, so all of it).
    pub const REACTIONS_OF: &str = "SELECT c.message_id::text, c.emoji, c.count, \
         COALESCE((SELECT TRUE FROM reactions r \
         WHERE r.message_id = c.message_id AND r.emoji = c.emoji AND r.user_id = $2), FALSE) \
         FROM reaction_counts c WHERE c.message_id = ANY($1::uuid[]) ORDER BY c.message_id, c.first_seq";
    pub const MESSAGE_BY_KEY: &str = concat!(
        "SELECT ",
        message_columns!("message_id::text", "target_id::text"),
        " FROM messages WHERE sender_id = $1 AND client_msg_id = $2"
    );
    pub const MESSAGE_BY_ID: &str = concat!(
        "SELECT ",
        message_columns!("message_id::text", "target_id::text"),
        " FROM messages WHERE message_id = $1::uuid"
    );
    pub const MESSAGES_AFTER: &str = concat!(
        "SELECT ",
        message_columns!("message_id::text", "target_id::text"),
        " FROM messages WHERE channel_id = $1 AND seq > $2 ORDER BY seq LIMIT $3"
    );
    /// A backward scan of the `(channel_id, seq)` index from `$2`.
    pub const MESSAGES_BEFORE: &str = concat!(
        "SELECT ",
        message_columns!("message_id::text", "target_id::text"),
        " FROM messages WHERE channel_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3"
    );
    /// Channels after `$1` (`NULL`: from the first; ids are never empty) in byte order of the id
    /// (`COLLATE "C"`, served by the `channels_by_id_bytes` index), `$2` of them.
    pub const LIST_CHANNELS: &str = "SELECT channel_id, created_at, last_seq, name, metadata FROM channels \
         WHERE channel_id COLLATE \"C\" > COALESCE($1::text, '') COLLATE \"C\" \
         ORDER BY channel_id COLLATE \"C\" LIMIT $2";
    /// The members of the channels `$1` (text[]).
    pub const MEMBERS_OF_LISTED: &str = "SELECT channel_id, user_id FROM members WHERE channel_id = ANY($1)";
    /// Which of the users `$2` (text[]) share a channel with user `$1`.
    pub const SHARING_A_CHANNEL: &str = "SELECT DISTINCT o.user_id FROM members m \
         JOIN members o ON o.channel_id = m.channel_id WHERE m.user_id = $1 AND o.user_id = ANY($2)";
    /// The stored `lastSeenAt` of the users `$1` (text[]).
    pub const LAST_SEEN: &str = "SELECT user_id, last_seen_at FROM presence WHERE user_id = ANY($1)";
    /// Locks every channel of a batch (`$1` text[]) in one statement. The
    /// rows are sorted before they are locked (PostgreSQL applies `ORDER BY`
    /// below the locking clause), so the locks are taken in byte order of the
    /// id, the order the per-row path uses: no deadlock between batches.
    pub const LOCK_CHANNELS: &str = "SELECT channel_id, last_seq, last_ts FROM channels \
         WHERE channel_id = ANY($1) ORDER BY channel_id COLLATE \"C\" FOR UPDATE";
    /// Adds members (`$2` text[]) to channel `$1`, joined at `$3`; repeats
    /// and existing members are skipped.
    pub const INSERT_MEMBERS: &str = "INSERT INTO members (channel_id, user_id, joined_at) \
         SELECT $1, u, $3 FROM UNNEST($2::text[]) AS u ON CONFLICT (channel_id, user_id) DO NOTHING";
    /// Members of every channel of a batch (`$1` text[]), in no order.
    pub const MEMBERS_OF_CHANNELS: &str = "SELECT channel_id, user_id FROM members WHERE channel_id = ANY($1)";
    /// Inserts a batch's entries from one array per column (`$1`..`$7`,
    /// `$11` the offline members, `$12`..`$16` kind, target, emoji, op,
    /// noop) and sets `last_seq`/`last_ts` of every channel it wrote to
    /// (`$8`..`$10`), in one statement. Returns the number of entries
    /// inserted (fewer than given means a key was taken, and the caller
    /// rolls back) and of channels updated.
    pub const INSERT_ENTRIES: &str = concat!(
        insert_entries!(),
        " SELECT (SELECT count(*) FROM inserted), (SELECT count(*) FROM updated)"
    );
    /// `INSERT_ENTRIES` (`$1`..`$16`) with the effects of the batch's edits
    /// and reactions in the same statement (PostgreSQL runs every
    /// data-modifying `WITH` to completion; the pieces touch disjoint rows:
    /// the targets of the edits, which are stored rows and not the new
    /// ones, the holders gained and lost, the counts set and dropped):
    /// - the current text `$18[i]` and edit time `$19[i]` of message `$17[i]`;
    /// - the reactions `($20[i], $21[i], $22[i])` (message, emoji, user)
    ///   added and `($23[i], $24[i], $25[i])` removed;
    /// - the count `$28[i]` and first-use seq `$29[i]` of `($26[i], $27[i])`
    ///   (message, emoji) set, and the counts of `($30[i], $31[i])` dropped
    ///   (nobody holds them any more).
    ///
    /// Returns the same two counts as `INSERT_ENTRIES`; when fewer entries
    /// went in than given the caller rolls back, effects included.
    pub const INSERT_ENTRIES_WITH_EFFECTS: &str = concat!(
        insert_entries!(),
        ", \
         edited AS (UPDATE messages AS m SET edited_body = u.body, edited_at = u.ts \
         FROM UNNEST($17::uuid[], $18::text[], $19::int8[]) AS u(message_id, body, ts) WHERE m.message_id = u.message_id), \
         added AS (INSERT INTO reactions (message_id, emoji, user_id) \
         SELECT * FROM UNNEST($20::uuid[], $21::text[], $22::text[]) ON CONFLICT DO NOTHING), \
         removed AS (DELETE FROM reactions r \
         USING UNNEST($23::uuid[], $24::text[], $25::text[]) AS u(message_id, emoji, user_id) \
         WHERE r.message_id = u.message_id AND r.emoji = u.emoji AND r.user_id = u.user_id), \
         counted AS (INSERT INTO reaction_counts (message_id, emoji, count, first_seq) \
         SELECT * FROM UNNEST($26::uuid[], $27::text[], $28::int8[], $29::int8[]) \
         ON CONFLICT (message_id, emoji) DO UPDATE SET count = excluded.count, first_seq = excluded.first_seq), \
         dropped AS (DELETE FROM reaction_counts c \
         USING UNNEST($30::uuid[], $31::text[]) AS u(message_id, emoji) \
         WHERE c.message_id = u.message_id AND c.emoji = u.emoji) \
         SELECT (SELECT count(*) FROM inserted), (SELECT count(*) FROM updated)"
    );
    /// The stored entries with the keys `($1[i], $2[i])` (sender, client id; text[] each).
    pub const MESSAGES_BY_KEYS: &str = concat!(
        "SELECT ",
        message_columns!("message_id::text", "target_id::text"),
        " FROM messages WHERE (sender_id, client_msg_id) IN (SELECT * FROM UNNEST($1::text[], $2::text[]))"
    );
    /// The entries `$1` (text[] of ids), the targets of a batch's changes.
    pub const MESSAGES_BY_IDS: &str = concat!(
        "SELECT ",
        message_columns!("message_id::text", "target_id::text"),
        " FROM messages WHERE message_id = ANY($1::uuid[])"
    );
    /// The reaction state of the holders `($1[i], $2[i], $3[i])` (message,
    /// emoji, user), one row each: whether it is held, and the count and
    /// first-use seq of its (message, emoji) as a two-element array (`NULL`
    /// when none holds it). The lookups are scalar subqueries of the select
    /// list, which PostgreSQL runs row by row (never hashed, never turned
    /// into a join), so each is one probe of a primary key whatever the
    /// tables' sizes. As joins (or `EXISTS`, which may be hashed), a plan
    /// made while the tables were small (and kept by the connection's
    /// prepared statement) scanned the whole table on every batch.
    pub const REACTION_STATE_OF: &str = "SELECT u.message_id::text, u.emoji, u.user_id, \
         COALESCE((SELECT TRUE FROM reactions r \
         WHERE r.message_id = u.message_id AND r.emoji = u.emoji AND r.user_id = u.user_id), FALSE), \
         (SELECT ARRAY[c.count, c.first_seq] FROM reaction_counts c \
         WHERE c.message_id = u.message_id AND c.emoji = u.emoji) \
         FROM UNNEST($1::uuid[], $2::text[], $3::text[]) AS u(message_id, emoji, user_id)";
    /// Marks the messages `$1` (text[] of ids) deleted and erases their text.
    pub const ERASE_MESSAGES: &str =
        "UPDATE messages SET body = '', edited_body = NULL, edited_at = NULL, deleted = TRUE \
         WHERE message_id = ANY($1::uuid[])";
    /// Erases the text of every edit of the messages `$1`.
    pub const ERASE_EDITS_OF: &str =
        "UPDATE messages SET body = '' WHERE target_id = ANY($1::uuid[]) AND kind = 'edit'";
    /// Drops every reaction held on the messages `$1`.
    pub const DELETE_REACTIONS_OF: &str = "DELETE FROM reactions WHERE message_id = ANY($1::uuid[])";
    /// Drops every reaction count of the messages `$1`.
    pub const DELETE_REACTION_COUNTS_OF: &str = "DELETE FROM reaction_counts WHERE message_id = ANY($1::uuid[])";
    /// Up to `$3` entries of channel `$1` after seq `$2` with their
    /// `offline_members`, for the webhook feed.
    pub const WEBHOOK_ENTRIES_AFTER: &str = concat!(
        "SELECT ",
        message_columns!("message_id::text", "target_id::text"),
        ", offline_members FROM messages WHERE channel_id = $1 AND seq > $2 ORDER BY seq LIMIT $3"
    );
    /// Takes or renews, for owner `$1`, every bucket of `$2` (int4[]) that is
    /// free, expired or already its own, until `$3` ms from now on the
    /// database's clock (one clock for every node: no skew between them).
    /// Returns the buckets the owner holds now.
    pub const TAKE_LEASES: &str = "INSERT INTO webhook_leases (bucket, owner, expires_at) \
         SELECT b, $1, (extract(epoch FROM clock_timestamp()) * 1000)::int8 + $3 FROM UNNEST($2::int4[]) AS b \
         ON CONFLICT (bucket) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at \
         WHERE webhook_leases.owner = excluded.owner \
         OR webhook_leases.expires_at < (extract(epoch FROM clock_timestamp()) * 1000)::int8 \
         RETURNING bucket";
    /// Gives back every lease of owner `$1` (a clean shutdown), so another
    /// node takes over at once.
    pub const RELEASE_LEASES: &str = "UPDATE webhook_leases SET expires_at = 0 WHERE owner = $1";
}

/// SQLite: one writer connection (and `BEGIN IMMEDIATE`) serialises writers,
/// so no row lock is needed; `message_id` is text.
pub mod sqlite {
    /// A read of several statements from one snapshot (WAL: the first read
    /// fixes it until the transaction ends).
    pub const BEGIN_SNAPSHOT: &str = "BEGIN";
    /// Copies the WAL into the database file and truncates it.
    pub const CHECKPOINT: &str = "PRAGMA wal_checkpoint(TRUNCATE)";
    /// Adds members (`$2`, a JSON array of ids) to channel `$1`, joined at
    /// `$3`; repeats and existing members are skipped.
    pub const INSERT_MEMBERS: &str = "INSERT INTO members (channel_id, user_id, joined_at) \
         SELECT $1, value, $3 FROM json_each($2) WHERE true ON CONFLICT (channel_id, user_id) DO NOTHING";
    pub const LOCK_CHANNEL: &str = "SELECT last_seq, last_ts FROM channels WHERE channel_id = $1";
    pub const INSERT_MESSAGE: &str =
        "INSERT INTO messages (message_id, channel_id, seq, sender_id, client_msg_id, body, ts, kind, target_id, emoji, op, offline_members) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT (sender_id, client_msg_id) DO NOTHING RETURNING seq";
    pub const APPLY_EDIT: &str = "UPDATE messages SET edited_body = $2, edited_at = $3 WHERE message_id = $1";
    pub const ERASE_MESSAGE: &str = "UPDATE messages SET body = '', edited_body = NULL, edited_at = NULL, deleted = 1 \
         WHERE message_id = $1";
    pub const ERASE_EDITS: &str = "UPDATE messages SET body = '' WHERE target_id = $1 AND kind = 'edit'";
    pub const DELETE_REACTIONS: &str = "DELETE FROM reactions WHERE message_id = $1";
    pub const MARK_NOOP: &str = "UPDATE messages SET noop = 1 WHERE message_id = $1";
    pub const DELETE_REACTION_COUNTS: &str = "DELETE FROM reaction_counts WHERE message_id = $1";
    pub const ADD_REACTION: &str = "INSERT INTO reactions (message_id, emoji, user_id) VALUES ($1, $2, $3) \
         ON CONFLICT DO NOTHING";
    pub const COUNT_UP: &str =
        "INSERT INTO reaction_counts (message_id, emoji, count, first_seq) VALUES ($1, $2, 1, $3) \
         ON CONFLICT (message_id, emoji) DO UPDATE SET count = reaction_counts.count + 1";
    pub const REMOVE_REACTION: &str = "DELETE FROM reactions WHERE message_id = $1 AND emoji = $2 AND user_id = $3";
    pub const COUNT_GONE: &str = "DELETE FROM reaction_counts WHERE message_id = $1 AND emoji = $2 AND count = 1";
    pub const COUNT_DOWN: &str = "UPDATE reaction_counts SET count = count - 1 WHERE message_id = $1 AND emoji = $2";
    /// The reactions of the messages `$1` (a JSON array of ids), with
    /// whether `$2` holds each, by first use.
    pub const REACTIONS_OF: &str = "SELECT c.message_id, c.emoji, c.count, (r.user_id IS NOT NULL) \
         FROM reaction_counts c LEFT JOIN reactions r \
         ON r.message_id = c.message_id AND r.emoji = c.emoji AND r.user_id = $2 \
         WHERE c.message_id IN (SELECT value FROM json_each($1)) ORDER BY c.message_id, c.first_seq";
    pub const MESSAGE_BY_KEY: &str = concat!(
        "SELECT ",
        message_columns!("message_id", "target_id"),
        " FROM messages WHERE sender_id = $1 AND client_msg_id = $2"
    );
    pub const MESSAGE_BY_ID: &str = concat!(
        "SELECT ",
        message_columns!("message_id", "target_id"),
        " FROM messages WHERE message_id = $1"
    );
    pub const MESSAGES_AFTER: &str = concat!(
        "SELECT ",
        message_columns!("message_id", "target_id"),
        " FROM messages WHERE channel_id = $1 AND seq > $2 ORDER BY seq LIMIT $3"
    );
    /// A backward scan of the `(channel_id, seq)` index from `$2`.
    pub const MESSAGES_BEFORE: &str = concat!(
        "SELECT ",
        message_columns!("message_id", "target_id"),
        " FROM messages WHERE channel_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3"
    );
    /// Channels after `$1` (`NULL`: from the first; ids are never empty) in byte order of the id
    /// (SQLite's default BINARY collation; the primary key's index).
    pub const LIST_CHANNELS: &str = "SELECT channel_id, created_at, last_seq, name, metadata FROM channels \
         WHERE channel_id > COALESCE($1, '') ORDER BY channel_id LIMIT $2";
    /// The members of the channels `$1` (a JSON array of ids).
    pub const MEMBERS_OF_LISTED: &str =
        "SELECT channel_id, user_id FROM members WHERE channel_id IN (SELECT value FROM json_each($1))";
    /// Which of the users `$2` (a JSON array) share a channel with user `$1`.
    pub const SHARING_A_CHANNEL: &str = "SELECT DISTINCT o.user_id FROM members m \
         JOIN members o ON o.channel_id = m.channel_id WHERE m.user_id = $1 \
         AND o.user_id IN (SELECT value FROM json_each($2))";
    /// The stored `lastSeenAt` of the users `$1` (a JSON array).
    pub const LAST_SEEN: &str =
        "SELECT user_id, last_seen_at FROM presence WHERE user_id IN (SELECT value FROM json_each($1))";
    /// Up to `$3` entries of channel `$1` after seq `$2` with their
    /// `offline_members`, for the webhook feed.
    pub const WEBHOOK_ENTRIES_AFTER: &str = concat!(
        "SELECT ",
        message_columns!("message_id", "target_id"),
        ", offline_members FROM messages WHERE channel_id = $1 AND seq > $2 ORDER BY seq LIMIT $3"
    );
}

/// Statements whose text is the same on both backends.
pub mod common {
    pub const UPDATE_CHANNEL_SEQ: &str = "UPDATE channels SET last_seq = $2, last_ts = $3 WHERE channel_id = $1";
    pub const CHANNEL_MEMBERS: &str = "SELECT user_id FROM members WHERE channel_id = $1 ORDER BY user_id";
    pub const INSERT_CHANNEL: &str =
        "INSERT INTO channels (channel_id, created_at) VALUES ($1, $2) ON CONFLICT (channel_id) DO NOTHING";
    /// Adds member `$2` to channel `$1` at `$3` (ms), when the channel's last
    /// seq was `$4`; a member already in keeps its row.
    pub const INSERT_MEMBER: &str =
        "INSERT INTO members (channel_id, user_id, joined_at, joined_seq) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (channel_id, user_id) DO NOTHING";
    pub const DELETE_MEMBER: &str = "DELETE FROM members WHERE channel_id = $1 AND user_id = $2";
    pub const CHANNEL: &str =
        "SELECT channel_id, created_at, last_seq, name, metadata FROM channels WHERE channel_id = $1";
    /// Sets `name` to `$3` when `$2`, `metadata` to `$5` when `$4`.
    pub const UPDATE_CHANNEL: &str = "UPDATE channels SET \
         name = CASE WHEN $2 THEN $3 ELSE name END, metadata = CASE WHEN $4 THEN $5 ELSE metadata END \
         WHERE channel_id = $1";
    /// A channel's rows, children first (`DELETE /v1/channels/{channelId}`):
    /// the reaction state of its messages, its log, watermarks, members,
    /// its webhook cursor (a channel made again with this id starts at seq 1).
    pub const DELETE_CHANNEL: [&str; 7] = [
        "DELETE FROM reactions WHERE message_id IN (SELECT message_id FROM messages WHERE channel_id = $1)",
        "DELETE FROM reaction_counts WHERE message_id IN (SELECT message_id FROM messages WHERE channel_id = $1)",
        "DELETE FROM messages WHERE channel_id = $1",
        "DELETE FROM watermarks WHERE channel_id = $1",
        "DELETE FROM members WHERE channel_id = $1",
        "DELETE FROM webhook_cursors WHERE channel_id = $1",
        "DELETE FROM channels WHERE channel_id = $1",
    ];
    pub const MEMBER_SINCE: &str = "SELECT joined_seq FROM members WHERE channel_id = $1 AND user_id = $2";
    /// The members of channel `$1` with their `joined_seq`, earliest join first.
    pub const MEMBERS_SINCE: &str = "SELECT user_id, joined_seq FROM members WHERE channel_id = $1 ORDER BY joined_seq";
    /// Each channel of `$1` with its last seq, the user's watermarks and
    /// unread count: the `message` entries after `read_seq`, not deleted,
    /// not sent by the user, counted from the (channel_id, seq) index (no
    /// stored counter that could drift).
    pub const CHANNEL_STATES: &str =
        "SELECT c.channel_id, c.last_seq, COALESCE(w.delivered_seq, 0), COALESCE(w.read_seq, 0), \
         (SELECT count(*) FROM messages x WHERE x.channel_id = m.channel_id AND x.seq > COALESCE(w.read_seq, 0) \
          AND x.kind = 'message' AND NOT x.deleted AND x.sender_id <> m.user_id), c.name, c.metadata \
         FROM members m JOIN channels c ON c.channel_id = m.channel_id \
         LEFT JOIN watermarks w ON w.channel_id = m.channel_id AND w.user_id = m.user_id \
         WHERE m.user_id = $1 ORDER BY c.channel_id";
    /// Moves `delivered_seq` forward only; affects no row when it would not move.
    pub const ADVANCE_DELIVERED: &str =
        "INSERT INTO watermarks (channel_id, user_id, delivered_seq, read_seq) VALUES ($1, $2, $3, 0) \
         ON CONFLICT (channel_id, user_id) DO UPDATE SET delivered_seq = excluded.delivered_seq \
         WHERE watermarks.delivered_seq < excluded.delivered_seq";
    /// Moves `read_seq` forward only, and `delivered_seq` with it (read implies delivered).
    pub const ADVANCE_READ: &str = "INSERT INTO watermarks (channel_id, user_id, delivered_seq, read_seq) VALUES ($1, $2, $3, $3) \
         ON CONFLICT (channel_id, user_id) DO UPDATE SET read_seq = excluded.read_seq, \
         delivered_seq = CASE WHEN watermarks.delivered_seq < excluded.read_seq THEN excluded.read_seq ELSE watermarks.delivered_seq END \
         WHERE watermarks.read_seq < excluded.read_seq";
    /// Channels whose log goes past their webhook cursor: id, last seq,
    /// cursor (0 without a row), and the ts of the first entry after the
    /// cursor (the webhook lag in seconds).
    pub const WEBHOOK_BACKLOG: &str = "SELECT c.channel_id, c.last_seq, COALESCE(w.delivered_seq, 0), \
         (SELECT m.ts FROM messages m WHERE m.channel_id = c.channel_id AND m.seq = COALESCE(w.delivered_seq, 0) + 1) \
         FROM channels c LEFT JOIN webhook_cursors w ON w.channel_id = c.channel_id \
         WHERE c.last_seq > COALESCE(w.delivered_seq, 0)";
    /// Channel `$1`'s webhook cursor.
    pub const WEBHOOK_CURSOR: &str = "SELECT delivered_seq FROM webhook_cursors WHERE channel_id = $1";
    /// The first move of channel `$1`'s cursor, to `$2` at `$3` (ms): a row
    /// made meanwhile by someone else wins (no row affected).
    pub const WEBHOOK_CURSOR_FIRST: &str = "INSERT INTO webhook_cursors (channel_id, delivered_seq, updated_at) \
         VALUES ($1, $2, $3) ON CONFLICT (channel_id) DO NOTHING";
    /// Moves channel `$1`'s cursor from `$2` to `$3` at `$4` (ms), only
    /// when it is still at `$2` (an operator's replay, or another node,
    /// moved it otherwise: no row affected).
    pub const WEBHOOK_CURSOR_MOVE: &str =
        "UPDATE webhook_cursors SET delivered_seq = $3, updated_at = $4 WHERE channel_id = $1 AND delivered_seq = $2";
    pub const PING: &str = "SELECT 1";
    pub const LAST_SEQ: &str = "SELECT last_seq FROM channels WHERE channel_id = $1";
    /// Moves user `$1`'s `lastSeenAt` forward to `$2` (never back).
    pub const RECORD_LAST_SEEN: &str = "INSERT INTO presence (user_id, last_seen_at) VALUES ($1, $2) \
         ON CONFLICT (user_id) DO UPDATE SET last_seen_at = excluded.last_seen_at \
         WHERE presence.last_seen_at < excluded.last_seen_at";
}
