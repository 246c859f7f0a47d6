/**
 * The admin view's "Export a user's data" card (protocol §19, `GET /v1/users/{userId}/export`):
 * the NDJSON the server streams is read chunk by chunk into a Blob, its lines tallied as
 * they come (messages, memberships, reactions, attachments), and saved as
 * `chatd-export-<userId>.ndjson`. The last line must be `{"type":"end","count":N}` with N
 * the number of lines before it; a body without it was cut off (the server failed after
 * the first byte, or the connection broke), and the card says so instead of saving it as
 * the export.
 */
import { adminInit, apiError, errorMessage, field, parsedBody, result, type ApiResult } from './admin-api.js';
import { h } from './dom.js';

/** The line kinds of an export, in the order the server writes them. */
const KINDS = ['message', 'membership', 'reaction', 'attachment'] as const;
type Kind = (typeof KINDS)[number];

/** Counts an export's lines as its text arrives. */
export class ExportTally {
  /** Lines of each kind before the end line. */
  readonly counts: Record<Kind, number> = { message: 0, membership: 0, reaction: 0, attachment: 0 };
  /** Lines before the end line (all kinds, unknown ones too). */
  lines = 0;
  /** The end line's `count`, once it has come. */
  end: number | undefined;
  /** Lines that are not a JSON object with a `type`, or that come after the end line. */
  bad = 0;
  private partial = '';

  /** Takes the next piece of the body's text. */
  feed(text: string): void {
    const parts = (this.partial + text).split('\n');
    this.partial = parts.pop() ?? '';
    for (const line of parts) this.line(line);
  }

  /** The body has ended: a last line without its newline counts too. */
  finish(): void {
    if (this.partial !== '') this.line(this.partial);
    this.partial = '';
  }

  /** The export is whole: it ends with its end line, which counts every line before it. */
  get complete(): boolean {
    return this.end !== undefined && this.end === this.lines && this.bad === 0;
  }

  private line(raw: string): void {
    if (raw.trim() === '') return;
    if (this.end !== undefined) {
      this.bad += 1;
      return;
    }
    let v: unknown;
    try {
      v = JSON.parse(raw);
    } catch {
      this.bad += 1;
      return;
    }
    const type = typeof v === 'object' && v !== null ? (v as { type?: unknown }).type : undefined;
    if (typeof type !== 'string') {
      this.bad += 1;
      return;
    }
    if (type === 'end') {
      const n = (v as { count?: unknown }).count;
      this.end = typeof n === 'number' ? n : -1;
      return;
    }
    this.lines += 1;
    if ((KINDS as readonly string[]).includes(type)) this.counts[type as Kind] += 1;
  }
}

function plural(n: number, one: string): string {
  return `${n} ${one}${n === 1 ? '' : 's'}`;
}

/** "3 messages, 1 membership, …" of a tally. */
function kindsWords(t: ExportTally): string {
  return KINDS.map((k) => plural(t.counts[k], k)).join(', ');
}

/** The words for a refused export of `userId`. */
function exportError(userId: string, r: ApiResult): string {
  switch (r.status) {
    case 400:
      return `“${userId}” is not a user id chatd accepts (${errorMessage(r) ?? 'invalid_field'}).`;
    case 404:
      return 'This chatd has no export route (it is older than protocol 1.2).';
    default:
      return apiError(r);
  }
}

/** The export file's name for `userId`. */
export function exportFileName(userId: string): string {
  return `chatd-export-${userId}.ndjson`;
}

