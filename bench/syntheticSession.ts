/**
 * A deterministic synthetic agent session of any length, for benchmarks.
 * Steps cycle through a fixed mix (file reads, greps, shell runs, edits, plain
 * text), so every stretch of the session carries the same kind of new content
 * per step; each step's content is unique (ids and numbers change), so no
 * cache can serve it from an earlier step.
 */
import type { RawRecord } from '../src/core/types';

export interface SyntheticStep {
  /** Records of one step: the assistant records and their tool results. */
  readonly records: RawRecord[];
  /** A user record that precedes the step (a new turn), if any. */
  readonly user: RawRecord | undefined;
}

const WORDS = 'alpha beta gamma delta invoice ledger parse token render cache window budget summary record part step tool result'.split(' ');

function line(seed: number, i: number): string {
  const w = (k: number): string => WORDS[(seed * 31 + i * 7 + k * 13) % WORDS.length]!;
  return `export function ${w(0)}${seed}_${i}(${w(1)}: number, ${w(2)}: string): ${w(3)} { return ${w(4)}(${i} + ${seed}, "${w(5)}"); }`;
}

export class SyntheticSession {
  private index = 0;
  private step = 0;
  private call = 0;

  private push(out: RawRecord[], record: Omit<RawRecord, 'index'>): void {
    out.push({ ...record, index: this.index++ } as RawRecord);
  }

  /** The next step of the session (with a user record every `turnEvery` steps). */
  next(turnEvery = 20): SyntheticStep {
    const s = this.step++;
    let user: RawRecord | undefined;
    if (s % turnEvery === 0) {
      user = {
        index: this.index++,
        role: 'user',
        content: `Turn ${s / turnEvery}: continue the refactor of module ${s}. Never modify the production database. Keep the API of module ${s} unchanged.`,
      };
    }
    const records: RawRecord[] = [];
    const messageId = `msg_${s}`;
    const id = (): string => `toolu_${s}_${this.call++}`;
    const kind = s % 5;
    this.push(records, { role: 'assistant', content: `Step ${s}: I'll look at part ${s} next because ${WORDS[s % WORDS.length]} depends on it.`, messageId });
    const callId = id();
    let name: string;
    let input: unknown;
    let output: string;
    switch (kind) {
      case 0: {
        name = 'Read';
        input = { file_path: `src/module${s}.ts` };
        output = Array.from({ length: 150 }, (_, i) => `${String(i + 1).padStart(6)}→${line(s, i)}`).join('\n');
        break;
      }
      case 1: {
        name = 'Grep';
        input = { pattern: `${WORDS[s % WORDS.length]}${s}`, path: 'src' };
        output = Array.from({ length: 25 }, (_, i) => `src/module${s + i}.ts:${i * 3 + 1}: ${line(s, i)}`).join('\n');
        break;
      }
      case 2: {
        name = 'Bash';
        input = { command: `npm test -- module${s}`, description: 'run the tests' };
        output = `${Array.from({ length: 30 }, (_, i) => `  ✓ module${s} case ${i} handles ${WORDS[(s + i) % WORDS.length]} (${(s * 7 + i) % 40} ms)`).join('\n')}\nExit code: 0`;
        break;
      }
      case 3: {
        name = 'Edit';
        input = { file_path: `src/module${s}.ts`, old_string: line(s, 1), new_string: `${line(s, 1)}\n${line(s, 2)}` };
        output = `The file src/module${s}.ts has been updated. Here's the result of running \`cat -n\` on a snippet:\n${Array.from({ length: 12 }, (_, i) => `${String(i + 1).padStart(6)}→${line(s, i)}`).join('\n')}`;
        break;
      }
      default: {
        name = 'Glob';
        input = { pattern: `src/**/*${s}*.ts` };
        output = Array.from({ length: 20 }, (_, i) => `src/deep/path/module${s}_${i}.ts`).join('\n');
      }
    }
    this.push(records, { role: 'assistant', content: '', toolName: name, toolCallId: callId, toolInput: input, messageId });
    this.push(records, { role: 'tool', content: '', toolName: name, toolCallId: callId, toolOutput: output });
    return { records, user };
  }
}
