/**
 * What the model is not seeing in full, and how to get it back: the folded
 * span and its tool calls, and every part in view sent shrunk or dropped. The
 * panel lists it (`NotLoadedList`); the head names the latest folded calls in
 * its own "Evidence not loaded" block (`evidenceBlock`), so the model knows
 * what it does not know.
 */
import { PrefixFold } from './memo';
import { toolKey, type SessionRecord } from './parts';
import type { Redactor } from './redact';
import { quotedSnippet } from './toolResults';
import { shellCommand, toolSubject } from './tools';
import type { Part, ToolInvocation, Unit } from './types';
import type { View } from './view';

export interface NotLoadedEntry {
  readonly address: string;
  readonly kind: 'tool' | 'text' | 'reasoning' | 'span';
  readonly toolCallId?: string;
  /** The tool's name, and what the call was about (its command or first file, secrets hidden). */
  readonly tool?: string;
  readonly subject?: string;
  /** The record the part starts at (the call, for a tool part). */
  readonly record?: number;
  readonly tokens: number;
  readonly how: 'shrunk' | 'dropped' | 'folded';
  readonly recover: string;
}

/**
 * What a list of parts not loaded adds up to: the folded span's tokens count
 * its tool calls (listed too, each with its own size) once; shrunk and dropped
 * parts are counted apart.
 */
export function notLoadedTotals(entries: readonly NotLoadedEntry[]): { readonly tokens: number; readonly shrunk: number; readonly dropped: number } {
  const span = entries.some((e) => e.kind === 'span');
  let tokens = 0;
  let shrunk = 0;
  let dropped = 0;
  for (const e of entries) {
    if (!(span && e.how === 'folded' && e.kind !== 'span')) tokens += e.tokens;
    if (e.how === 'shrunk') shrunk++;
    else if (e.how === 'dropped') dropped++;
  }
  return { tokens, shrunk, dropped };
}

/** How many of the most recently folded tool calls the context lists by id: one per 1,000 tokens of wEff, 5 to 20. */
const EVIDENCE_PER_TOKENS = 1000;
const EVIDENCE_MIN = 5;
const EVIDENCE_MAX = 20;

/**
 * A call's name and what it was about (its command's first line, else the
 * first file it touched), secrets hidden before the subject is cut (a cut
 * token no longer looks like one); `ellipsis` marks a cut.
 */
export function callLabel(tool: ToolInvocation, redactor: Redactor, max = 120, ellipsis = true): { tool: string; subject?: string } {
  const subject = toolSubject(tool);
  if (subject === undefined || subject === '') return { tool: tool.name };
  const shown = redactor.redact(subject.slice(0, 4096)).text;
  if (shown.length <= max) return { tool: tool.name, subject: shown };
  return { tool: tool.name, subject: ellipsis ? `${shown.slice(0, max - 1)}…` : shown.slice(0, max) };
}

/** A folded call as the head's evidence block names it: `Bash \`npm test\``, `Read src/a.ts`. */
function evidenceLabel(part: Part, redactor: Redactor): string {
  const tool = part.tool!;
  const command = shellCommand(tool) !== undefined;
  const { subject } = callLabel(tool, redactor, command ? 80 : Number.POSITIVE_INFINITY, false);
  if (subject === undefined) return tool.name;
  return command ? `${tool.name} \`${subject}\`` : `${tool.name} ${subject}`;
}

/**
 * "Evidence not loaded", in the context itself: the most recently folded tool
 * calls (of units before `coverageUnit`, records before `coverageEnd`), each
 * with how to get it back ('' when nothing was folded).
 */
