// Validates chatd's AsyncAPI document of the WebSocket frames
// (src/http/asyncapi/asyncapi.json, served at GET /v1/asyncapi.json) with the
// AsyncAPI project's own parser (@asyncapi/parser: the AsyncAPI 3.0 JSON
// Schema and its ruleset), then every message's examples against the
// message's payload schema (ajv, JSON Schema draft 7 with formats).
//
// Fails (exit 1) on any diagnostic of severity error or warning, on a message
// without examples, and on an example its payload schema refuses. Before
// that, it checks that it can fail: a copy of the document with a broken
// operation must be refused by the parser, and one with an example of the
// wrong type by the example check.
//
// Usage: node check.mjs [path/to/asyncapi.json]
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Parser, DiagnosticSeverity } from '@asyncapi/parser';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';

const defaultPath = fileURLToPath(new URL('../../src/http/asyncapi/asyncapi.json', import.meta.url));
const path = process.argv[2] ?? defaultPath;
const text = readFileSync(path, 'utf8');

const parser = new Parser();

/**
 * Parses `source`; returns the problems found (strings), empty when valid.
 * Diagnostics below warning (the parser's hints) are printed unless `quiet`.
 */
async function problems(source, quiet = false) {
  const found = [];
  const { document, diagnostics } = await parser.parse(source);
  for (const d of diagnostics) {
    const where = `${d.code} at ${d.path.join('/') || '/'}: ${d.message}`;
    if (d.severity === DiagnosticSeverity.Error || d.severity === DiagnosticSeverity.Warning) {
      found.push(where);
    } else if (!quiet) {
      console.log(`note: ${where}`);
    }
  }
  if (!document) {
    found.push('the parser returned no document');
    return found;
  }
  const ajv = new Ajv({ strict: true, allErrors: true });
  addFormats(ajv);
  // The parser marks each schema it read with its id.
  ajv.addKeyword('x-parser-schema-id');
  const messages = document.allMessages().all();
  if (messages.length === 0) found.push('no messages');
  for (const message of messages) {
    const examples = message.examples().all();
    if (examples.length === 0) {
      found.push(`message ${message.id()}: no examples`);
      continue;
    }
    let validate;
    try {
      validate = ajv.compile(message.payload().json());
    } catch (error) {
      found.push(`message ${message.id()}: its payload schema does not compile: ${error.message}`);
      continue;
    }
    for (const example of examples) {
      if (!validate(example.payload())) {
        found.push(`message ${message.id()}, example ${example.name()}: ${ajv.errorsText(validate.errors)}`);
      }
    }
  }
  return found;
}

// The check can fail: a broken operation, and an example of the wrong type.
const brokenOperation = JSON.parse(text);
brokenOperation.operations.receiveClientFrame.action = 'recv';
if ((await problems(JSON.stringify(brokenOperation), true)).length === 0) {
  console.error('FAIL: the parser accepted an operation with action "recv"');
  process.exit(1);
}
const brokenExample = JSON.parse(text);
const firstMessage = Object.values(brokenExample.components.messages)[0];
firstMessage.examples[0].payload.type = 42;
if ((await problems(JSON.stringify(brokenExample), true)).length === 0) {
  console.error('FAIL: the example check accepted an example whose `type` is a number');
  process.exit(1);
}

const found = await problems(text);
if (found.length > 0) {
  console.error(`FAIL: ${path} is not a valid AsyncAPI document:`);
  for (const p of found) console.error(`  ${p}`);
  process.exit(1);
}
console.log(`ok: ${path} is a valid AsyncAPI document; every message's examples match its payload schema`);
