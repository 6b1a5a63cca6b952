/**
 * The agent's own plan, as its todo tool last wrote it: what is done, what is
 * in progress, what is still open. Claude Code's TodoWrite, @keeper's todo and
 * Codex's update_plan pass the list as the call's input; Cursor's todo_write
 * and SpecStory's export of TodoWrite give it only in the result (`finalTodos`,
 * `newTodos`); Roo's update_todo_list writes a markdown checklist. The fold
 * keeps the last list as the Current state's Plan line: after a fold the model
 * still knows which steps it finished and which are left (Claude Code shows
 * its todo list again after compacting for the same reason).
 */
import { clipChars, statementOf } from './digest';
import type { ToolInvocation } from './types';

export type TodoStatus = 'done' | 'active' | 'open';

export interface TodoItem {
  readonly text: string;
  readonly status: TodoStatus;
}

/** The plan a todo call leaves: its items, the open ones, the first in progress. */
export interface TodoPlan {
  readonly items: readonly TodoItem[];
  readonly open: readonly string[];
  readonly active: string | undefined;
}

/** A status as the tools spell it; undefined for an item taken off the plan (cancelled). */
function statusOf(raw: unknown): TodoStatus | undefined {
  const s = typeof raw === 'string' ? raw.toLowerCase().replace(/[\s-]+/g, '_') : '';
  if (/^(?:completed?|done|finished)$/.test(s)) return 'done';
  if (/^(?:in_?progress|active|doing|started)$/.test(s)) return 'active';
  if (/^(?:cancell?ed|dropped|skipped|removed)$/.test(s)) return undefined;
  return 'open';
}

/** Items of a JSON list: `{content|step|title|task, status}` each. */
function itemsOfList(list: readonly unknown[]): TodoItem[] {
  const items: TodoItem[] = [];
  for (const entry of list) {
    if (typeof entry !== 'object' || entry === null) continue;
    const e = entry as Record<string, unknown>;
    const raw = [e.content, e.step, e.title, e.task, e.description].find((v) => typeof v === 'string' && v.trim() !== '');
    const status = statusOf(e.status);
    if (typeof raw === 'string' && status) items.push({ text: raw.trim(), status });
  }
  return items;
}

/** A markdown checklist (`- [x] done`, `- [-] in progress`, `- [ ] open`), as Roo writes its todo list. */
function itemsOfChecklist(text: string): TodoItem[] {
  const items: TodoItem[] = [];
  for (const m of text.matchAll(/^\s*(?:[-*]|\d+[.)])?\s*\[([ xX~-])\]\s+(.+?)\s*$/gm)) {
    const mark = m[1]!;
    items.push({ text: m[2]!, status: mark === 'x' || mark === 'X' ? 'done' : mark === ' ' ? 'open' : 'active' });
  }
  return items;
}

/** The list a call's input carries: `todos` (a list or a checklist) or `plan`. */
function listOfInput(input: unknown): TodoItem[] | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const { todos, plan } = input as { todos?: unknown; plan?: unknown };
  if (Array.isArray(todos)) return itemsOfList(todos);
  if (Array.isArray(plan)) return itemsOfList(plan);
  if (typeof todos === 'string') return itemsOfChecklist(todos);
  return undefined;
}

/** The list a result reports: a JSON object (alone or in a fenced block) with `finalTodos`, `newTodos` or `todos`. */
function listOfOutput(output: string | undefined): TodoItem[] | undefined {
  if (output === undefined || !/"(?:finalTodos|newTodos|todos)"\s*:/.test(output)) return undefined;
  const blocks = [...output.matchAll(/```(?:json)?\s*\n([\s\S]*?)\n```/g)].map((m) => m[1]!);
  for (const block of [...blocks.reverse(), output.trim()]) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(block);
    } catch {
      continue;
    }
    if (typeof parsed !== 'object' || parsed === null) continue;
    const o = parsed as { finalTodos?: unknown; newTodos?: unknown; todos?: unknown };
    const list = [o.finalTodos, o.newTodos, o.todos].find(Array.isArray);
    if (list) return itemsOfList(list as unknown[]);
  }
  return undefined;
}

