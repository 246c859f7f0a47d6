// The client's upload queue against the real chatd bounding each user's uploads in progress
// (max_uploads_in_flight_per_user = 1, CHATD_MAX_UPLOADS_IN_FLIGHT_PER_USER): five files
// uploaded at once through one client all succeed, in the order given, while another
// "tab" of the user holds the server's only slot for a while (its upload's body held open):
// the server refuses the client 429 rate_limited/uploads_in_flight and the client tries
// again until it passes. A 429 without that reason (max_unclaimed_upload_bytes) still fails
// at once, with one request.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ChatdError, type ChatClient } from '../../src/index.js';
import { ChatdServer, storeKinds } from '../helpers/server.js';
import { makeClient } from '../helpers/clients.js';
import { holdUploadSlots } from '../helpers/held-uploads.js';

/** The answers to the upload route seen through `fetch`, by status, while `record` is on. */
interface Seen {
  readonly statuses: number[];
  readonly reasons: (string | undefined)[];
}

/** Wraps fetch to record each upload answer's status and reason (the body read from a clone). */
function watchUploads(): { seen: Seen; restore: () => void } {
  const real = globalThis.fetch;
  const seen: Seen = { statuses: [], reasons: [] };
  globalThis.fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const res = await real(input, init);
    const url = typeof input === 'string' ? input : input instanceof URL ? input.toString() : input.url;
    if (init?.method === 'POST' && url.includes('/attachments')) {
      seen.statuses.push(res.status);
      const body = res.status === 429 ? ((await res.clone().json()) as { error?: { reason?: string } }) : undefined;
      seen.reasons.push(body?.error?.reason);
    }
    return res;
  };
  return {
    seen,
    restore: () => {
      globalThis.fetch = real;
    },
  };
}

for (const store of storeKinds()) {
  describe(`upload queue against max_uploads_in_flight_per_user (${store})`, () => {
    let server: ChatdServer;
    const clients: ChatClient[] = [];
    before(async () => {
      server = await ChatdServer.start({
        store,
        env: { CHATD_MAX_UPLOADS_IN_FLIGHT_PER_USER: '1', CHATD_MAX_UNCLAIMED_UPLOAD_BYTES: '100000' },
      });
      const r = await server.admin('POST', '/v1/channels', { channelId: 'uq-room', members: ['alice', 'bob'] });
      assert.equal(r.status, 201, JSON.stringify(r.json));
    });
    after(async () => {
      for (const c of clients) c.close();
      await server.dispose();
    });

    test('five files at once through one client, the server bound at 1 and another tab holding it a while: all stored, in order, after 429 uploads_in_flight refusals tried again', async (t) => {
      const alice = await makeClient(server, 'alice', { uploadRetryBackoff: { baseMs: 100, maxMs: 1000 } });
      clients.push(alice);
      // another tab of alice: an upload whose body stays open, holding the server's one slot
      const other = await holdUploadSlots(server, 'alice', 'uq-room', 1);
      t.after(() => {
        other.endAll();
      });

      const w = watchUploads();
      try {
        const names = ['f1.txt', 'f2.txt', 'f3.txt', 'f4.txt', 'f5.txt'];
        const calls = names.map((n, i) => alice.attachments.upload('uq-room', new Blob([`file ${i + 1} `.repeat(200)], { type: 'text/plain' }), { filename: n }));
        // the other tab's upload ends after a while; the client's wait meanwhile
        await new Promise((r) => setTimeout(r, 1500));
        assert.ok(w.seen.statuses.length >= 1, 'the client tried while the slot was held');
        assert.ok(
          w.seen.statuses.every((s): boolean => s === 429),
          `all refused while the other tab holds the slot: ${JSON.stringify(w.seen)}`,
        );
        const otherRes = await other.release(0);
        assert.equal(otherRes.status, 201, await otherRes.clone().text());
        const done = await Promise.all(calls);
        assert.deepEqual(
          done.map((a) => a.filename),
          names,
        );
        assert.deepEqual(
          done.map((a) => a.size),
          names.map((_n, i) => `file ${i + 1} `.repeat(200).length),
        );
        assert.equal(w.seen.statuses.filter((s) => s === 201).length, 5, JSON.stringify(w.seen));
        const refused = w.seen.statuses.filter((s) => s === 429).length;
        assert.ok(refused >= 1, JSON.stringify(w.seen));
        assert.ok(
          w.seen.reasons.every((r, i) => w.seen.statuses[i] !== 429 || r === 'uploads_in_flight'),
          JSON.stringify(w.seen),
        );
        // all five were sendable uploads of the channel
        const sent = await alice.send('uq-room', 'five files', { attachments: done });
        assert.ok(sent.seq >= 1);
      } finally {
        w.restore();
      }
    });

    test('a 429 without reason uploads_in_flight (past max_unclaimed_upload_bytes) fails at once, with one request', async () => {
      const alice = await makeClient(server, 'alice', { uploadRetryBackoff: { baseMs: 100, maxMs: 1000 } });
      clients.push(alice);
      const w = watchUploads();
      try {
        await assert.rejects(alice.attachments.upload('uq-room', new Blob([new Uint8Array(150_000)], { type: 'text/plain' }), { filename: 'big.txt' }), (e: unknown) => {
          assert.ok(e instanceof ChatdError);
          assert.equal(e.code, 'rate_limited', e.message);
          assert.equal(e.reason, undefined);
          assert.match(e.message, /max_unclaimed_upload_bytes/);
          return true;
        });
        await new Promise((r) => setTimeout(r, 300));
        assert.deepEqual(w.seen.statuses, [429]);
      } finally {
        w.restore();
      }
    });
  });
}