/** The "Export a user's data" card; `note` adds a line to the page's log. */
export function exportCard(note: (s: string) => void): HTMLElement {
  const [lu, user] = field('export-user', 'User id', 'e.g. alice');
  const button = h('button', { type: 'submit', class: 'primary', id: 'export-start' }, 'Export data');
  const out = h('div', { class: 'result', id: 'export-result', role: 'status', 'aria-live': 'polite' });
  /** The object URL of the last file (revoked when the next export starts). */
  let fileUrl: string | undefined;

  const run = async (userId: string): Promise<void> => {
    out.dataset.state = 'downloading';
    result(out, true, `Exporting ${userId}…`);
    const r = await fetch(`/v1/users/${encodeURIComponent(userId)}/export`, adminInit('GET'));
    if (r.status !== 200 || r.body === null) {
      const answer = { status: r.status, json: await parsedBody(r) };
      out.dataset.state = 'failed';
      result(out, false, exportError(userId, answer));
      return;
    }
    const tally = new ExportTally();
    const parts: Uint8Array[] = [];
    const decoder = new TextDecoder();
    const reader = r.body.getReader();
    let broke = false;
    let shown = 0;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parts.push(value);
        tally.feed(decoder.decode(value, { stream: true }));
        if (Date.now() - shown > 250) {
          shown = Date.now();
          result(out, true, `Exporting ${userId}… ${plural(tally.lines, 'line')} so far.`);
        }
      }
    } catch {
      broke = true;
    }
    tally.feed(decoder.decode());
    tally.finish();
    const file = new Blob(parts as BlobPart[], { type: 'application/x-ndjson' });
    if (fileUrl !== undefined) URL.revokeObjectURL(fileUrl);
    fileUrl = URL.createObjectURL(file);
    if (!tally.complete) {
      const why =
        tally.end === undefined
          ? `it has no end line, so it was cut off${broke ? ' (the connection broke)' : ' (the server stopped partway)'} after ${plural(tally.lines, 'line')}`
          : tally.bad > 0
            ? `${plural(tally.bad, 'line')} in it could not be read`
            : `its end line counts ${tally.end} lines but ${tally.lines} came`;
      out.dataset.state = 'incomplete';
      result(
        out,
        false,
        h('p', {}, `The export of ${userId} is not complete: ${why}. Export again.`),
        h('p', {}, h('a', { href: fileUrl, download: exportFileName(userId).replace(/\.ndjson$/, '.partial.ndjson'), class: 'export-partial' }, 'Save what arrived anyway')),
      );
      note(`export of ${userId} cut off`);
      return;
    }
    const link = h('a', { href: fileUrl, download: exportFileName(userId), class: 'export-link', id: 'export-link', 'data-count': tally.lines }, `Save ${exportFileName(userId)} again`);
    out.dataset.state = 'done';
    result(
      out,
      true,
      h(
        'p',
        {},
        tally.lines === 0
          ? `Exported ${userId}: chatd holds nothing for this user (the file has only its end line, count 0).`
          : `Exported ${userId}: ${plural(tally.lines, 'line')} (${kindsWords(tally)}), and the end line counts ${tally.end ?? 0}: the file is complete.`,
      ),
      h('p', {}, link),
      h('p', { class: 'hint' }, 'Attachment links in the file work without a token until they expire (attachment_url_ttl_secs).'),
    );
    link.click();
    note(`exported ${userId} (${plural(tally.lines, 'line')})`);
  };

  return h(
    'form',
    {
      class: 'card',
      'aria-labelledby': 'export-title',
      onsubmit: (ev: Event) => {
        ev.preventDefault();
        const userId = user.value.trim();
        if (userId === '') {
          result(out, false, 'Enter the id of the user whose data to export.');
          return;
        }
        button.disabled = true;
        void run(userId)
          .catch(() => {
            out.dataset.state = 'failed';
            result(out, false, 'The server cannot be reached (is chatd running?).');
          })
          .finally(() => {
            button.disabled = false;
          });
      },
    },
    h('h2', { id: 'export-title' }, 'Export a user’s data'),
    h('p', { class: 'hint' }, 'For an access or portability request (GDPR Articles 15 and 20): every message the user sent, their memberships, reactions and files, as one JSON object a line.'),
    lu,
    user,
    h('p', {}, button),
    out,
  );
}
