import { test } from 'node:test';
import assert from 'node:assert/strict';
import { uuidv7 } from '../../src/index.js';

const FORM = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('a UUIDv7 carries its millisecond, version 7 and the RFC variant', () => {
  const ms = 1_796_000_000_123; // 2026-12
  const id = uuidv7(ms);
  assert.match(id, FORM);
  assert.equal(parseInt(id.replace(/-/g, '').slice(0, 12), 16), ms);
});

test('ids made later sort later, also within one millisecond, and never repeat', () => {
  const made: string[] = [];
  let ms = 1_796_000_000_000;
  for (let i = 0; i < 3000; i++) {
    if (i % 7 === 0) ms += 1;
    made.push(uuidv7(ms));
  }
  made.push(uuidv7(ms)); // the same millisecond again
  for (let i = 1; i < made.length; i++) {
    assert.ok((made[i - 1] ?? '') < (made[i] ?? ''), `${made[i - 1]} before ${made[i]}`);
  }
  assert.equal(new Set(made).size, made.length);
  for (const id of made) assert.match(id, FORM);
});

test('ids made at the same moment by default differ in their random part', () => {
  const a = uuidv7();
  const b = uuidv7();
  assert.notEqual(a, b);
  assert.notEqual(a.slice(19), b.slice(19));
});
