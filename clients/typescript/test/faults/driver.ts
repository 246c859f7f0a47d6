/**
 * The SDK's device for the fault harness (`crates/chatd-faults`, `--sdk-driver`): one
 * {@link ChatClient} in Node with `ws`, driven by JSON commands on stdin (one a line), and
 * reporting what the SDK did as JSON lines on stdout, for the harness's checker.
 *
 * Usage: `node build/test/faults/driver.js --url ws://host:port/v1/ws --token JWT
 *   --channels a,b,c [--reply-timeout-ms 5000]`
 *
 * Commands (stdin):
 * - `{"op":"send","key","channelId","body"}`, `{"op":"edit","key","channelId","messageId","body"}`,
 *   `{"op":"delete","key","channelId","messageId"}`,
 *   `{"op":"react","key","channelId","messageId","emoji","add"}`: through the outbox with
 *   `clientMsgId` = `key`;
 * - `{"op":"read","channelId"}`: `markRead`;
 * - `{"op":"reconnect"}`: drop the connection (a storm);
 * - `{"op":"states"}`: report every held message's folded state;
 * - `{"op":"close"}`: close the client and exit.
 *
 * Reports (stdout), `t` naming each:
 * - `ready` once started, connected and every channel's store is open;
 * - `hello` `{channels}` per session (HELLO's channels);
 * - `entries` `{channelId, entries}`: the SDK's `entries` event (handed to the app: each once,
 *   in seq order);
 * - `receipt` `{...}`: every RECEIPT frame the server sent (read off the socket);
 * - `ack` `{key, messageId, channelId, seq, ts, duplicate}`; `refused` `{key, code, message}`
 *   (a non-retryable error); `failed` `{key, why}` (anything else);
 * - `states` `{channels: {channelId: Message[]}}`;
 * - `closed`.
 */
import { createInterface } from 'node:readline';
import WebSocket from 'ws';
import { ChatClient, ChatdError, type SentEntry, type WebSocketConstructor, type WebSocketLike } from '../../src/index.js';

interface Args {
  url: string;
  token: string;
  channels: string[];
  replyTimeoutMs: number;
}

function parseArgs(argv: readonly string[]): Args {
  const get = (name: string): string | undefined => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const url = get('url');
  const token = get('token');
  if (url === undefined || token === undefined) {
    throw new Error('usage: driver.js --url WS_URL --token JWT --channels a,b [--reply-timeout-ms N]');
  }
  const channels = (get('channels') ?? '').split(',').filter((c) => c !== '');
  const replyTimeoutMs = Number(get('reply-timeout-ms') ?? '5000');
  return { url, token, channels, replyTimeoutMs };
}

function emit(report: Record<string, unknown>): void {
  process.stdout.write(JSON.stringify(report) + '\n');
}

/**
 * A `ws` socket that reports every RECEIPT frame the SDK reads. Frames that still arrive on
 * a socket the SDK closed (a reconnect) are not reported: the SDK ignores them too, and they
 * belong to the server's old session.
 */
function tappingWebSocket(): WebSocketConstructor {
  return class Tapped implements WebSocketLike {
    onopen: ((ev: unknown) => void) | null = null;
    onmessage: ((ev: { data: unknown }) => void) | null = null;
    onclose: ((ev: { code: number; reason: string }) => void) | null = null;
    onerror: ((ev: unknown) => void) | null = null;
    private readonly ws: WebSocket;
    private closedByClient = false;

    constructor(url: string) {
      this.ws = new WebSocket(url);
      this.ws.onopen = (ev) => this.onopen?.(ev);
      this.ws.onmessage = (ev) => {
        const text = typeof ev.data === 'string' ? ev.data : Buffer.from(ev.data as ArrayBuffer).toString('utf8');
        if (!this.closedByClient && text.includes('"RECEIPT"')) {
          const frame = JSON.parse(text) as { type?: string };
          if (frame.type === 'RECEIPT') emit({ ...frame, t: 'receipt' });
        }
        this.onmessage?.({ data: text });
      };
      this.ws.onclose = (ev) => this.onclose?.({ code: ev.code, reason: ev.reason });
      this.ws.onerror = (ev) => this.onerror?.(ev);
    }

    get readyState(): number {
      return this.ws.readyState;
    }

    send(data: string): void {
      this.ws.send(data);
    }

    close(code?: number, reason?: string): void {
      this.closedByClient = true;
      this.ws.close(code, reason);
    }
  };
}

