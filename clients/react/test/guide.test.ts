// docs/react.md ("chat in your React app"), as a user follows it: chatd-client and
// chatd-react installed into a fresh project with the guide's command (`npm install
// --install-links` of the two package directories: copies, as from `npm pack`), the
// guide's `chat.tsx` and `main.tsx` written as they stand in the page, type-checked with
// tsc --strict and built, then `startChat` rendered in a real DOM (jsdom) against a real
// chatd and used as a person would. The project lies under this package's build/
// directory: like an app in a monorepo, it finds `react`, `react-dom` and their types in
// the node_modules above it (this package's, from its committed package-lock.json), so
// npm installs the two packages only, offline (`--legacy-peer-deps`: the peers are there).
import { dom, container, typeInto, click } from './dom.js';
import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { lstatSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import WebSocket from 'ws';
import { codeBlocks } from '../../typescript/test/helpers/code-blocks.js';
import { ChatdServer, REPO_ROOT, storeKinds, waitFor } from '../../typescript/test/helpers/server.js';

const REACT_ROOT = join(REPO_ROOT, 'clients', 'react');
const NPM_FLAGS = ['--offline', '--no-audit', '--no-fund', '--loglevel=error'];
const TSC = join(REACT_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

function run(cmd: string, args: string[], cwd: string): string {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_update_notifier: 'false' } });
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')} in ${cwd} failed:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

type StartChat = (element: HTMLElement, options: Record<string, unknown>) => Promise<() => void>;