/** The plan a todo tool's call wrote, from its input or else its result; undefined for a call that writes none (a read of the list). */
export function todoPlanOf(tool: ToolInvocation): TodoPlan | undefined {
  const items = listOfInput(tool.input) ?? listOfOutput(tool.output);
  if (items === undefined) return undefined;
  const open = items.filter((i) => i.status !== 'done').map((i) => i.text);
  return { items, open, active: items.find((i) => i.status === 'active')?.text };
}

/** Items the Plan line shows at most; past that, the oldest done ones are counted, not listed. */
const PLAN_LINE_ITEMS = 10;
/** Words an item keeps on the Plan line. */
const PLAN_ITEM_WORDS = 14;

const MARK: Record<TodoStatus, string> = { done: '[x]', active: '[>]', open: '[ ]' };

/** The Plan line: every item with its mark, in the plan's order (`[x]` done, `[>]` in progress, `[ ]` open), and where it was written. */
export function formatPlan(plan: TodoPlan, record: number): string {
  let items = plan.items;
  let folded = 0;
  while (items.length > PLAN_LINE_ITEMS) {
    const at = items.findIndex((i) => i.status === 'done');
    if (at < 0) break;
    items = [...items.slice(0, at), ...items.slice(at + 1)];
    folded++;
  }
  const shown = items.slice(0, PLAN_LINE_ITEMS).map((i) => `${MARK[i.status]} ${clipChars(statementOf(i.text, PLAN_ITEM_WORDS).replace(/[.;]+$/, ''), 120)}`);
  const more = items.length - PLAN_LINE_ITEMS;
  return [...(folded > 0 ? [`[x] ${folded} earlier item(s) done`] : []), ...shown, ...(more > 0 ? [`… ${more} more`] : [])].join('; ') + ` (todo, r${record})`;
}

/** The record of the request a goal line quotes (`#12 (r586): …`), -1 for none. */
function goalRecord(goal: string): number {
  return Number(/^#\d+ \(r(\d+)\)/.exec(goal)?.[1] ?? -1);
}

/**
 * The plan while it is the current one: written after the request the goal
 * quotes (a "continue" keeps that request, and the plan with it). A plan older
 * than the goal's request was left behind when the user asked for something
 * else without the agent writing a new one: it is no next step any more.
 */
export function currentPlan<P extends { readonly record: number }>(plan: P | undefined, goal: string): P | undefined {
  return plan && plan.record > goalRecord(goal) ? plan : undefined;
}

/**
 * The Plan line of a fold: the current plan its span's todo calls left (see
 * currentPlan), else an earlier fold's while it is current and some of it
 * still open (a finished plan is said once). A plan this span wrote that is no
 * longer current is newer than the earlier one, which is then not current either.
 */
export function planLine(plan: (TodoPlan & { readonly record: number }) | undefined, earlier: string | undefined, goal: string, clean: (text: string) => string): string | undefined {
  if (plan) return plan.items.length ? clean(formatPlan(plan, plan.record)) : undefined;
  const written = Number(/\(todo, r(\d+)\)$/.exec(earlier ?? '')?.[1] ?? -1);
  return earlier && /\[(?: |>)\]/.test(earlier) && currentPlan({ record: written }, goal) ? earlier : undefined;
}

/** The Next a current plan gives: its item in progress, else its first open one (with how many more are open). */
export function planNext(plan: TodoPlan): string | undefined {
  if (plan.active) return `${plan.active} (in progress, todo)`;
  if (plan.open.length) return `${plan.open[0]} (todo${plan.open.length > 1 ? `, ${plan.open.length - 1} more open` : ''})`;
  return undefined;
}

/** A Next that planNext wrote (a later request overtakes it). */
export const PLAN_NEXT = /\((?:in progress, )?todo(?:, \d+ more open)?\)$/;
