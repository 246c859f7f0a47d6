/**
 * Attachments in the chat view (protocol §15): the composer's tray of files to send (the
 * 📎 button's file picker, a file pasted or dropped on the channel), each uploaded at once
 * with its progress and, when the server refuses it (too large, a type it does not take, an
 * image that does not decode), why; and a message's attachments: images as thumbnails that
 * open the full image in a lightbox, other files as download links with their name and
 * size. URLs are the server's signed ones (same origin: the console's CSP allows them);
 * once they expire (an image that fails to load, a link clicked late) the message's entry is
 * read again for fresh ones (`attachments.refreshUrls`).
 */
import { ChatdError, type Attachment, type ChatClient, type Message, type MessageAttachment, type OutboxAttachment } from '../../clients/typescript/src/index.js';
import { h } from './dom.js';

/** A size in bytes as people read it: `512 B`, `1.5 KiB`, `25.0 MiB`. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 * 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
  return `${(n / (1024 * 1024 * 1024)).toFixed(1)} GiB`;
}

/** Why an upload was refused, in words. */
export function uploadErrorWords(e: unknown, name: string): string {
  if (!(e instanceof ChatdError)) return `${name} could not be uploaded: ${String(e)}.`;
  switch (e.code) {
    case 'body_too_large':
      return `${name} is too large for this server.`;
    case 'unsupported_media_type':
      return `${name}: this server does not take files of this type.`;
    case 'invalid_field':
      return e.field === 'filename' ? `${name}: the server does not take this file name.` : `${name} is not a valid image of its type (or has too many pixels).`;
    case 'forbidden':
      return `${name} could not be uploaded: you are not a member of this channel.`;
    case 'aborted':
      return `${name}: upload cancelled.`;
    case 'unavailable':
      return `${name} could not be uploaded: the server could not be reached or refused it (it may be too large). Try again.`;
    default:
      return `${name} could not be uploaded: ${e.message} [${e.code}].`;
  }
}

/** One file in the tray. */
interface TrayItem {
  readonly id: number;
  readonly name: string;
  readonly size: number;
  loaded: number;
  state: 'uploading' | 'ready' | 'failed';
  uploaded: Attachment | undefined;
  error: string | undefined;
  readonly abort: AbortController;
}

/**
 * The files to send with the next message of the selected channel: a 📎 button with a
 * hidden file input, a list of the files (name, size, progress or refusal, ✕ to drop one).
 */
export class AttachmentTray {
  private readonly client: ChatClient;
  private readonly changed: () => void;
  private items: TrayItem[] = [];
  private nextId = 1;
  private channelId: string | undefined;
  private listEl: HTMLElement | undefined;
  private input: HTMLInputElement | undefined;

  /** `changed`: the tray's files changed (the composer may enable Send). */
  constructor(client: ChatClient, changed: () => void) {
    this.client = client;
    this.changed = changed;
  }

  /** The 📎 button (and its hidden file input) of a newly built composer for channel `channelId`. */
  button(channelId: string): HTMLElement {
    if (this.channelId !== channelId) this.clear();
    this.channelId = channelId;
    const input = h('input', { type: 'file', id: 'attach-input', multiple: true, hidden: true, 'aria-hidden': 'true', tabindex: -1 });
    input.addEventListener('change', () => {
      this.addFiles([...(input.files ?? [])]);
      input.value = '';
    });
    this.input = input;
    const btn = h(
      'button',
      {
        type: 'button',
        id: 'attach',
        class: 'attach',
        title: 'Attach files (or paste or drop them here)',
        'aria-label': 'Attach files',
        onclick: () => {
          this.input?.click();
        },
      },
      '📎',
    );
    return h('span', { class: 'attach-wrap' }, btn, input);
  }

  /** The list of files of a newly built pane (above the composer). */
  element(): HTMLElement {
    this.listEl = h('ul', { class: 'tray', id: 'tray', 'aria-label': 'Files to send', 'aria-live': 'polite' });
    this.render();
    return this.listEl;
  }

  /** Makes `target` take pasted and dropped files (the pane): each goes into the tray. */
  acceptFrom(target: HTMLElement): void {
    target.addEventListener('paste', (ev) => {
      const files = [...(ev.clipboardData?.files ?? [])];
      if (files.length === 0) return;
      ev.preventDefault();
      this.addFiles(files);
    });
    target.addEventListener('dragover', (ev) => {
      if (!ev.dataTransfer?.types.includes('Files')) return;
      ev.preventDefault();
      target.dataset.dropping = 'true';
    });
    target.addEventListener('dragleave', () => {
      delete target.dataset.dropping;
    });
    target.addEventListener('drop', (ev) => {
      delete target.dataset.dropping;
      const files = [...(ev.dataTransfer?.files ?? [])];
      if (files.length === 0) return;
      ev.preventDefault();
      this.addFiles(files);
    });
  }

