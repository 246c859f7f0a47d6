// A WebSocket without a server, for unit tests that feed the client frames by hand: each
// `new` is kept (a reconnect makes another), `receive` delivers a server frame, `drop`
// ends the connection as a network failure would.
import type { WebSocketConstructor, WebSocketLike } from '../../src/index.js';

export class FakeSocket implements WebSocketLike {
  readyState = 1;
  readonly url: string;
  /** The frames the client sent, parsed. */
  readonly sent: Record<string, unknown>[] = [];
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;

  constructor(url: string) {
    this.url = url;
  }

  send(data: string): void {
    this.sent.push(JSON.parse(data) as Record<string, unknown>);
  }

  close(): void {
    this.readyState = 3;
  }

  /** A server frame (an object, sent as its JSON; a string as it is). */
  receive(frame: object | string): void {
    this.onmessage?.({ data: typeof frame === 'string' ? frame : JSON.stringify(frame) });
  }

  /** The connection fails: the client reconnects (a new socket). */
  drop(): void {
    this.readyState = 3;
    this.onclose?.({ code: 1006, reason: '' });
  }
}

/** A constructor for the client's `WebSocket` option, and every socket it made, in order. */
export function fakeSockets(): { readonly Ctor: WebSocketConstructor; readonly sockets: FakeSocket[] } {
  const sockets: FakeSocket[] = [];
  class Made extends FakeSocket {
    constructor(url: string) {
      super(url);
      sockets.push(this);
    }
  }
  return { Ctor: Made, sockets };
}