interface Command {
  op: string;
  key?: string;
  channelId?: string;
  messageId?: string;
  body?: string;
  emoji?: string;
  add?: boolean;
  /** `send`: quote this message (protocol §14). */
  replyTo?: string;
  /** `send`: answer in this root's thread (protocol §14). */
  threadId?: string;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const client = new ChatClient({
    url: args.url,
    token: args.token,
    WebSocket: tappingWebSocket(),
    reconnectBackoff: { baseMs: 20, maxMs: 1000 },
    retryBackoff: { baseMs: 20, maxMs: 1000 },
    replyTimeoutMs: args.replyTimeoutMs,
    autoDelivered: true,
    tabSync: false,
  });
  client.events.on('hello', (h) => {
    emit({ t: 'hello', channels: h.channels });
  });
  client.events.on('entries', (channelId, entries) => {
    emit({ t: 'entries', channelId, entries });
  });
  await client.start();
  await client.whenOpen();
  const stores = args.channels.map((c) => client.channel(c));
  await new Promise<void>((resolve) => {
    const check = (): void => {
      if (stores.every((s) => s.getSnapshot().status === 'ready')) {
        clearInterval(timer);
        resolve();
      }
    };
    const timer = setInterval(check, 20);
    check();
  });
  emit({ t: 'ready' });

  const settle = (key: string, p: Promise<SentEntry>): void => {
    p.then(
      (a) => {
        emit({ t: 'ack', key, messageId: a.messageId, channelId: a.channelId, seq: a.seq, ts: a.ts, duplicate: a.duplicate });
      },
      (e: unknown) => {
        if (e instanceof ChatdError && !e.retryable && e.code !== 'closed' && e.code !== 'aborted') {
          emit({ t: 'refused', key, code: e.code, message: e.message });
        } else {
          emit({ t: 'failed', key, why: String(e) });
        }
      },
    );
  };

  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    if (line.trim() === '') continue;
    const c = JSON.parse(line) as Command;
    const key = c.key ?? '';
    const channelId = c.channelId ?? '';
    const messageId = c.messageId ?? '';
    const opts = { clientMsgId: key };
    switch (c.op) {
      case 'send':
        settle(key, client.send(channelId, c.body ?? '', { ...opts, replyTo: c.replyTo, threadId: c.threadId }));
        break;
      case 'edit':
        settle(key, client.edit(channelId, messageId, c.body ?? '', opts));
        break;
      case 'delete':
        settle(key, client.deleteMessage(channelId, messageId, opts));
        break;
      case 'react':
        settle(key, client.react(channelId, messageId, c.emoji ?? '', c.add === false ? 'remove' : 'add', opts));
        break;
      case 'read':
        client.markRead(channelId);
        break;
      case 'reconnect':
        client.reconnect();
        break;
      case 'states': {
        const channels: Record<string, unknown> = {};
        for (const s of stores) {
          const snap = s.getSnapshot();
          channels[snap.channelId] = snap.messages;
        }
        emit({ t: 'states', channels });
        break;
      }
      case 'close':
        client.close();
        emit({ t: 'closed' });
        process.exit(0);
        break;
      default:
        process.stderr.write(`unknown command ${line}\n`);
    }
  }
  // stdin closed: the harness is gone
  client.close();
  process.exit(0);
}

main().catch((e: unknown) => {
  process.stderr.write(`driver failed: ${String(e)}\n`);
  process.exit(2);
});