  /** Uploads `files` into the selected channel, each shown in the tray with its progress. */
  addFiles(files: readonly File[]): void {
    const channelId = this.channelId;
    if (channelId === undefined) return;
    for (const file of files) {
      const item: TrayItem = {
        id: this.nextId++,
        name: file.name === '' ? 'pasted file' : file.name,
        size: file.size,
        loaded: 0,
        state: 'uploading',
        uploaded: undefined,
        error: undefined,
        abort: new AbortController(),
      };
      this.items.push(item);
      this.client.attachments
        .upload(channelId, file, {
          ...(file.name === '' ? { filename: item.name } : {}),
          signal: item.abort.signal,
          onProgress: (p) => {
            item.loaded = p.loaded;
            this.render();
          },
        })
        .then(
          (a) => {
            item.state = 'ready';
            item.uploaded = a;
            item.loaded = item.size;
            this.render();
            this.changed();
          },
          (e: unknown) => {
            if (!this.items.includes(item)) return;
            item.state = 'failed';
            item.error = uploadErrorWords(e, item.name);
            this.render();
            this.changed();
          },
        );
    }
    this.render();
    this.changed();
  }

  /** No more sending in this channel: the 📎 button is disabled and the tray emptied. */
  disable(): void {
    const btn = this.input?.parentElement?.querySelector('button');
    if (btn !== undefined && btn !== null) btn.disabled = true;
    this.clear();
  }

  /** Whether a file is still uploading. */
  busy(): boolean {
    return this.items.some((i) => i.state === 'uploading');
  }

  /** The uploads ready to send, in the order added. */
  ready(): Attachment[] {
    return this.items.flatMap((i) => (i.state === 'ready' && i.uploaded !== undefined ? [i.uploaded] : []));
  }

  /** Empties the tray (after a send, or another channel); uploads still going are stopped. */
  clear(): void {
    for (const i of this.items) if (i.state === 'uploading') i.abort.abort();
    this.items = [];
    this.render();
  }

  private remove(item: TrayItem): void {
    if (item.state === 'uploading') item.abort.abort();
    this.items = this.items.filter((i) => i !== item);
    this.render();
    this.changed();
  }

  private render(): void {
    const el = this.listEl;
    if (el === undefined) return;
    el.hidden = this.items.length === 0;
    el.replaceChildren(
      ...this.items.map((i) => {
        const pct = i.size === 0 ? 100 : Math.min(100, Math.round((i.loaded / i.size) * 100));
        return h(
          'li',
          { class: 'tray-item', 'data-state': i.state, 'data-name': i.name },
          h('span', { class: 'tray-name' }, i.name),
          h('span', { class: 'att-size' }, formatBytes(i.size)),
          i.state === 'uploading' ? h('progress', { class: 'tray-progress', max: 100, value: pct, 'aria-label': `Uploading ${i.name}` }) : null,
          i.state === 'ready' ? h('span', { class: 'tray-ok' }, '✓') : null,
          i.state === 'failed' ? h('span', { class: 'tray-error', role: 'alert' }, i.error ?? 'failed') : null,
          h(
            'button',
            {
              type: 'button',
              class: 'tray-remove',
              'aria-label': `Remove ${i.name}`,
              onclick: () => {
                this.remove(i);
              },
            },
            '✕',
          ),
        );
      }),
    );
  }
}

/** The reads of messages' entries going on, by message id: one at a time each. */
const inflight = new Map<string, Promise<readonly MessageAttachment[] | undefined>>();
/** When each message's entry was last read again, for images that fail to load: at most one read per 10 s each. */
const lastRead = new Map<string, number>();

/**
 * Reads `m`'s entry again for fresh signed URLs (the store redraws the message); resolves to
 * them, or undefined when that failed. `auto` (an image that failed to load): not again
 * within 10 s, so an image that fails for another reason makes no loop.
 */
function refresh(client: ChatClient, m: Message, auto = false): Promise<readonly MessageAttachment[] | undefined> {
  const going = inflight.get(m.messageId);
  if (going !== undefined) return going;
  if (auto && Date.now() - (lastRead.get(m.messageId) ?? 0) < 10_000) return Promise.resolve(undefined);
  lastRead.set(m.messageId, Date.now());
  const p = client.attachments.refreshUrls(m).then(
    (list) => list,
    () => undefined,
  );
  inflight.set(m.messageId, p);
  void p.finally(() => inflight.delete(m.messageId));
  return p;
}