describe('docs/react.md: the guide builds and runs', () => {
  // Under build/ (ignored by git), so that tsc finds @types/react in this package's node_modules.
  const project = join(REACT_ROOT, 'build', 'guide-project');
  const blocks = codeBlocks(join(REPO_ROOT, 'docs', 'react.md')).filter((b) => b.marker === 'file');

  before(() => {
    rmSync(project, { recursive: true, force: true });
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'my-react-app', version: '1.0.0', private: true, type: 'module' }));
    // docs/react.md's install command, with the checkout's package directories
    const install = codeBlocks(join(REPO_ROOT, 'docs', 'react.md')).find((b) => b.lang === 'sh' && b.code.includes('--install-links'));
    assert.ok(install !== undefined, 'docs/react.md has no `npm install --install-links` block');
    const args = install.code.trim().split(/\s+/).slice(1).map((a) => a.replace(/^\.\.\/chatd\//, `${REPO_ROOT}/`));
    assert.deepEqual(args.slice(0, 1), ['install']);
    run('npm', [...args, '--legacy-peer-deps', ...NPM_FLAGS], project);
    for (const name of ['chatd-client', 'chatd-react']) {
      assert.ok(!lstatSync(join(project, 'node_modules', name)).isSymbolicLink(), `${name} is a link, not a copy`);
    }
  });

  test('the guide has its two files', () => {
    assert.deepEqual(
      blocks.map((b) => `${b.lang} ${b.arg ?? ''}`),
      ['tsx chat.tsx', 'tsx main.tsx'],
    );
  });

  test('its files type-check with tsc --strict and build against the installed packages', () => {
    for (const b of blocks) writeFileSync(join(project, b.arg ?? 'x.tsx'), b.code);
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2022', 'DOM', 'DOM.Iterable'],
          jsx: 'react-jsx',
          types: [],
          strict: true,
          noUncheckedIndexedAccess: true,
          outDir: 'out',
          // as an app's tsconfig usually has it (Vite's, Next's): the packages' own .d.ts are
          // checked by their builds; the code here and its use of them are checked in full
          skipLibCheck: true,
        },
        files: blocks.map((b) => b.arg ?? 'x.tsx'),
      }),
    );
    const r = spawnSync(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: project, encoding: 'utf8' });
    assert.equal(r.status, 0, `tsc failed on docs/react.md's files:\n${r.stdout}${r.stderr}`);
  });

  for (const store of storeKinds()) {
    test(`startChat renders a chat a person can use, against chatd (${store})`, async () => {
      const server = await ChatdServer.start({ store, env: { CHATD_PRESENCE_GRACE_MS: '200' } });
      let stop: (() => void) | undefined;
      const others: { close(): void }[] = [];
      try {
        await server.createChannel('general', ['alice', 'bob']);
        await server.createChannel('random', ['alice', 'bob']);
        const { ChatClient } = (await import(pathToFileURL(join(project, 'node_modules', 'chatd-client', 'dist', 'index.js')).href)) as typeof import('chatd-client');
        const bob = new ChatClient({ url: server.wsUrl, token: await server.token('bob'), WebSocket, tabSync: false });
        others.push(bob);
        await bob.start();
        for (let i = 1; i <= 60; i++) await bob.send('general', `g${i}`);
        await bob.send('random', 'r1');
        bob.close();

        const { startChat } = (await import(pathToFileURL(join(project, 'out', 'chat.js')).href)) as { startChat: StartChat };
        const el = container();
        const aliceToken = await server.token('alice');
        let tokenCalls = 0;
        stop = await startChat(el, {
          url: server.wsUrl,
          token: () => {
            tokenCalls++;
            return Promise.resolve(aliceToken);
          },
          WebSocket, // Node 20 has no WebSocket of its own; a browser passes nothing
          tabSync: false,
        });
        const texts = (sel: string): string[] => [...el.querySelectorAll(sel)].map((e) => e.textContent ?? '');

        // the sidebar, with unread counts from HELLO
        await waitFor(
          () => texts('.channel').join() === 'general (60),random (1)',
          () => `sidebar: ${texts('.channel').join(' | ')}`,
        );
        assert.ok(tokenCalls >= 1, 'the token function was never called');
        assert.match(el.textContent ?? '', /Pick a channel/);

        // open general: the newest page (50), older on demand, read
        const general = [...el.querySelectorAll('.channel')].find((b) => b.textContent?.startsWith('general'));
        assert.ok(general !== undefined);
        click(general);
        await waitFor(() => texts('.message').length === 50, () => `messages: ${texts('.message').length}`);
        assert.match(texts('.message')[0] ?? '', /bob g11$/);
        assert.match(texts('.message')[49] ?? '', /bob g60$/);
        await waitFor(() => texts('.channel').join() === 'general,random (1)', () => `sidebar after reading: ${texts('.channel').join(' | ')}`);
        const older = el.querySelector('.older');
        assert.ok(older !== null, 'no "Older messages" button');
        click(older);
        await waitFor(() => texts('.message').length === 60, () => `after older: ${texts('.message').length}`);
        assert.match(texts('.message')[0] ?? '', /bob g1$/);
        assert.equal(el.querySelector('.older'), null);

        // bob comes online and types: his dot turns online, the typing line names him
        await waitFor(
          () => el.querySelector('.dot.offline') !== null,
          () => `dots: ${[...el.querySelectorAll('.dot')].map((d) => d.className).join()}`,
        );
        const bob2 = new ChatClient({ url: server.wsUrl, token: await server.token('bob'), WebSocket, tabSync: false });
        others.push(bob2);
        await bob2.start();
        await bob2.whenOpen();
        await waitFor(() => el.querySelector('.dot.offline') === null && el.querySelector('.dot.online') !== null, () => 'bob never shown online');
        const bobGeneral = bob2.channel('general');
        await waitFor(() => bobGeneral.getSnapshot().status === 'ready', () => "bob's channel not ready");
        bob2.typing('general');
        await waitFor(() => texts('.typing').join() === 'bob typing…', () => `typing line: ${texts('.typing').join()}`);

        // alice types (bob sees it) and sends: shown once, stored once
        const input = el.querySelector('input');
        const form = el.querySelector('form');
        assert.ok(input !== null && form !== null);
        typeInto(input, 'hi bob, from the guide');
        await waitFor(() => bobGeneral.getSnapshot().typing.includes('alice'), () => 'bob does not see alice typing');
        form.requestSubmit();
        await waitFor(() => input.value === '', () => 'the composer was not cleared');
        await waitFor(
          () => texts('.message').some((t) => t.endsWith('alice hi bob, from the guide')) && el.querySelector('.message.pending') === null,
          () => `after send: ${texts('.message').slice(-3).join(' | ')}`,
        );
        assert.equal(texts('.message').filter((t) => t.includes('hi bob, from the guide')).length, 1);
        await waitFor(
          () => bobGeneral.getSnapshot().messages.some((m) => m.body === 'hi bob, from the guide'),
          () => 'bob never received it',
        );
        const stored = (await server.history('general')).filter((e) => e.body === 'hi bob, from the guide');
        assert.equal(stored.length, 1);
        assert.equal(stored[0]?.senderId, 'alice');
      } finally {
        stop?.();
        for (const o of others) o.close();
        dom.window.document.body.innerHTML = '';
        await server.dispose();
      }
    });
  }
});
