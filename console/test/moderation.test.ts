// Browser tests of the console's moderation (protocol §17): Debian's Chromium driven by
// playwright-core, olive (the owner) and bob (a member) in their own browser contexts,
// against the real chatd. The moderator menu mutes bob for a time (his composer says until
// when and is off), unmutes him, bans him (his channel goes, "banned") and the bans list
// lifts it; olive's channel rules set slow mode, whose countdown bob sees while his message
// waits and then goes, and make the channel an announcement channel, whose refusal is said
// above bob's composer; Report sends a flag, Block hides the sender's messages and Unblock
// shows them again. Every assertion reads the page the user sees, and the server's own
// reads where it stores something.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { Browsers, CHAT_VIEWPORT, CONSOLE_ROOT, ChatdServer, message, openChannel, send, until } from './harness.js';

const SHOTS = join(CONSOLE_ROOT, 'test-output');

function member(page: Page, user: string): Locator {
  return page.locator(`#member-list li.member[data-user="${user}"]`);
}

describe('console moderation in a real browser (olive the owner, bob a member)', () => {
  let chatd: ChatdServer;
  const browsers = new Browsers();
  let olive: Page;
  let bob: Page;

  function signIn(user: string): Promise<Page> {
    return browsers.signInAs(chatd, user, { viewport: CHAT_VIEWPORT });
  }

  async function make(channelId: string): Promise<void> {
    const r = await chatd.admin('POST', '/v1/channels', { channelId, members: ['bob'], owners: ['olive'] });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    for (const p of [olive, bob]) await p.locator(`button.channel[data-channel="${channelId}"]`).waitFor();
    await openChannel(olive, channelId);
    await openChannel(bob, channelId);
  }

  before(async () => {
    chatd = await ChatdServer.start();
    await browsers.launch();
    olive = await signIn('olive');
    bob = await signIn('bob');
  });

  after(async () => {
    await browsers.close();
    await chatd?.dispose();
  });

  test('mute for a time: bob’s composer says until when and is off, his member row is marked; Unmute lets him send again', async () => {
    await make('mod-mute');
    // olive's menu on bob: a duration and Mute (a member has none on olive)
    await member(olive, 'bob').locator('select.member-mute-for').selectOption({ label: '1 hour' });
    await member(bob, 'olive').waitFor();
    assert.equal(await member(bob, 'olive').locator('button.member-mute').count(), 0, 'a member has no moderator menu');
    await member(olive, 'bob').locator('button.member-mute').click();
    await olive.locator('#member-action-status', { hasText: 'bob is muted for 1 hour.' }).waitFor();
    await member(olive, 'bob').locator('.muted-mark', { hasText: 'muted until' }).waitFor();
    await bob.locator('#posting-state[data-state="muted"]', { hasText: 'You are muted in this channel until' }).waitFor();
    assert.equal(await bob.locator('#composer').isDisabled(), true);
    assert.equal(await bob.locator('#send').isDisabled(), true);
    const stored = (await chatd.admin('GET', '/v1/channels/mod-mute/members')).json as { members: { userId: string; mutedUntil?: number }[] };
    const until1h = stored.members.find((m) => m.userId === 'bob')?.mutedUntil ?? 0;
    assert.ok(until1h > Date.now() + 50 * 60_000 && until1h < Date.now() + 70 * 60_000, `mutedUntil ${until1h}`);
    // the timeline says it too
    await bob.locator('#messages li.system[data-op="mute"]').waitFor();

    await member(olive, 'bob').locator('button.member-unmute').click();
    await olive.locator('#member-action-status', { hasText: 'bob is no longer muted.' }).waitFor();
    await bob.locator('#posting-state').waitFor({ state: 'hidden' });
    assert.equal(await bob.locator('#composer').isDisabled(), false);
    await send(bob, 'free to speak');
    await message(olive, 'free to speak').waitFor();
  });

  test('a mute that ends by the clock: the mark leaves olive’s member list and bob’s composer turns back on, with no frame', async () => {
    await make('mod-clock');
    const r = await chatd.admin('PUT', '/v1/channels/mod-clock/members/bob', { mutedUntil: Date.now() + 4000 });
    assert.equal(r.status, 204, JSON.stringify(r.json));
    await member(olive, 'bob').locator('.muted-mark').waitFor();
    await bob.locator('#posting-state[data-state="muted"]').waitFor();
    assert.equal(await bob.locator('#composer').isDisabled(), true);
    await member(olive, 'bob').locator('.muted-mark').waitFor({ state: 'detached', timeout: 20_000 });
    await member(olive, 'bob').locator('button.member-mute').waitFor();
    await bob.locator('#posting-state').waitFor({ state: 'hidden', timeout: 20_000 });
    assert.equal(await bob.locator('#composer').isDisabled(), false);
    await send(bob, 'back after the mute');
    await message(olive, 'back after the mute').waitFor();
  });

  test('the moderator menu on a message: olive mutes bob from his message (he sees it), a member gets no such menu', async () => {
    await make('mod-msg');
    await send(bob, 'spam from bob');
    await send(olive, 'order from olive');
    const bobs = message(olive, 'spam from bob');
    await bobs.waitFor();
    await bobs.locator('button.member-mute').waitFor();
    await bobs.locator('button.member-ban').waitFor();
    await message(bob, 'order from olive').waitFor();
    assert.equal(await message(bob, 'order from olive').locator('button.member-mute, button.member-ban').count(), 0, 'a member moderates nobody');
    await bobs.locator('select.member-mute-for').selectOption({ label: '1 day' });
    await bobs.locator('button.member-mute').click();
    await olive.locator('#notice', { hasText: 'bob is muted for 1 day.' }).waitFor();
    await bob.locator('#posting-state[data-state="muted"]').waitFor();
    mkdirSync(SHOTS, { recursive: true });
    await olive.screenshot({ path: join(SHOTS, 'console-moderation-owner.png') });
    await bob.screenshot({ path: join(SHOTS, 'console-moderation-muted.png') });
    const stored = (await chatd.admin('GET', '/v1/channels/mod-msg/members')).json as { members: { userId: string; mutedUntil?: number }[] };
    const until = stored.members.find((m) => m.userId === 'bob')?.mutedUntil ?? 0;
    assert.ok(until > Date.now() + 23 * 3_600_000 && until < Date.now() + 25 * 3_600_000, `mutedUntil ${until}`);
  });

  test('slow mode: the second message waits with a countdown above the composer, then is stored once; read-only is said after a refusal', async () => {
    await make('mod-slow');
    // olive, the owner, sets slow mode in the channel's rules (bob, a member, has no such form)
    await olive.locator('#rules-slow').selectOption({ label: 'slow mode 10 s' });
    await olive.locator('#rules-save').click();
    await olive.locator('#rules-status', { hasText: 'Now: everyone posts; slow mode 10 s.' }).waitFor();
    assert.equal(await bob.locator('#rules').isHidden(), true, 'a member has no rules form');
    await send(bob, 'slow one');
    await message(bob, 'slow one').waitFor();
    await send(bob, 'slow two');
    await bob.locator('#posting-state[data-state="slow"]', { hasText: /Slow mode: you can send again in \d+ s/ }).waitFor();
    assert.equal(await bob.locator('#composer').isDisabled(), false, 'slow mode leaves the composer on');
    await bob.locator('#messages li.msg[data-state="pending"]', { hasText: 'slow two' }).waitFor();
    await message(olive, 'slow two').waitFor({ timeout: 20_000 });
    await bob.locator('#posting-state').waitFor({ state: 'hidden' });
    const history = (await chatd.admin('GET', '/v1/channels/mod-slow/messages?afterSeq=0&limit=10')).json as { messages: { body: string }[] };
    assert.deepEqual(history.messages.map((m) => m.body), ['slow one', 'slow two']);

    // an announcement channel: bob's send is refused read_only, said on the message and above the composer
    await olive.locator('#rules-posting').selectOption('moderator');
    await olive.locator('#rules-slow').selectOption({ label: 'slow mode off' });
    await olive.locator('#rules-save').click();
    await olive.locator('#rules-status', { hasText: 'Now: only moderators post; no slow mode.' }).waitFor();
    // bob is told at once (CHANNEL_UPDATED), before he tries
    await bob.locator('#posting-state[data-state="read_only"]', { hasText: 'Only moderators post in this channel' }).waitFor();
    await send(bob, 'not allowed here');
    const failed = bob.locator('#messages li.msg[data-state="failed"]', { hasText: 'not allowed here' });
    await failed.locator('.meta.error', { hasText: 'Only moderators post in this channel' }).waitFor();
    await bob.locator('#posting-state[data-state="read_only"]', { hasText: 'Only moderators post in this channel' }).waitFor();
  });

  test('ban from the menu: bob’s channel goes (banned); the bans list shows him and Lift takes the ban away', async () => {
    await make('mod-ban');
    await member(olive, 'bob').locator('button.member-ban').click();
    await olive.locator('#member-action-status', { hasText: 'bob was banned.' }).waitFor();
    await member(olive, 'bob').waitFor({ state: 'detached' });
    await bob.locator('#notice', { hasText: 'You were banned from # mod-ban by olive' }).waitFor();
    await olive.locator('#bans-show').click();
    const row = olive.locator('#ban-list li.ban[data-user="bob"]');
    await row.locator('.hint', { hasText: 'by olive' }).waitFor();
    await row.locator('button.ban-lift').click();
    await olive.locator('#bans-status', { hasText: 'The ban of bob was lifted.' }).waitFor();
    assert.equal(await olive.locator('#ban-list li.ban').count(), 0);
    const bans = (await chatd.admin('GET', '/v1/channels/mod-ban/bans')).json as { bans: unknown[] };
    assert.deepEqual(bans.bans, []);
  });

  test('Report sends a flag (once); Block hides bob’s messages for olive, Unblock on his member row shows them again', async () => {
    await make('mod-report');
    await send(bob, 'buy cheap watches');
    const msg = message(olive, 'buy cheap watches');
    await msg.waitFor();
    await msg.locator('button.report').click();
    await msg.locator('select.report-reason').selectOption('spam');
    await msg.locator('input.report-note').fill('ads');
    await msg.locator('button.report-send').click();
    await msg.locator('.reported').waitFor();
    await olive.locator('#notice', { hasText: 'You reported bob’s message (spam)' }).waitFor();
    const flags = (await chatd.admin('GET', '/v1/flags')).json as { flags: { reporterId: string; reason: string; note?: string; channelId: string }[] };
    assert.deepEqual(
      flags.flags.filter((f) => f.channelId === 'mod-report').map((f) => [f.reporterId, f.reason, f.note]),
      [['olive', 'spam', 'ads']],
    );

    await message(olive, 'buy cheap watches').locator('button.block').click();
    await olive.locator('#messages li.msg.blocked[data-sender="bob"]', { hasText: 'whom you block, is hidden' }).waitFor();
    assert.equal(await message(olive, 'buy cheap watches').count(), 0, 'the text is not shown');
    const blocks = await fetch(`${chatd.httpUrl}/v1/me/blocks`, { headers: { authorization: `Bearer ${await chatd.token('olive')}` } });
    assert.deepEqual(await blocks.json(), { blocks: ['bob'] }, 'stored on the server');
    // Unblock from bob's member row
    await member(olive, 'bob').locator('button.member-unblock').click();
    await olive.locator('#member-action-status', { hasText: 'You no longer block bob.' }).waitFor();
    await message(olive, 'buy cheap watches').waitFor();
    await until(async () => (await olive.locator('#messages li.msg.blocked').count()) === 0, 'no hidden message left');
  });
});