export function evidenceBlock(units: readonly Unit[], coverageUnit: number, coverageEnd: number, effective: number, redactor: Redactor): string {
  const folded: { head: string; record: number; earlier: number; silent: string }[] = [];
  // The same call made again (a command re-run, one file read twice) takes one entry, its newest run, and counts the others.
  const byLabel = new Map<string, (typeof folded)[number]>();
  let more = false;
  for (let i = coverageUnit - 1; i >= 0 && !more; i--) {
    const parts = units[i]!.parts;
    for (let k = parts.length - 1; k >= 0; k--) {
      const part = parts[k]!;
      // A snippet an export turned into a call never ran: there is nothing of it to get back.
      if (part.kind !== 'tool' || !part.tool || quotedSnippet(part.tool)) continue;
      const label = evidenceLabel(part, redactor);
      const same = byLabel.get(label);
      if (same) {
        same.earlier++;
        continue;
      }
      if (folded.length >= Math.min(EVIDENCE_MAX, Math.max(EVIDENCE_MIN, Math.floor(effective / EVIDENCE_PER_TOKENS)))) {
        more = true;
        break;
      }
      // A call that printed nothing (an export that kept no output, a snippet it turned into a call) says so: nothing
      // there tells what it did, or that it ran at all.
      const silent = !part.tool.isError && part.tool.output?.trim() === '' ? 'no output recorded; ' : '';
      const entry = { head: `- view_tool_call("${toolKey(part)}"): ${label}`, record: part.record, earlier: 0, silent };
      folded.push(entry);
      byLabel.set(label, entry);
    }
  }
  if (folded.length === 0) return '';
  return [
    '## Evidence not loaded',
    `Tool calls folded into this summary, newest first${more ? ` (earlier ones of records r0–r${coverageEnd - 1} too)` : ''}; shortened results below carry their own pointer.`,
    ...folded.map((e) => `${e.head} (${e.silent}folded, r${e.record}${e.earlier ? `; made ${e.earlier} more time${e.earlier > 1 ? 's' : ''} before` : ''})`),
  ].join('\n');
}

/** The folded prefix as listed: its raw tokens and an entry per tool call. */
interface FoldedSpan {
  spanTokens: number;
  readonly entries: NotLoadedEntry[];
}

/** The list of what the view does not show in full. */
export class NotLoadedList {
  /**
   * The folded prefix's tool calls and its raw tokens, extended as the
   * coverage grows (a folded unit never changes), so a panel snapshot of a
   * long task costs the raw tail, not the whole history.
   */
  private readonly folded: PrefixFold<FoldedSpan>;

  constructor(
    private readonly record: SessionRecord,
    private readonly view: View,
    private readonly redactor: Redactor,
  ) {
    this.folded = new PrefixFold((span, from, to) => this.foldedSpan(span ?? { spanTokens: 0, entries: [] }, from, to));
  }

  /** Everything the model is not seeing in full, and how to get it back. */
  list(): NotLoadedEntry[] {
    const out: NotLoadedEntry[] = [];
    const units = this.record.units;
    const view = this.view;
    const coverageEnd = view.coverageEnd;
    if (view.coverageUnit > 0) {
      const folded = this.folded.upTo(view.coverageUnit);
      out.push({
        address: `span:r0-r${coverageEnd - 1}`,
        kind: 'span',
        tokens: folded.spanTokens,
        how: 'folded',
        recover: `records r0–r${coverageEnd - 1} (summarized in ## Task Context)`,
      });
      for (const entry of folded.entries) out.push(entry);
    }
    for (let i = view.coverageUnit; i < units.length; i++) {
      for (const part of units[i]!.parts) {
        const form = view.formOf(part.address);
        if (!form) continue;
        const entry: NotLoadedEntry = {
          address: part.address,
          kind: part.kind,
          record: part.record,
          tokens: view.rawTokens(part),
          how: form.how,
          recover: form.recover ?? 'not recoverable by the model (dropped by the tool\'s own declaration)',
        };
        out.push(part.tool ? { ...entry, toolCallId: part.tool.callId, ...callLabel(part.tool, this.redactor) } : entry);
      }
    }
    return out;
  }

  /** `span` extended over units [from, to). */
  private foldedSpan(span: FoldedSpan, from: number, to: number): FoldedSpan {
    const units = this.record.units;
    for (let i = from; i < to; i++) {
      for (const part of units[i]!.parts) {
        const tokens = this.view.rawTokens(part);
        span.spanTokens += tokens;
        if (part.kind === 'tool' && part.tool) {
          span.entries.push({ address: part.address, kind: 'tool', toolCallId: part.tool.callId, ...callLabel(part.tool, this.redactor), record: part.record, tokens, how: 'folded', recover: `view_tool_call("${part.tool.callId}")` });
        }
      }
    }
    return span;
  }
}
