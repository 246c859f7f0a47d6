// The package as a user installs it (README "Install"), and the README's code as written:
//   - `npm pack` holds the built files, and its tarball installs into a fresh project and
//     imports, with no build step and no install script;
//   - `npm install <checkout>/clients/typescript` does the same from a copy of the
//     repository's tracked files (a fresh clone: no node_modules, no build);
//   - every `ts` block of README.md type-checks under `tsc --strict` against the installed
//     package, and the blocks marked `<!-- code-check: run -->` run against a real chatd.
// npm runs with --offline: the package has no dependencies to fetch.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { codeBlocks } from '../helpers/code-blocks.js';
import { ChatdServer, PACKAGE_ROOT, REPO_ROOT } from '../helpers/server.js';

const NPM_FLAGS = ['--offline', '--no-audit', '--no-fund', '--loglevel=error'];
const TSC = join(PACKAGE_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

function npm(cwd: string, args: string[]): string {
  const r = spawnSync('npm', args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_update_notifier: 'false' } });
  assert.equal(r.status, 0, `npm ${args.join(' ')} in ${cwd} failed:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

function freshProject(dir: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'my-app', version: '1.0.0', private: true, type: 'module' }));
}

/** Imports the installed package from `dir` in a new Node process; returns what it printed. */
function importFrom(dir: string): string {
  const script = "import { ChatClient, ChatdError } from 'chatd-client'; console.log(typeof ChatClient, typeof ChatdError);";
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: dir, encoding: 'utf8' });
  assert.equal(r.status, 0, `import failed in ${dir}:\n${r.stderr}`);
  return r.stdout.trim();
}

const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  scripts: Record<string, string>;
};

describe('installing chatd-client as the README says', () => {
  const work = mkdtempSync(join(tmpdir(), 'chatd-client-install-'));
  // Under build/ (ignored by git), so that the README's code finds `ws` and the type
  // packages in the client's own node_modules, as the user's project has them.
  const project = join(PACKAGE_ROOT, 'build', 'readme-project');
  let tarball = '';

  before(() => {
    rmSync(project, { recursive: true, force: true });
    const out = npm(PACKAGE_ROOT, ['pack', '--json', '--pack-destination', work, ...NPM_FLAGS]);
    const packed = JSON.parse(out) as { filename: string; files: { path: string }[] }[];
    const first = packed[0];
    assert.ok(first !== undefined, out);
    tarball = join(work, first.filename);
    const files = first.files.map((f) => f.path);
    for (const f of ['dist/index.js', 'dist/index.d.ts', 'dist/client.js', 'package.json', 'README.md']) {
      assert.ok(files.includes(f), `npm pack leaves out ${f}: ${files.join(', ')}`);
    }
  });

  after(() => {
    rmSync(work, { recursive: true, force: true });
  });

  test('runs no script at install time (nothing to build on the user side)', () => {
    for (const s of ['preinstall', 'install', 'postinstall', 'prepare']) {
      assert.equal(pkg.scripts[s], undefined, `package.json has a "${s}" script`);
    }
  });

  test('the npm pack tarball installs into a fresh project and imports', () => {
    freshProject(project);
    npm(project, ['install', tarball, ...NPM_FLAGS]);
    assert.ok(existsSync(join(project, 'node_modules', 'chatd-client', 'dist', 'index.js')));
    assert.equal(importFrom(project), 'function function');
  });

  test('npm install <checkout>/clients/typescript installs from a fresh clone and imports', () => {
    // the repository's tracked files of the package, as a clone has them (no node_modules, no build)
    const clone = join(work, 'chatd');
    const tracked = execFileSync('git', ['ls-files', '-z', '--', 'clients/typescript'], { cwd: REPO_ROOT, encoding: 'utf8' })
      .split('\0')
      .filter((p) => p !== '');
    for (const p of tracked) {
      const from = join(REPO_ROOT, p);
      if (!existsSync(from)) continue; // deleted in the working tree
      mkdirSync(dirname(join(clone, p)), { recursive: true });
      copyFileSync(from, join(clone, p));
    }
    const app = join(work, 'app');
    freshProject(app);
    npm(app, ['install', '../chatd/clients/typescript', ...NPM_FLAGS]);
    assert.ok(existsSync(join(app, 'node_modules', 'chatd-client', 'dist', 'index.js')), 'dist/ is not in the checkout');
    assert.equal(importFrom(app), 'function function');
  });

  describe("the README's code", () => {
    const blocks = codeBlocks(join(PACKAGE_ROOT, 'README.md')).filter((b) => b.lang === 'ts' && b.marker !== 'skip');
    const files: { file: string; line: number; run: boolean; code: string }[] = [];

    before(() => {
      assert.ok(existsSync(join(project, 'node_modules', 'chatd-client')), 'the tarball test installs the package first');
      blocks.forEach((b, i) => {
        const file = `readme-${i + 1}.ts`;
        // The example's UI calls are the app's own: declared, not defined.
        const prelude =
          b.marker === 'run'
            ? ''
            : 'declare function render(lines: readonly string[]): void;\n' +
              'declare function renderSidebar(lines: readonly string[]): void;\n' +
              "declare function renderMembers(members: readonly import('chatd-client').Member[]): void;\n" +
              "declare function show(messages: readonly import('chatd-client').Message[]): void;\n";
        writeFileSync(join(project, file), prelude + b.code + (b.code.includes('export ') ? '' : 'export {};\n'));
        files.push({ file, line: b.line, run: b.marker === 'run', code: b.code });
      });
      writeFileSync(
        join(project, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            target: 'ES2022',
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            lib: ['ES2022', 'DOM'],
            types: ['node'],
            strict: true,
            noUncheckedIndexedAccess: true,
            outDir: 'out',
            // as an app's tsconfig usually has it (Vite's, Next's): the packages' own .d.ts are
            // checked by their builds; the code here and its use of them are checked in full
            skipLibCheck: true,
          },
          files: files.map((f) => f.file),
        }),
      );
    });

    test('has ts blocks, one of them marked to run', () => {
      assert.ok(blocks.length >= 2, `${blocks.length} ts blocks`);
      assert.ok(
        blocks.some((b) => b.marker === 'run'),
        'no block is marked <!-- code-check: run -->',
      );
    });

    test('every ts block type-checks with tsc --strict against the installed package', () => {
      const r = spawnSync(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: project, encoding: 'utf8' });
      const where = files.map((f) => `${f.file}: README.md line ${f.line}`).join('\n');
      assert.equal(r.status, 0, `tsc failed:\n${r.stdout}${r.stderr}\n(${where})`);
    });

    test('the blocks marked run, run against a real chatd', async () => {
      const server = await ChatdServer.start();
      try {
        await server.createChannel('room1', ['alice']);
        const token = await server.token('alice');
        for (const f of files.filter((x) => x.run)) {
          const before = (await server.history('room1')).length;
          const r = spawnSync(process.execPath, [join('out', f.file.replace(/\.ts$/, '.js'))], {
            cwd: project,
            encoding: 'utf8',
            timeout: 30_000,
            env: { ...process.env, CHATD_URL: server.wsUrl, CHATD_TOKEN: token, CHATD_CHANNEL: 'room1' },
          });
          assert.equal(r.status, 0, `README.md line ${f.line} exited ${r.status} (${r.signal ?? ''}):\n${r.stdout}\n${r.stderr}`);
          const history = await server.history('room1');
          assert.equal(history.length, before + 1, `README.md line ${f.line} stored ${history.length - before} messages`);
          const last = history[history.length - 1];
          assert.equal(last?.senderId, 'alice');
          assert.match(r.stdout, new RegExp(`stored as seq ${last?.seq}\\b`));
        }
      } finally {
        await server.dispose();
      }
    });

    test("the file-backed outbox example: a record an earlier run left is sent again (a duplicate when it was stored), a failed one stays until discarded, and ACKed ones are deleted", async () => {
      const f = files.find((x) => x.run && x.code.includes('class FileOutboxStorage'));
      assert.ok(f !== undefined, 'no run block with class FileOutboxStorage');
      const server = await ChatdServer.start();
      const dir = mkdtempSync(join(tmpdir(), 'chatd-file-outbox-'));
      try {
        await server.createChannel('room1', ['alice']);
        const token = await server.token('alice');
        const run = (): { stdout: string; stderr: string } => {
          const r = spawnSync(process.execPath, [join('out', f.file.replace(/\.ts$/, '.js'))], {
            cwd: project,
            encoding: 'utf8',
            timeout: 30_000,
            env: { ...process.env, CHATD_URL: server.wsUrl, CHATD_TOKEN: token, CHATD_CHANNEL: 'room1', CHATD_OUTBOX_DIR: dir },
          });
          assert.equal(r.status, 0, `README.md line ${f.line} exited ${r.status} (${r.signal ?? ''}):\n${r.stdout}\n${r.stderr}`);
          return r;
        };
        const left = (): string[] => (existsSync(join(dir, 'alice')) ? readdirSync(join(dir, 'alice')).sort() : []);
        const first = run();
        const h1 = await server.history('room1');
        assert.equal(h1.length, 1);
        assert.match(first.stdout, /stored as seq 1\b/);
        assert.deepEqual(left(), [], 'the ACKed record is deleted from the directory');
        // as an earlier run killed at the wrong moment left them: one ACKed (not deleted yet),
        // one never ACKed, one failed for good
        const acked = h1[0]?.clientMsgId ?? '';
        const record = (clientMsgId: string, body: string, order: number, extra: object = {}): void => {
          writeFileSync(
            join(dir, 'alice', `${encodeURIComponent(clientMsgId)}.json`),
            JSON.stringify({ userId: 'alice', clientMsgId, op: { type: 'MSG_SEND', channelId: 'room1', body }, createdAt: Date.now(), order, state: 'pending', owner: 'a-killed-run', ...extra }),
          );
        };
        mkdirSync(join(dir, 'alice'), { recursive: true });
        record(acked, h1[0]?.body ?? '', 1);
        record('never-acked-1', 'left behind', 2);
        record('failed-1', 'refused', 3, { state: 'failed', error: { code: 'forbidden', message: 'not a member', retryable: false } });
        const second = run();
        assert.match(second.stdout, new RegExp(`ACK of MSG_SEND ${acked}: seq 1 \\(duplicate`), second.stdout);
        assert.match(second.stdout, /ACK of MSG_SEND never-acked-1: seq 2\b(?! \(duplicate)/, second.stdout);
        assert.match(second.stdout, /failed in an earlier run: failed-1 \(forbidden\)/, second.stdout);
        assert.match(second.stdout, /stored as seq 3\b/, second.stdout);
        assert.deepEqual(
          (await server.history('room1')).map((m) => m.body),
          ['hello from a file-backed outbox', 'left behind', 'hello from a file-backed outbox'],
          'the duplicate stored once, the left-behind record stored, the failed one not sent',
        );
        assert.deepEqual(left(), ['failed-1.json'], 'ACKed records deleted; the failed one stays until discard');
      } finally {
        await server.dispose();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
