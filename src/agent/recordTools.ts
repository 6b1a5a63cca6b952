/**
 * What Context Keeper offers every agent in VS Code as language model tools
 * (src/agent/lmTools.ts registers them): a task's Task Context with its
 * protected facts and their sources, a word search of the task's raw record
 * (seed 000's retrieval channel, on demand), and any recorded tool call in full.
 *
 * No `vscode` here: each function reads a `TaskSession` and returns the text the
 * calling model gets. Secrets and personal data are redacted as everywhere the
 * model reads; the raw record keeps them.
 */
import { RetrievalIndex } from '../core/retrieval';
import { TASK_CONTEXT_HEADING } from '../core/summary';
import type { TaskSession } from './taskSession';
import { DEFAULT_MAX_OUTPUT_CHARS } from './tools/limits';
import { formatToolCallView } from './tools/viewToolCall';

/** The most a record search returns, in characters of quoted passages. */
export const RECORD_SEARCH_CHARS = 8_000;
const PROTECTED_HEADING = '## Protected state';

/** The task's Task Context as the model sees it now, then every active protected fact with its writer and sources. */
export function taskContextText(task: TaskSession): string {
  const session = task.session;
  const head = session.engine.project()[0];
  const folded = head !== undefined && (head.content.startsWith(TASK_CONTEXT_HEADING) || head.content.startsWith(PROTECTED_HEADING));
  const facts = session.state.active();
  const pending = session.state.pending();
  const lines = [`# Task ${task.id} (${task.records.length} records)`, ''];
  if (folded) lines.push(head.content, '');
  else lines.push('Nothing of this task is summarized yet: the whole record still fits in its window.', '');
  lines.push('## Protected facts (each with who stated it and the records it comes from)');
  if (facts.length === 0) lines.push('(none)');
  for (const fact of facts) lines.push(`- [${fact.type}] ${fact.value} — ${fact.writer}, ${sourcesOf(fact.sources)}${fact.pinned ? ', pinned' : ''}`);
  if (pending.length > 0) {
    lines.push('', '## Pending candidates (found in tool output or model text; not in force until the user confirms them)');
    for (const fact of pending) lines.push(`- [${fact.type}] ${fact.value} — ${sourcesOf(fact.sources)}`);
  }
  return task.session.redactor.redact(lines.join('\n')).text;
}

/** The passages of the task's raw record that best match `query` (every word counted once, rarer words weigh more), oldest first. */
export function recordSearchText(task: TaskSession, query: string, maxChars = RECORD_SEARCH_CHARS): string {
  const units = task.session.record.units;
  const index = new RetrievalIndex(task.session.redactor);
  index.extend(units, units.length);
  const found = index.search(query, maxChars, undefined, true).sort((a, b) => a.record - b.record);
  if (found.length === 0) return `No passage of task ${task.id} (${task.records.length} records) matches ${JSON.stringify(query)}. Try other or fewer words.`;
  const passages = found.map((p) => `[r${p.record}]\n${p.text}`);
  return task.session.redactor.redact([`${found.length} passage(s) of task ${task.id} matching ${JSON.stringify(query)}, word for word, with their record numbers:`, ...passages].join('\n\n')).text;
}

/** A recorded tool call of the task in full, or why not. */
export function toolCallText(task: TaskSession, toolCallId: string, maxChars = DEFAULT_MAX_OUTPUT_CHARS): { text: string; found: boolean } {
  const call = task.session.viewToolCall(toolCallId);
  if (!call) return { found: false, text: `Task ${task.id} has no tool call with id ${JSON.stringify(toolCallId)}.` };
  return { found: true, text: task.session.redactor.redact(formatToolCallView(toolCallId, call, maxChars)).text };
}

function sourcesOf(sources: readonly number[]): string {
  return sources.length === 0 ? 'no source record' : `from ${sources.map((s) => `r${s}`).join(', ')}`;
}
