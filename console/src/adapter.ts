/**
 * What the console needs beyond the chatd-client package, kept here (the client is
 * used as it is):
 * - `crypto.randomUUID` exists only in secure contexts (https, localhost); a console
 *   opened over plain http on another host gets an RFC 4122 v4 from `getRandomValues`.
 * - Why a WebSocket did not open: browsers do not show the HTTP status of a refused
 *   upgrade, so the console asks `/readyz` and a user route with the same token, and
 *   tells "server down", "database down" and "token refused" apart. Behind a reverse
 *   proxy (docs/security.md's nginx block), `/readyz` is the proxy's 404 and a chatd that
 *   is down shows as the proxy's 502 or 504 on the user route: that is "server down" too.
 * - A version 1.1 operation refused with `unknown_type` leaves a failed record in the
 *   outbox: the chat view discards it and remembers the operation as unsupported.
 */

/** Installs `crypto.randomUUID` when the browser hides it (insecure context). */
export function ensureRandomUUID(): void {
  const c = globalThis.crypto as Crypto & { randomUUID?: () => string };
  if (typeof c.randomUUID === 'function') return;
  const uuid = (): `${string}-${string}-${string}-${string}-${string}` => {
    const b = c.getRandomValues(new Uint8Array(16));
    b[6] = ((b[6] ?? 0) & 0x0f) | 0x40;
    b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
    const x = [...b].map((v) => v.toString(16).padStart(2, '0')).join('');
    return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
  };
  Object.defineProperty(c, 'randomUUID', { value: uuid, configurable: true });
}

/** Why no session is open. */
export type Diagnosis =
  | { readonly kind: 'server_down' }
  | { readonly kind: 'database_down' }
  | { readonly kind: 'token'; readonly message: string }
  | { readonly kind: 'unknown' };

/** Asks the server why the WebSocket does not open (see the module comment). */
export async function diagnose(token: string): Promise<Diagnosis> {
  let ready: Response;
  try {
    ready = await fetch('/readyz', { cache: 'no-store' });
  } catch {
    return { kind: 'server_down' };
  }
  if (ready.status === 503) return { kind: 'database_down' };
  try {
    // A user route: 200 with a good token, 401 (with the reason) with any other.
    const r = await fetch('/v1/me/channels', {
      cache: 'no-store',
      headers: { authorization: `Bearer ${token}` },
    });
    if (r.status === 401) {
      const body = (await r.json().catch(() => ({}))) as { error?: { message?: string } };
      return { kind: 'token', message: body.error?.message ?? 'unauthorized' };
    }
    // a reverse proxy's "bad gateway" or "gateway timeout": chatd behind it does not answer
    if (r.status === 502 || r.status === 504) return { kind: 'server_down' };
  } catch {
    return { kind: 'server_down' };
  }
  return { kind: 'unknown' };
}
