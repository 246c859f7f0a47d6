// Fenced code blocks of a Markdown file, for the tests that type-check and run a guide's
// code as written (the README's, docs/react.md's). Node built-ins only: the React
// binding's tests compile this file too.
import { readFileSync } from 'node:fs';

/** One fenced block: its language tag, its text, where it starts, and its marker. */
export interface CodeBlock {
  /** The fence's language tag (`ts`, `tsx`, `sh`, …; empty when none). */
  readonly lang: string;
  /** The code between the fences. */
  readonly code: string;
  /** 1-based line of the opening fence, for failure messages. */
  readonly line: number;
  /**
   * The word of a `<!-- code-check: WORD [ARG] -->` comment on the line before the fence,
   * when there is one: `run` (the tests run it against a real chatd), `skip` (not
   * checked), `file` (the block is the file ARG of a guide's example app).
   */
  readonly marker: string | undefined;
  /** The marker's ARG (e.g. the file name of `file`). */
  readonly arg: string | undefined;
}

/** The fenced blocks of the Markdown file at `path`, in order. */
export function codeBlocks(path: string): CodeBlock[] {
  const lines = readFileSync(path, 'utf8').split('\n');
  const out: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i] ?? '');
    if (open === null) continue;
    const prev = i > 0 ? (lines[i - 1] ?? '') : '';
    const m = /^<!-- code-check: (\w+)(?: (\S+))? -->$/.exec(prev.trim());
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !/^```\s*$/.test(lines[j] ?? '')) body.push(lines[j++] ?? '');
    if (j >= lines.length) throw new Error(`${path}:${i + 1}: a code block is never closed`);
    out.push({ lang: open[1] ?? '', code: body.join('\n') + '\n', line: i + 1, marker: m?.[1], arg: m?.[2] });
    i = j;
  }
  return out;
}
