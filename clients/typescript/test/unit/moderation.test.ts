// A moderator's or owner's delete of another member's message (protocol §13.1, §17) without
// a server: `mayDelete` follows the user's role in the channel list (HELLO, the user's own
// MEMBER role frames), `deleteMessage` sends MSG_DELETE for anyone's message (the server
// judges), its ACK folds the deletion into the store, and a delete entry whose sender is not
// the message's author (another moderator's) deletes it on every member's screen.
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import type { WireEntry } from '../../src/index.js';
import { entry, open, restoreFetch, tick } from '../helpers/fakes.js';

afterEach(restoreFetch);

function msg(seq: number, senderId: string, over: Partial<WireEntry> = {}): WireEntry {
  return { type: 'MSG_RECV', messageId: `m${seq}`, channelId: 'room', senderId, seq, body: `hello ${seq}`, ts: 1000 + seq, clientMsgId: `c${seq}`, kind: 'message', reactions: [], ...over };
}

test('moderator: mayDelete offers others’ messages to a moderator or owner only; deleteMessage of bob’s message is sent and folded on its ACK', async () => {
  const h = await open([entry('room', { role: 'moderator', lastSeq: 2 }), entry('plain', { role: 'member', lastSeq: 1 })]);
  try {
    const store = h.client.channel('room');
    await tick();
    h.ws().receive({ type: 'SYNC_BATCH', channelId: 'room', messages: [msg(1, 'bob'), msg(2, 'alice')], hasMore: false, lastSeq: 2 });
    const [bobs, mine] = store.getSnapshot().messages;
    assert.ok(bobs !== undefined && mine !== undefined);
    assert.equal(h.client.mayDelete(bobs), true, 'a moderator may delete bob’s message');
    assert.equal(h.client.mayDelete(mine), true);
    // in a channel where the user is a member: only its own
    assert.equal(h.client.mayDelete({ channelId: 'plain', senderId: 'bob', deleted: false }), false);
    assert.equal(h.client.mayDelete({ channelId: 'plain', senderId: 'alice', deleted: false }), true);
    assert.equal(h.client.mayDelete({ channelId: 'unknown', senderId: 'bob', deleted: false }), false);

    const done = h.client.deleteMessage('room', 'm1', { clientMsgId: 'del-1' });
    await tick();
    const sent = h.ws().sent.filter((f) => f.type === 'MSG_DELETE');
    assert.deepEqual(sent, [{ type: 'MSG_DELETE', clientMsgId: 'del-1', messageId: 'm1' }]);
    h.ws().receive({ type: 'MSG_ACK', clientMsgId: 'del-1', messageId: 'd3', channelId: 'room', seq: 3, ts: 2000, duplicate: false });
    assert.equal((await done).seq, 3);
    const after = store.getSnapshot().messages.find((m) => m.messageId === 'm1');
    assert.equal(after?.deleted, true);
    assert.equal(after?.body, '');
    assert.equal(after !== undefined && h.client.mayDelete(after), false, 'a deleted message is not offered again');

    // the user's role goes back to member: bob's messages are no longer offered, its own still are
    h.ws().receive({ type: 'MEMBER', channelId: 'room', userId: 'alice', op: 'role', role: 'member', afterSeq: 3, ts: 2001 });
    h.ws().receive(msg(4, 'bob'));
    const bob4 = store.getSnapshot().messages.find((m) => m.messageId === 'm4');
    assert.ok(bob4 !== undefined);
    assert.equal(h.client.mayDelete(bob4), false);
    assert.equal(h.client.mayDelete(mine), true);
    // an owner again (a MEMBER role frame): offered
    h.ws().receive({ type: 'MEMBER', channelId: 'room', userId: 'alice', op: 'role', role: 'owner', afterSeq: 4, ts: 2002 });
    assert.equal(h.client.mayDelete(bob4), true);
  } finally {
    h.client.close();
  }
});

test('moderator: a delete entry stored by another moderator deletes bob’s message on this member’s screen', async () => {
  const h = await open([entry('room', { lastSeq: 1 })]);
  try {
    const store = h.client.channel('room');
    await tick();
    h.ws().receive({ type: 'SYNC_BATCH', channelId: 'room', messages: [msg(1, 'bob')], hasMore: false, lastSeq: 1 });
    h.ws().receive(msg(2, 'carol', { kind: 'delete', body: '', targetId: 'm1' }));
    const m = store.getSnapshot().messages.find((x) => x.messageId === 'm1');
    assert.equal(m?.deleted, true);
    assert.equal(m?.body, '');
    assert.equal(m?.senderId, 'bob', 'the message keeps its author');
  } finally {
    h.client.close();
  }
});

test('rules: postingRole and slowModeMs come from HELLO, CHANNEL_ADDED and CHANNEL_UPDATED, before any refusal', async () => {
  const h = await open([entry('news', { postingRole: 'moderator', slowModeMs: 0 }), entry('old', {})]);
  try {
    const updates: string[] = [];
    h.client.events.on('channelUpdated', (f) => updates.push(`${f.channelId}:${f.postingRole}:${f.slowModeMs}`));
    const news = h.client.channel('news');
    await tick();
    assert.equal(news.getSnapshot().moderation.postingRole, 'moderator', 'from HELLO');
    assert.equal(news.getSnapshot().moderation.slowModeMs, 0);
    // an older server's entry says nothing: nothing is assumed
    assert.equal(h.client.channel('old').getSnapshot().moderation.postingRole, undefined);
    h.ws().receive({ type: 'CHANNEL_UPDATED', channelId: 'news', name: null, metadata: null, visibility: 'private', postingRole: 'member', slowModeMs: 30000 });
    assert.equal(news.getSnapshot().moderation.postingRole, 'member', 'from CHANNEL_UPDATED');
    assert.equal(news.getSnapshot().moderation.slowModeMs, 30000);
    assert.deepEqual(updates, ['news:member:30000']);
    h.ws().receive({ type: 'CHANNEL_ADDED', channel: entry('fresh', { postingRole: 'moderator', slowModeMs: 5000 }) });
    const fresh = h.client.channel('fresh').getSnapshot().moderation;
    assert.deepEqual([fresh.postingRole, fresh.slowModeMs], ['moderator', 5000], 'from CHANNEL_ADDED');
    // a malformed frame changes nothing
    h.ws().receive({ type: 'CHANNEL_UPDATED', channelId: 'news', name: null, metadata: null, visibility: 'private', postingRole: 7, slowModeMs: -1 });
    assert.equal(news.getSnapshot().moderation.postingRole, 'member');
    assert.equal(news.getSnapshot().moderation.slowModeMs, 30000);
  } finally {
    h.client.close();
  }
});
