// The hooks in a real DOM (jsdom) against the real chatd: components render what the
// server sends, through chatd-client's stores, and render again only when their part changed.
import { dom, container, typeInto, click } from './dom.js';
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { StrictMode, useState, type ReactElement } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import WebSocket from 'ws';
import { ChatClient, type ChatClientOptions } from 'chatd-client';
import { ChatProvider, useChannel, useChannelList, useChatClient, useConnection, usePresence, useTyping } from '../src/index.js';
import { ChatdServer, storeKinds, waitFor } from '../../typescript/test/helpers/server.js';

const text = (el: Element): string => el.textContent ?? '';
const items = (el: Element, selector: string): string[] => [...el.querySelectorAll(selector)].map(text);

function Sidebar(): ReactElement {
  const channels = useChannelList();
  return (
    <ul>
      {channels.map((c) => (
        <li key={c.channelId}>{`${c.channelId}:${c.unread}`}</li>
      ))}
    </ul>
  );
}

function Room({ channelId }: { channelId: string }): ReactElement {
  const client = useChatClient();
  const s = useChannel(channelId);
  const [draft, setDraft] = useState('');
  return (
    <section>
      <p className="status">{s.status}</p>
      {s.hasOlder && (
        <button className="older" onClick={() => void client.loadOlder(channelId)}>
          older
        </button>
      )}
      <ol>
        {s.messages.map((m) => (
          <li key={m.messageId} className="msg">{`${m.senderId}: ${m.body}`}</li>
        ))}
        {s.outgoing.map((o) => (
          <li key={o.clientMsgId} className="msg">{`me: ${o.body} [${o.state}]`}</li>
        ))}
      </ol>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void client.send(channelId, draft);
          setDraft('');
        }}
      >
        <input value={draft} onChange={(e) => { setDraft(e.target.value); }} />
        <button type="submit">Send</button>
      </form>
    </section>
  );
}

function Dot({ userId }: { userId: string }): ReactElement {
  const p = usePresence([userId])[userId];
  return <span className="dot">{`${userId}:${p?.status ?? 'unknown'}`}</span>;
}

function State(): ReactElement {
  return <p className="conn">{useConnection().state}</p>;
}

let typingRenders = 0;
function TypingLine({ channelId }: { channelId: string }): ReactElement {
  typingRenders++;
  const { users, typing, stopTyping } = useTyping(channelId);
  return (
    <div>
      <p className="typing">{users.length === 0 ? '' : `${users.join(', ')} typing`}</p>
      <input
        className="composer"
        onChange={(e) => {
          if (e.target.value === '') stopTyping();
          else typing();
        }}
      />
    </div>
  );
}

