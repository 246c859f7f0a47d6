// The export card's reading of the NDJSON body (src/admin-export.ts, ExportTally), fed in
// pieces cut anywhere, as a stream gives them: a whole export, one without its end line
// (cut off), one whose end line counts other lines than came, and lines that do not parse
// or come after the end line. The browser test (lifecycle.test.ts) downloads a real one.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ExportTally, exportFileName } from '../src/admin-export.js';

const WHOLE = [
  '{"type":"message","messageId":"m1","channelId":"room","senderId":"alice","seq":1,"body":"héllo 👋","ts":1,"kind":"message","reactions":[]}',
  '{"type":"membership","channelId":"room","role":"member","joinedAt":1}',
  '{"type":"reaction","channelId":"room","messageId":"m2","emoji":"👍"}',
  '{"type":"attachment","attachmentId":"a1","channelId":"room","contentType":"text/plain","size":2,"sha256":"x","createdAt":1,"url":"/v1/attachments/a1?exp=1&sig=s"}',
  '{"type":"end","count":4}',
].join('\n') + '\n';

/** Feeds `text` in pieces of `size` characters. */
function tally(text: string, size: number): ExportTally {
  const t = new ExportTally();
  for (let i = 0; i < text.length; i += size) t.feed(text.slice(i, i + size));
  t.finish();
  return t;
}

describe('ExportTally', () => {
  test('a whole export, in pieces of any size, is complete and counted by kind', () => {
    for (const size of [1, 2, 7, 64, WHOLE.length]) {
      const t = tally(WHOLE, size);
      assert.equal(t.complete, true, `pieces of ${size}`);
      assert.equal(t.lines, 4);
      assert.equal(t.end, 4);
      assert.deepEqual(t.counts, { message: 1, membership: 1, reaction: 1, attachment: 1 });
    }
    // the last line without its newline counts too
    assert.equal(tally(WHOLE.trimEnd(), 5).complete, true);
  });

  test('an unknown user: the end line alone, count 0', () => {
    const t = tally('{"type":"end","count":0}\n', 3);
    assert.equal(t.complete, true);
    assert.equal(t.lines, 0);
  });

  test('a body without its end line was cut off: not complete', () => {
    const cut = WHOLE.slice(0, WHOLE.indexOf('{"type":"end"'));
    const t = tally(cut, 10);
    assert.equal(t.complete, false);
    assert.equal(t.end, undefined);
    assert.equal(t.lines, 4);
    // cut inside a line: that half line does not parse
    const half = tally(WHOLE.slice(0, 30), 4);
    assert.equal(half.complete, false);
    assert.equal(half.bad, 1);
    assert.equal(tally('', 1).complete, false, 'an empty body is not an export');
  });

  test('an end line that counts other lines than came, a line after it, or one that does not parse: not complete', () => {
    assert.equal(tally(WHOLE.replace('"count":4', '"count":5'), 8).complete, false);
    assert.equal(tally(WHOLE.replace('"count":4', '"count":"4"'), 8).complete, false);
    const after = tally(WHOLE + '{"type":"message"}\n', 8);
    assert.equal(after.complete, false);
    assert.equal(after.bad, 1);
    assert.equal(tally(WHOLE.replace('{"type":"membership"', '{"type":membership"'), 8).complete, false);
    assert.equal(tally(WHOLE.replace('{"type":"reaction",', '{'), 8).complete, false, 'a line without a type');
  });

  test('the file name', () => {
    assert.equal(exportFileName('alice'), 'chatd-export-alice.ndjson');
  });
});
