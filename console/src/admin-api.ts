/**
 * The admin view's HTTP helpers: the admin token (kept in this module's memory only:
 * never in storage, never in a URL; reloading the page forgets it), requests made with
 * it, the words for a refusal, and the small form pieces every admin card uses.
 */
import { h } from './dom.js';

let adminToken: string | undefined;

/** The admin token this page holds, if any. */
export function currentAdminToken(): string | undefined {
  return adminToken;
}

/** Holds `token` as the admin token (`undefined` forgets it). */
export function setAdminToken(token: string | undefined): void {
  adminToken = token;
}

/** An answer of the admin API: its HTTP status and its body, parsed (the text when it is not JSON; `undefined` when empty). */
export interface ApiResult {
  readonly status: number;
  readonly json: unknown;
}

/** The `fetch` options of an admin request (`method`, the admin token, never cached). */
export function adminInit(method: string): RequestInit {
  return { method, cache: 'no-store', headers: { authorization: `Bearer ${adminToken ?? ''}` } };
}

/** Makes an admin request to `path` (same origin) with an optional JSON body; throws only when the server cannot be reached. */
export async function api(method: string, path: string, body?: unknown): Promise<ApiResult> {
  const init = adminInit(method);
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] = 'application/json';
  }
  const r = await fetch(path, init);
  return { status: r.status, json: await parsedBody(r) };
}

/** A response's body: parsed JSON, the text when it is not JSON, `undefined` when empty. */
export async function parsedBody(r: Response): Promise<unknown> {
  const text = await r.text();
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return text;
  }
}

/** The server's `error.message` of a refusal, if it sent one. */
export function errorMessage(r: ApiResult): string | undefined {
  return (r.json as { error?: { code?: string; message?: string } } | undefined)?.error?.message;
}

/** The words for an admin API refusal. */
export function apiError(r: ApiResult): string {
  const msg = errorMessage(r) ?? `HTTP ${r.status}`;
  switch (r.status) {
    case 401:
      return 'The admin token was refused: check it (CHATD_ADMIN_TOKEN, or admin_token in <data_dir>/secrets.toml).';
    case 403:
      return 'This is a user token, not the admin token.';
    case 404:
      return `No such channel (${msg}).`;
    case 409:
      return 'A channel with this id already exists.';
    case 400:
      return `The server refused this: ${msg}.`;
    case 503:
      return 'The server cannot reach its database right now; try again.';
    default:
      return `Failed: ${msg} [${r.status}].`;
  }
}

/** Shows `content` in a card's result line, marked as success or failure (`data-ok`). */
export function result(el: HTMLElement, ok: boolean, ...content: (Node | string)[]): void {
  el.dataset.ok = String(ok);
  el.replaceChildren(...content);
}

/** Runs `f`, showing in `out` that the server cannot be reached when it throws. */
export async function guarded(out: HTMLElement, f: () => Promise<void>): Promise<void> {
  try {
    await f();
  } catch {
    result(out, false, 'The server cannot be reached (is chatd running?).');
  }
}

/** A labelled text input of an admin card. */
export function field(id: string, label: string, placeholder: string): [HTMLLabelElement, HTMLInputElement] {
  return [h('label', { for: id }, label), h('input', { id, placeholder, autocomplete: 'off', spellcheck: 'false' })];
}