/** Whether `a`'s signed URLs have expired (or will in a moment). */
function expired(a: MessageAttachment): boolean {
  return a.urlExpiresAt !== undefined && a.urlExpiresAt <= Date.now() + 2_000;
}

/** Shows `a`'s full image over the page (Escape, a click or ✕ closes it); an expired URL is read again first. */
function openLightbox(client: ChatClient, m: Message, a: MessageAttachment): void {
  if (expired(a)) {
    void refresh(client, m).then((fresh) => {
      const now = fresh?.find((x) => x.attachmentId === a.attachmentId);
      if (now !== undefined) showLightbox(client.attachments.url(now) ?? '', now);
    });
    return;
  }
  showLightbox(client.attachments.url(a) ?? '', a);
}

function showLightbox(src: string, a: MessageAttachment): void {
  document.getElementById('lightbox')?.remove();
  const close = (): void => {
    box.remove();
    document.removeEventListener('keydown', onKey);
  };
  const onKey = (ev: KeyboardEvent): void => {
    if (ev.key === 'Escape') close();
  };
  const name = a.filename ?? 'image';
  const box = h(
    'div',
    { class: 'lightbox', id: 'lightbox', role: 'dialog', 'aria-modal': 'true', 'aria-label': name, onclick: close },
    h('img', { src, alt: name, class: 'lightbox-img' }),
    h('div', { class: 'lightbox-caption' }, `${name} · ${formatBytes(a.size)}${a.width !== undefined && a.height !== undefined ? ` · ${a.width} × ${a.height}` : ''}`),
    h('button', { type: 'button', class: 'lightbox-close', 'aria-label': 'Close', onclick: close }, '✕'),
  );
  document.addEventListener('keydown', onKey);
  document.body.append(box);
  box.querySelector('button')?.focus();
}

/**
 * A message's attachments: images with a thumbnail as a button showing it (opening the full
 * image in a lightbox), other files as download links with name and size. Until the signed
 * URLs are known (the user's own message, just sent), a file shows as its name and size.
 */
export function attachmentsElement(client: ChatClient, m: Message): HTMLElement {
  return h(
    'div',
    { class: 'attachments' },
    ...m.attachments.map((a) => {
      const name = a.filename ?? 'file';
      const signed = a.urlExpiresAt !== undefined;
      const full = client.attachments.url(a);
      const thumb = client.attachments.url(a, { thumbnail: true });
      if (signed && thumb !== undefined && full !== undefined) {
        return h(
          'button',
          {
            type: 'button',
            class: 'att-image',
            'data-attachment-id': a.attachmentId,
            'aria-label': `Open the image ${name}`,
            onclick: () => {
              openLightbox(client, m, a);
            },
          },
          h('img', {
            src: thumb,
            alt: name,
            ...(a.width !== undefined && a.height !== undefined ? { 'data-width': a.width, 'data-height': a.height } : {}),
            // an expired URL: read the message again (its new URLs are drawn)
            onerror: () => {
              void refresh(client, m, true);
            },
          }),
        );
      }
      const label = [h('span', { class: 'att-name' }, name), ' ', h('span', { class: 'att-size' }, formatBytes(a.size))];
      if (!signed || full === undefined) return h('span', { class: 'att-file', 'data-attachment-id': a.attachmentId }, '📄 ', ...label);
      return h(
        'a',
        {
          class: 'att-file',
          href: full,
          download: name,
          'data-attachment-id': a.attachmentId,
          onclick: (ev: Event) => {
            if (!expired(a)) return;
            // expired: fresh URLs first, then the download
            ev.preventDefault();
            void refresh(client, m).then((fresh) => {
              const now = fresh?.find((x) => x.attachmentId === a.attachmentId);
              const href = now === undefined ? undefined : client.attachments.url(now);
              if (href !== undefined) h('a', { href, download: name }).click();
            });
          },
        },
        '📄 ',
        ...label,
      );
    }),
  );
}

/** The files of an unsent message (names and sizes when known). */
export function outgoingAttachmentsElement(list: readonly OutboxAttachment[]): HTMLElement {
  return h(
    'div',
    { class: 'attachments' },
    ...list.map((a) =>
      h(
        'span',
        { class: 'att-file', 'data-attachment-id': a.attachmentId },
        '📄 ',
        h('span', { class: 'att-name' }, a.filename ?? 'file'),
        a.size !== undefined ? ' ' : null,
        a.size !== undefined ? h('span', { class: 'att-size' }, formatBytes(a.size)) : null,
      ),
    ),
  );
}
