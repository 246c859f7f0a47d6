// The browser test page: a minimal chat view on top of the built SDK (/dist), no bundler.
import { ChatClient } from '/dist/index.js';

const q = new URLSearchParams(location.search);
const channelId = q.get('channel');
const client = new ChatClient({ url: q.get('ws'), token: q.get('token'), pageSize: 500, reconnectBackoff: { baseMs: 100, maxMs: 1000 } });
const store = client.channel(channelId);
const list = document.getElementById('log');
const state = document.getElementById('state');
window.dupes = [];
window.acked = 0;

function render() {
  const s = store.getSnapshot();
  const items = [
    ...s.messages.map((m) => ({ key: m.messageId, body: m.body, cls: 'msg' })),
    ...s.outgoing.map((o) => ({ key: o.clientMsgId, body: o.body, cls: o.state })),
  ];
  const seen = new Set();
  for (const it of items) {
    if (seen.has(it.body)) window.dupes.push(it.body);
    seen.add(it.body);
  }
  list.replaceChildren(
    ...items.map((it) => {
      const li = document.createElement('li');
      li.textContent = it.body;
      li.className = it.cls;
      return li;
    }),
  );
}
store.subscribe(render);
client.connection.subscribe(() => {
  state.textContent = client.connection.getSnapshot().state;
});
render();

window.chat = {
  client,
  store,
  shown: () => [...list.children].map((li) => li.textContent),
  classes: () => [...list.children].map((li) => li.className),
  send(body) {
    return client.send(channelId, body).then((a) => {
      window.acked++;
      if (window.onAck) window.onAck(window.acked);
      return a.seq;
    });
  },
  sendMany(prefix, n) {
    for (let i = 1; i <= n; i++) {
      this.send(`${prefix}${i}`).catch(() => {});
    }
  },
  outboxSize: () => client.outbox().length,
};
await client.start();
