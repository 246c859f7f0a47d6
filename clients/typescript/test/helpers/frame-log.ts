// A client's connection log for a test's failure message: a `WebSocket` option that wraps
// `ws` and notes, with the time since the log began, each socket opened and closed, each
// HELLO (the watched channel's lastSeq), SYNC, SYNC_BATCH and ERROR, and the live MSG_RECVs
// of the watched channel as seq ranges. What a receiver asked and was told, when it falls
// short of the newest messages.
import WebSocket from 'ws';
import type { WebSocketConstructor, WebSocketLike } from '../../src/index.js';

/** The log and the constructor to pass as the client's `WebSocket` option. */
export interface FrameLog {
  readonly WebSocket: WebSocketConstructor;
  /** The lines so far, oldest first (live seq runs folded). */
  lines(): string[];
}

/** A log of what a client's sockets carried for channel `channelId`. */
export function frameLog(channelId: string): FrameLog {
  const t0 = Date.now();
  const out: string[] = [];
  let sockets = 0;
  // the run of live MSG_RECV seqs being folded into one line
  let run: { conn: number; first: number; last: number; n: number } | undefined;
  const flush = (): void => {
    if (run === undefined) return;
    out.push(`#${run.conn} MSG_RECV ${run.first}..${run.last} (${run.n})`);
    run = undefined;
  };
  const note = (conn: number, line: string): void => {
    flush();
    out.push(`+${Date.now() - t0}ms #${conn} ${line}`);
  };
  const onServer = (conn: number, text: string): void => {
    let f: Record<string, unknown>;
    try {
      f = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    }
    const num = (v: unknown): string => (typeof v === 'number' ? String(v) : '-');
    switch (f.type) {
      case 'HELLO': {
        const chans = Array.isArray(f.channels) ? (f.channels as Record<string, unknown>[]) : [];
        const c = chans.find((x) => x.channelId === channelId);
        note(conn, `HELLO lastSeq ${num(c?.lastSeq)}`);
        break;
      }
      case 'SYNC_BATCH': {
        if (f.channelId !== channelId) return;
        const ms = Array.isArray(f.messages) ? (f.messages as Record<string, unknown>[]) : [];
        note(conn, `SYNC_BATCH ${ms.length} (${num(ms[0]?.seq)}..${num(ms[ms.length - 1]?.seq)}) lastSeq ${num(f.lastSeq)} hasMore ${String(f.hasMore)}`);
        break;
      }
      case 'ERROR':
        note(conn, `ERROR ${String(f.code)} channel ${String(f.channelId)} clientMsgId ${String(f.clientMsgId)}`);
        break;
      case 'MSG_RECV': {
        if (f.channelId !== channelId || typeof f.seq !== 'number') return;
        if (run !== undefined && run.conn === conn && f.seq === run.last + 1) {
          run.last = f.seq;
          run.n++;
        } else {
          flush();
          run = { conn, first: f.seq, last: f.seq, n: 1 };
        }
        break;
      }
      default:
        break;
    }
  };
  class Logged implements WebSocketLike {
    private readonly ws: WebSocket;
    private readonly conn = ++sockets;
    onopen: ((ev: unknown) => void) | null = null;
    onmessage: ((ev: { data: unknown }) => void) | null = null;
    onclose: ((ev: { code: number; reason: string }) => void) | null = null;
    onerror: ((ev: unknown) => void) | null = null;

    constructor(url: string) {
      this.ws = new WebSocket(url);
      note(this.conn, 'socket');
      this.ws.onopen = (ev) => this.onopen?.(ev);
      this.ws.onerror = (ev) => this.onerror?.(ev);
      this.ws.onclose = (ev) => {
        note(this.conn, `closed ${ev.code}`);
        this.onclose?.(ev);
      };
      this.ws.onmessage = (ev) => {
        const d = ev.data;
        const text = typeof d === 'string' ? d : Buffer.isBuffer(d) ? d.toString('utf8') : Buffer.concat(Array.isArray(d) ? d : [Buffer.from(d)]).toString('utf8');
        onServer(this.conn, text);
        this.onmessage?.({ data: text });
      };
    }

    get readyState(): number {
      return this.ws.readyState;
    }

    send(data: string): void {
      if (data.includes('"SYNC"') && data.includes(channelId)) note(this.conn, data);
      this.ws.send(data);
    }

    close(code?: number, reason?: string): void {
      this.ws.close(code, reason);
    }
  }
  return {
    WebSocket: Logged,
    lines: () => {
      flush();
      return [...out];
    },
  };
}