for (const store of storeKinds()) {
  describe(`chatd-react hooks in jsdom against chatd (${store})`, () => {
    let server: ChatdServer;
    const clients: ChatClient[] = [];
    const roots: Root[] = [];

    async function client(userId: string, extra: Partial<ChatClientOptions> = {}): Promise<ChatClient> {
      const c = new ChatClient({
        url: server.wsUrl,
        token: await server.token(userId),
        WebSocket,
        tabSync: false,
        reconnectBackoff: { baseMs: 100, maxMs: 1000 },
        ...extra,
      });
      clients.push(c);
      await c.start();
      return c;
    }

    function mount(c: ChatClient, ui: ReactElement): { el: HTMLElement; root: Root } {
      const el = container();
      const root = createRoot(el);
      roots.push(root);
      root.render(
        <StrictMode>
          <ChatProvider client={c}>{ui}</ChatProvider>
        </StrictMode>,
      );
      return { el, root };
    }

    before(async () => {
      // offline shows 200 ms after a user's last session; a typing `start` lasts a minute, so
      // that only the test's own stop ends it (however slow the machine)
      server = await ChatdServer.start({ store, env: { CHATD_PRESENCE_GRACE_MS: '200', CHATD_TYPING_TTL_MS: '60000' } });
    });
    after(async () => {
      for (const r of roots) r.unmount();
      for (const c of clients) c.close();
      await server.dispose();
      dom.window.document.body.innerHTML = '';
    });

    test('useChannelList: each channel with its unread count, live, and a channel the user is added to', async () => {
      await server.createChannel('list-a', ['alice', 'bob']);
      await server.createChannel('list-b', ['alice', 'bob']);
      const bob = await client('bob');
      await bob.send('list-a', 'one');
      await bob.send('list-a', 'two');
      const alice = await client('alice');
      const { el } = mount(alice, <Sidebar />);
      const has = (want: string[]): (() => boolean) => () => want.every((w) => items(el, 'li').includes(w));
      await waitFor(has(['list-a:2', 'list-b:0']), () => `sidebar: ${items(el, 'li').join(' | ')}`);
      await bob.send('list-b', 'three');
      await waitFor(has(['list-a:2', 'list-b:1']), () => `sidebar: ${items(el, 'li').join(' | ')}`);
      await server.createChannel('list-c', ['alice']);
      await waitFor(has(['list-c:0']), () => `sidebar after CHANNEL_ADDED: ${items(el, 'li').join(' | ')}`);
    });

    test("useChannel: the newest page, older pages on demand, the user's own send shown once", async () => {
      await server.createChannel('room', ['alice', 'bob']);
      const bob = await client('bob');
      for (let i = 1; i <= 8; i++) await bob.send('room', `m${i}`);
      const alice = await client('alice', { pageSize: 5 });
      const { el } = mount(
        alice,
        <>
          <State />
          <Room channelId="room" />
        </>,
      );
      const msgs = (): string[] => items(el, '.msg');
      await waitFor(() => msgs().length === 5, () => `messages: ${msgs().join(' | ')}`);
      assert.deepEqual(msgs(), ['bob: m4', 'bob: m5', 'bob: m6', 'bob: m7', 'bob: m8']);
      assert.equal(text(el.querySelector('.conn') ?? el), 'open');
      const older = el.querySelector('.older');
      assert.ok(older !== null, 'no "older" button while hasOlder');
      click(older);
      await waitFor(() => msgs().length === 8, () => `after older: ${msgs().join(' | ')}`);
      assert.deepEqual(msgs(), ['bob: m1', 'bob: m2', 'bob: m3', 'bob: m4', 'bob: m5', 'bob: m6', 'bob: m7', 'bob: m8']);
      await waitFor(() => el.querySelector('.older') === null, () => 'the "older" button stays after the first entry');

      const input = el.querySelector('input');
      const form = el.querySelector('form');
      assert.ok(input !== null && form !== null);
      typeInto(input, 'hello from alice');
      await waitFor(() => input.value === 'hello from alice', () => `input: ${input.value}`);
      form.requestSubmit();
      await waitFor(() => msgs().includes('alice: hello from alice'), () => `after send: ${msgs().join(' | ')}`);
      await bob.send('room', 'm9');
      await waitFor(() => msgs().includes('bob: m9'), () => `after bob's m9: ${msgs().join(' | ')}`);
      assert.equal(msgs().filter((m) => m.includes('hello from alice')).length, 1, msgs().join(' | '));
      assert.deepEqual(msgs().slice(-2), ['alice: hello from alice', 'bob: m9']);
      const stored = (await server.history('room')).map((e) => `${e.senderId}: ${e.body}`);
      assert.deepEqual(stored.slice(-2), ['alice: hello from alice', 'bob: m9']);
    });

    test('usePresence: one subscription for every mounted component, live, and an id dropped on unmount', async () => {
      // users of this test only: the other tests' clients stay connected until the end
      await server.createChannel('pres', ['alice', 'dave', 'erin']);
      const alice = await client('alice');
      let setShowErin: (v: boolean) => void = () => undefined;
      function Dots(): ReactElement {
        const [showErin, set] = useState(true);
        setShowErin = set;
        return (
          <>
            <Dot userId="dave" />
            <Dot userId="dave" />
            {showErin && <Dot userId="erin" />}
          </>
        );
      }
      const { el } = mount(alice, <Dots />);
      const dots = (): string[] => items(el, '.dot');
      await waitFor(
        () => dots().join() === 'dave:offline,dave:offline,erin:offline',
        () => `dots: ${dots().join(' | ')}`,
      );
      assert.deepEqual(Object.keys(alice.presence.getSnapshot()).sort(), ['dave', 'erin']);
      const dave = await client('dave');
      await waitFor(() => dots().join() === 'dave:online,dave:online,erin:offline', () => `dots: ${dots().join(' | ')}`);
      setShowErin(false);
      // the subscription now holds dave only: the store keeps the subscribed ids only
      await waitFor(
        () => Object.keys(alice.presence.getSnapshot()).join() === 'dave',
        () => `presence store: ${Object.keys(alice.presence.getSnapshot()).join()}`,
      );
      assert.deepEqual(dots(), ['dave:online', 'dave:online']);
      dave.close();
      await waitFor(() => dots().join() === 'dave:offline,dave:offline', () => `dots after dave left: ${dots().join(' | ')}`);
      assert.ok(alice.presence.getSnapshot().dave?.lastSeenAt !== undefined, 'no lastSeenAt once dave went offline');
    });

    test('useTyping: who types shows and clears, the composer sends TYPING, and messages do not re-render it', async () => {
      await server.createChannel('typ', ['alice', 'bob', 'carol']);
      const alice = await client('alice');
      const bob = await client('bob');
      const carol = await client('carol');
      const bobRoom = bob.channel('typ');
      const { el } = mount(alice, <TypingLine channelId="typ" />);
      const line = (): string => text(el.querySelector('.typing') ?? el);
      await waitFor(() => alice.channel('typ').getSnapshot().status === 'ready', () => 'channel not ready');
      await waitFor(() => bobRoom.getSnapshot().status === 'ready', () => "bob's channel not ready");

      bob.typing('typ');
      await waitFor(() => line() === 'bob typing', () => `typing line: "${line()}"`);
      const rendersBefore = typingRenders;
      for (let i = 0; i < 3; i++) await carol.send('typ', `c${i}`);
      await waitFor(
        () => alice.channel('typ').getSnapshot().messages.length === 3,
        () => `alice holds ${alice.channel('typ').getSnapshot().messages.length} messages`,
      );
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(typingRenders, rendersBefore, "carol's messages rendered the typing line again");
      assert.equal(line(), 'bob typing');
      bob.stopTyping('typ');
      await waitFor(() => line() === '', () => `typing line after stop: "${line()}"`);

      const input = el.querySelector('.composer');
      assert.ok(input instanceof dom.window.HTMLInputElement);
      typeInto(input, 'h');
      await waitFor(() => bobRoom.getSnapshot().typing.includes('alice'), () => `bob sees typing: ${bobRoom.getSnapshot().typing.join()}`);
      typeInto(input, '');
      await waitFor(() => !bobRoom.getSnapshot().typing.includes('alice'), () => `bob still sees: ${bobRoom.getSnapshot().typing.join()}`);
    });
  });
}

describe('chatd-react without a provider', () => {
  test('useChatClient outside a ChatProvider: an error that says what is missing', async () => {
    function Lost(): ReactElement {
      useChatClient();
      return <p />;
    }
    let caught: unknown;
    const root = createRoot(container(), {
      onUncaughtError: (e) => {
        caught = e;
      },
    });
    root.render(<Lost />);
    await waitFor(() => caught !== undefined, () => 'rendering without a provider reported no error');
    assert.match(String(caught), /no <ChatProvider client=\{…\}> above this component/);
    root.unmount();
  });
});
