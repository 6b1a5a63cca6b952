/**
 * Builders for synthetic sessions used by the engine tests: deterministic,
 * small, and shaped like real agent logs (user asks, steps with text and tool
 * calls, tool results).
 */
import { computeBudget, type Budget } from '../../src/core/budget';
import { CompactionSession, type SessionOptions } from '../../src/core/session';
import { CharRatioTokenCounter, type TokenCounter } from '../../src/core/tokens';
import type { RawRecord } from '../../src/core/types';
import { SecretRedactor } from '../../src/core/redact';

const redactor = new SecretRedactor();

export class RecordBuilder {
  readonly records: RawRecord[] = [];
  private calls = 0;
  private responses = 0;

  user(content: string): this {
    this.records.push({ index: this.records.length, role: 'user', content });
    return this;
  }

  /** One model generation: optional text, then tool calls, then their results. */
  step(text: string, tools: { name: string; input: unknown; output: string; isError?: boolean }[] = []): this {
    const messageId = `msg_${++this.responses}`;
    if (text) this.records.push({ index: this.records.length, role: 'assistant', content: text, messageId });
    const ids: string[] = [];
    for (const t of tools) {
      const id = `call_${++this.calls}`;
      ids.push(id);
      this.records.push({ index: this.records.length, role: 'assistant', content: '', toolName: t.name, toolCallId: id, toolInput: t.input, messageId });
    }
    tools.forEach((t, i) => {
      this.records.push({
        index: this.records.length,
        role: 'tool',
        content: '',
        toolName: t.name,
        toolCallId: ids[i]!,
        toolOutput: t.output,
        ...(t.isError ? { isError: true } : {}),
      });
    });
    return this;
  }

  /** A step that reads a file of `lines` numbered lines. */
  read(path: string, lines: number, text = ''): this {
    const body = Array.from({ length: lines }, (_, i) => `${String(i + 1).padStart(6)}→const value${i} = compute(${i}); // ${path}`).join('\n');
    return this.step(text, [{ name: 'Read', input: { file_path: path }, output: body }]);
  }
}

/** Counts every call to the underlying counter (to prove nothing is re-tokenized). */
export class SpyCounter implements TokenCounter {
  calls = 0;
  chars = 0;
  private readonly inner = new CharRatioTokenCounter();
  count(text: string): number {
    this.calls++;
    this.chars += text.length;
    return this.inner.count(text);
  }
}

export function budgetOf(window: number, reserve = 0): Budget {
  return computeBudget({ window, reserve });
}

export function newSession(budget: Budget, extra: Partial<SessionOptions> = {}): CompactionSession {
  return new CompactionSession({ budget, counter: extra.counter ?? new CharRatioTokenCounter(), redactor, ...extra });
}

/** Plays records like the live loop does; returns the step reports. */
export async function play(session: CompactionSession, records: readonly RawRecord[], from = 0, to = records.length) {
  const reports = [];
  for (let i = from; i < to; i++) {
    const r = records[i]!;
    if (session.opensStep(r)) {
      const { report, messages } = await session.prepareCall(i);
      reports.push({ at: i, report });
      session.observeSent(messages.reduce((n, m) => n + Math.ceil(m.content.length / 4) + 4, 0));
    }
    session.append(r);
    if (r.role === 'user') session.preflight();
  }
  return reports;
}
