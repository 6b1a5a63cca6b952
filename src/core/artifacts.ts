/**
 * The artifact index: per file, the reads, modifications and creations seen in
 * tool calls, with the steps and calls that touched them. It lives beside the
 * summary, not in it, so the file trail never decays with folding.
 */
import type { Redactor } from './redact';
import type { AppendEvent } from './parts';
import { callFailed, quotedSnippet } from './toolResults';
import { aiderAppliedEdits, aiderHeldBack, classifyTool, heldBackEdit, fileTouches, samePathKey, type FileTouch } from './tools';
import type { ToolInvocation, Unit } from './types';
import { forwardSlashes, onlyLongerPath, onlyPartialName } from './paths';

/** Extensions that make a bare name in prose a file (`cell.py`, `README.md`). */
const FILE_EXTENSIONS = 'ts|tsx|js|jsx|mjs|cjs|py|rs|go|java|kt|rb|php|cs|cpp|c|h|hpp|swift|md|json|ya?ml|toml|sh|css|scss|html|vue|svelte|sql|txt|mdc';
/** A file-like name in prose: a path with a slash, or a name with an extension (`src/a.ts`, `cell.py`). */
const NAMED_FILE = new RegExp(`\`([^\`\\s]+\\.[A-Za-z][\\w]{0,7}|[^\`\\s]*\\/[^\`\\s]+)\`|(?:^|[\\s(])((?:[\\w.~-]+\\/)+[\\w.-]+\\.[A-Za-z][\\w]{0,7}|[\\w-]+\\.(?:${FILE_EXTENSIONS}))(?=[\\s),.:;]|$)`, 'g');

/** Extensions of the files an agent edits: those of files named in prose, and lock files. */
const SOURCE_EXTENSIONS = `${FILE_EXTENSIONS}|lock`;
/** A file named in prose with a known extension, in backticks or bare (`src/domain/tasks.ts`, CHANGELOG.md). */
const EDITED_FILE = new RegExp(`\`([^\`\\s]+\\.(?:${SOURCE_EXTENSIONS}))\`|(?:^|[\\s(])((?:[\\w.~-]+\\/)*[\\w.-]+\\.(?:${SOURCE_EXTENSIONS}))(?=[\\s),.:;]|$)`, 'g');

/** A library's name that looks like a file (Node.js, Vue.js). */
const FRAMEWORK_NAME = /^(?:node|vue|next|nuxt|react|express|three|chart|d3|ember|backbone|angular)\.js$/i;

/**
 * A code block Cursor's chat writes for its Apply button: the language, a colon and the file it changes
 * (```` ```python:app/models/cell.py ````).
 */
const FENCE_PATH = '```[\\w+#.-]*:((?:[\\w.~-]+/)*[\\w.-]+\\.[A-Za-z]\\w{0,7})';
const PATHED_FENCE = new RegExp(`^${FENCE_PATH}$`);
const PATHED_FENCE_ANYWHERE = new RegExp(`^\\s*${FENCE_PATH}\\s*$`, 'm');

/**
 * The files an export shows edited inside the agent's text: SpecStory renders
 * a Cursor edit as a ```diff block that opens a segment of the message (right
 * after a `---` separator), with no call of its own; the file is the one the
 * segment before it (the edit's lead-in: "Let's add the helper to
 * `src/domain/tasks.ts`:") named last. Diff blocks that follow it directly belong to
 * the same edit; a diff inside the prose is a proposal, not an edit. An older
 * export prints the edit as a message of its own, one bare code block that
 * keeps Cursor's `// ... existing code ...` marks, or a whole file after a
 * lead-in that says it changes one ("I'll now update both components. Let me
 * start with `ApiConfigManager.tsx`:"): its file is the one its lead-in
 * (`lead`, the message before it) names last. An edit whose prose
 * names no file is left out: a wrong file is worse than none.
 */
export function renderedEdits(text: string, lead?: string): string[] {
  if (lead !== undefined && text.trimStart().startsWith('```') && EDIT_MESSAGE.test(text) && (EXISTING_CODE.test(text) || CHANGE_LEAD.test(lead))) {
    const named = lastEditedFile(lead);
    return named === undefined ? [] : [named];
  }
  if (!text.includes('```diff')) return [];
  const lines = text.split('\n');
  const out: string[] = [];
  // The prose of the segment being read, and of the one the last separator closed (the edit's own lead-in).
  let segment = '';
  let leadIn = '';
  let previous = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '```diff') {
      let end = i + 1;
      while (end < lines.length && lines[end]!.trim() !== '```') end++;
      if (previous === '---') {
        const named = lastEditedFile(leadIn);
        if (named !== undefined) out.push(named);
      }
      previous = '```';
      i = end;
      continue;
    }
    if (line === '') continue;
    if (line === '---') {
      leadIn = segment;
      segment = '';
    } else segment += `${lines[i]}\n`;
    previous = line;
  }
  return out;
}

/**
 * The file a lead-in names last (an edit's file), if it names one: no link, placeholder or framework name, and not
 * a file something comes from ("we need to import `ApiConfigMeta` from `src/shared/ExtensionMessage.ts`" edits the
 * file that imports it).
 */
function lastEditedFile(lead: string): string | undefined {
  const named = [...lead.matchAll(EDITED_FILE)].filter((m) => {
    const n = m[1] ?? m[2]!;
    return !/^https?:|[<>*{}$]/.test(n) && !FRAMEWORK_NAME.test(n);
  });
  const last = named[named.length - 1];
  if (last === undefined) return undefined;
  // "Remove the dead import from `utils.ts`" may edit it, or the file importing from it: neither is certain.
  const at = last.index + (last[1] === undefined ? last[0].indexOf(last[2]!) : 0);
  return /\bfrom\s*`?$/i.test(lead.slice(Math.max(0, at - 12), at)) ? undefined : (last[1] ?? last[2]!);
}

/** A message that is one fenced code block and nothing else (how an older SpecStory export prints a Cursor edit). */
const EDIT_MESSAGE = /^\s*```[\w+#.-]*[ \t]*\r?\n(?:(?!```)[^\n]*\n)*?[ \t]*```\s*$/;
/** The marker Cursor's edits put where the file's unchanged lines stay: `// ... existing code ...`, `# ... existing imports ...`. */
const EXISTING_CODE = /^[ \t]*(?:\/\/|#|--|;|<!--|\/\*|\{\/\*)[ \t]*(?:\.{3}|…)[ \t]*(?:existing|rest of the (?:code|file)|unchanged)\b/im;

/** A lead-in that says the agent changes something and ends in a colon: the bare code block after it is the change. */
const CHANGE_LEAD = /\b(?:update|modify|change|create|add|implement|fix|rewrite|refactor|edit)\b[^\n]*[:：]\s*$/i;

/**
 * The text part before part `index` of a unit, when it is text: the lead-in of
 * an edit an export prints as a message of its own (older SpecStory exports of
 * Cursor: "Now let's update the `SettingsView.tsx` component:", then the edit
 * as a bare code block holding `// ... existing code ...`).
 */
export function leadInOf(unit: Unit, index: number): string | undefined {
  const before = unit.parts[index - 1];
  // An edit just before is no lead-in: a file its code names in a comment is no file the next edit writes.
  return before?.kind === 'text' && !before.text.trimStart().startsWith('```') ? before.text : undefined;
}

/**
 * The files of the code blocks Cursor's chat offers to apply (```` ```python:app/models/cell.py ````): the block
 * names its file, the user applies it with one click and the session goes on from the changed file. The artifact
 * index counts it as a change of its file; the head's Deliverables do not (an offer, not an edit the agent made: the
 * user may have discarded it, and a long chat of offers would fill the head with paths the request log names).
 */
export function offeredEdits(text: string): string[] {
  if (!PATHED_FENCE_ANYWHERE.test(text)) return [];
  const out: string[] = [];
  let fenced = false;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line.startsWith('```')) continue;
    const pathed = fenced ? null : PATHED_FENCE.exec(line);
    if (pathed) out.push(pathed[1]!);
    fenced = !fenced;
  }
  return out;
}

/** How far back in its turn a pathless edit looks for the file it wrote: the steps before it. */
const EDIT_LOOKBACK_STEPS = 8;

/**
 * The units just before unit `at` that a pathless edit at `at` (or at the start of a fold's span) may look back
 * through: at most EDIT_LOOKBACK_STEPS, oldest first (touchesInStep stops at the first not of the same turn).
 */
export function unitsBefore(units: readonly Unit[], at: number): readonly Unit[] {
  return units.slice(Math.max(0, at - EDIT_LOOKBACK_STEPS), at);
}

/**
 * The files a tool call touched, read in its step: what the call names, or,
 * for an edit whose call names no file (a SpecStory export's rendered edit, an
 * empty Copilot replace), the file the step's prose named last before it, else
 * the file the step last read or wrote — and when the step holds nothing before
 * the call (an export that gives each call a step of its own: SpecStory's
 * Copilot reads a file, then replaces a string in it with no path), the file
 * read or written last in the steps of its turn before it (`earlier`, oldest
 * first). Only the call is read, never its result, so the artifact index (which
 * sees the call before its result) and the summary name the same file.
 */
export function touchesInStep(unit: Unit, partIndex: number, tool: ToolInvocation | undefined = unit.parts[partIndex]?.tool, earlier: readonly Unit[] = []): readonly FileTouch[] {
  if (!tool) return [];
  const own = fileTouches(tool);
  if (own.length) return own;
  const family = classifyTool(tool.name, tool.input).family;
  if (family !== 'edit' && family !== 'write') return [];
  for (let i = partIndex - 1; i >= 0; i--) {
    const before = unit.parts[i]!;
    if (before.kind === 'text') {
      const named = [...before.text.matchAll(NAMED_FILE)].map((m) => m[1] ?? m[2]!).filter((n) => !/^https?:/.test(n));
      if (named.length) return [{ path: named[named.length - 1]!, access: 'modify' }];
    } else if (before.tool) {
      const touched = fileTouches(before.tool);
      if (touched.length) return [{ path: touched[0]!.path, access: 'modify' }];
    }
  }
  // Only a call with no file field at all (Copilot's replace, exported with an empty input): a call whose path was
  // rejected (aider's echo of a block that failed to match) names no file, and writes none.
  const pathless = tool.input === undefined || tool.input === null || tool.input === '' || (typeof tool.input === 'object' && Object.keys(tool.input).length === 0);
  if (partIndex > 0 || !pathless) return [];
  for (const step of earlier.slice(-EDIT_LOOKBACK_STEPS).reverse()) {
    if (step.kind !== 'step' || step.turn !== unit.turn) break;
    for (let i = step.parts.length - 1; i >= 0; i--) {
      const call = step.parts[i]!.tool;
      const touched = call && !callFailed(call) ? fileTouches(call) : [];
      if (touched.length) return [{ path: touched[0]!.path, access: 'modify' }];
    }
  }
  return [];
}

/**
 * The form of `path` already known: one file named by its absolute path and by
 * a relative one (`reproduce_bug.py`, then `/repo/reproduce_bug.py`), with and
 * without a `./` (leading or inside: `/repo/tests/./x.py`), or from the home directory (`~/proj/x` and
 * `C:\Users\me\proj\x` or `/Users/me/proj/x`), is one file, under the form
 * seen first — when the known forms that match all name one file. Otherwise
 * `path` itself.
 */
export function knownPathOf(path: string, known: Iterable<string>): string {
  const slashed = (p: string): string => forwardSlashes(p).replace(/^(?:\.\/)+/, '').replace(/\/(?:\.\/)+/g, '/');
  const absolute = (p: string): boolean => /^(?:[A-Za-z]:)?\//.test(p);
  const p = slashed(path);
  const pHome = underHome(p);
  let match: string | undefined;
  for (const k of known) {
    const q = slashed(k);
    const qHome = underHome(q);
    const same =
      q === p ||
      (pHome !== undefined && qHome !== undefined ? pHome.tilde !== qHome.tilde && sameRest(pHome, qHome) : !p.startsWith('~') && !q.startsWith('~') && absolute(p) !== absolute(q) && (absolute(p) ? p.endsWith(`/${q}`) : q.endsWith(`/${p}`)));
    if (!same) continue;
    // Two known forms of one file (`a/x.json` and `./a/x.json` seen before they were merged) are not two candidates.
    if (match !== undefined && slashed(match) !== q) return path;
    match ??= k;
  }
  return match ?? path;
}

/** A path in a home directory: what follows `~/`, or `/Users/<name>/`, `/home/<name>/`, `C:/Users/<name>/`. */
function underHome(p: string): { tilde: boolean; rest: string; windows: boolean } | undefined {
  if (p.startsWith('~/')) return { tilde: true, rest: p.slice(2), windows: false };
  const m = /^(?:([A-Za-z]):)?\/(?:Users|home)\/[^/]+\/(.+)$/.exec(p);
  return m ? { tilde: false, rest: m[2]!, windows: m[1] !== undefined } : undefined;
}

/** Whether two paths under a home name one file (a Windows path in any case). */
function sameRest(a: { rest: string; windows: boolean }, b: { rest: string; windows: boolean }): boolean {
  return a.windows || b.windows ? a.rest.toLowerCase() === b.rest.toLowerCase() : a.rest === b.rest;
}

/** The last segment of a path, the key under which the index finds the other forms of a path. */
function baseName(path: string): string {
  return forwardSlashes(path).split('/').pop() ?? path;
}

export interface ArtifactEntry {
  readonly path: string;
  readonly reads: number;
  readonly modifications: number;
  readonly creations: number;
  /** Steps (0-based ordinals) that touched the file, in order. */
  readonly steps: readonly number[];
  /** Tool call ids that touched the file, in order. */
  readonly toolCalls: readonly string[];
  /** Record of the first touch. */
  readonly firstRecord: number;
}

interface MutableEntry {
  path: string;
  reads: number;
  modifications: number;
  creations: number;
  steps: number[];
  toolCalls: string[];
  firstRecord: number;
}

/** A coding tool's answer while the user has not yet granted the write it asked for. */
const PERMISSION_PENDING = /\brequested permissions? to (?:write|edit|create)\b.{0,400}\bhaven't granted it yet\b/s;

export class ArtifactIndex {
  private readonly byPath = new Map<string, MutableEntry>();
  /** Known paths by their last segment (see knownPathOf). */
  private readonly byBase = new Map<string, string[]>();
  /** The files each call awaiting its result counted as modified or created (see settle). */
  private readonly unsettled = new Map<string, FileTouch[]>();
  /**
   * The unit of each call in `unsettled` that has no result: a step that ended without it wrote nothing (see
   * expire); and its input (aider's edit names its SEARCH text: see confirm).
   */
  private readonly madeIn = new Map<string, { readonly unit: number; readonly input: unknown }>();

  /** `redactor` hides a secret in a path before the index keeps it. */
  constructor(private readonly redactor: Redactor) {}

  /**
   * Records the files one tool call touched (called once per call; `touches`
   * when the caller read them in the call's step, see touchesInStep); returns
   * their paths.
   */
  observe(tool: ToolInvocation, step: number | undefined, touches: readonly FileTouch[] = fileTouches(tool), unit?: number): string[] {
    const touched: string[] = [];
    for (const raw of touches) {
      // A path is shown in the index, the head and the panel: an address or a token in it is hidden like anywhere.
      const shown = this.redactor.containsSecret(raw.path) ? this.redactor.redact(raw.path).text : raw.path;
      // One file named by its absolute path and by a relative one is one entry.
      const base = baseName(shown);
      const path = this.byPath.has(shown) ? shown : this.resolve(shown, base, touched);
      const touch = { ...raw, path };
      touched.push(touch.path);
      let entry = this.byPath.get(touch.path);
      if (!entry) {
        // Most files are touched once: their lists start at their one element (an empty list that is
        // pushed to reserves room for 17, which over a long task's thousands of files adds up).
        entry = { path: touch.path, reads: 0, modifications: 0, creations: 0, steps: step !== undefined ? [step] : [], toolCalls: [tool.callId], firstRecord: tool.callRecord };
        this.byPath.set(touch.path, entry);
        const known = this.byBase.get(base);
        this.byBase.set(base, known ? [...known, touch.path] : [touch.path]);
      } else {
        if (step !== undefined && entry.steps[entry.steps.length - 1] !== step) entry.steps.push(step);
        if (entry.toolCalls[entry.toolCalls.length - 1] !== tool.callId) entry.toolCalls.push(tool.callId);
      }
      if (touch.access === 'read') entry.reads++;
      else {
        if (touch.access === 'create') entry.creations++;
        else entry.modifications++;
        const pending = this.unsettled.get(tool.callId);
        if (pending) pending.push(touch);
        else this.unsettled.set(tool.callId, [touch]);
        if (unit !== undefined && tool.output === undefined) this.madeIn.set(tool.callId, { unit, input: tool.input });
      }
    }
    return touched;
  }

  /**
   * The entry a path not yet in the index belongs to (see knownPathOf). A file one call names in part
   * (`ClineProvider.ts`, `session/get.ts`: an export's rendered edit) and another by a longer path ending in it is
   * one entry under the longer path, when only one such name fits, as the Task Context's Deliverables have it: a
   * partial name after the longer one joins it; a longer one after the partial takes the entry over (the name it
   * moved from is pushed to `changed`).
   */
  private resolve(shown: string, base: string, changed: string[]): string {
    const known = this.byBase.get(base) ?? [];
    const path = knownPathOf(shown, known);
    if (this.byPath.has(path)) return path;
    const longer = onlyLongerPath(path, known);
    if (longer !== undefined) return longer;
    const earlier = forwardSlashes(path).includes('/') ? onlyPartialName(path, known) : undefined;
    if (earlier === undefined) return path;
    const entry = this.byPath.get(earlier)!;
    this.byPath.delete(earlier);
    entry.path = path;
    this.byPath.set(path, entry);
    this.byBase.set(base, known.map((k) => (k === earlier ? path : k)));
    for (const touches of this.unsettled.values()) {
      for (const [i, t] of touches.entries()) if (t.path === earlier) touches[i] = { ...t, path };
    }
    changed.push(earlier);
    return path;
  }

  /**
   * A call's result came: when an edit or a write failed (an error, an edit
   * the tool says it did not apply), or the call was a snippet that never ran,
   * the files it counted as modified or created were not, and a file no other call touched leaves the index.
   * Returns the paths whose entry changed.
   */
  settle(result: ToolInvocation): string[] {
    const touches = this.unsettled.get(result.callId);
    if (!touches) return [];
    this.unsettled.delete(result.callId);
    this.madeIn.delete(result.callId);
    // A shell command that failed may have written its files before it did (`cat > a.sh <<EOF … EOF && ./a.sh`); a
    // write waiting for the user's permission is written once they grant it (Claude Code's next call finds the file).
    // A snippet an export turned into a call never ran: it wrote nothing.
    const family = classifyTool(result.name, result.input).family;
    const undone = quotedSnippet(result) || ((family === 'edit' || family === 'write') && callFailed(result) && !PERMISSION_PENDING.test(result.output ?? ''));
    return undone ? this.withdraw(touches) : [];
  }

  /**
   * The calls awaiting a result that wrote a file aider says it applied an edit to (see aiderAppliedEdits), or
   * that its reply says were applied beside the blocks that failed (see aiderHeldBack): made.
   */
  confirm(output: string): void {
    // Every tool output passes here: none is read unless a call awaits its confirmation (aider's sessions only).
    if (this.madeIn.size === 0) return;
    const applied = new Set(aiderAppliedEdits(output));
    const held = aiderHeldBack(output);
    if (applied.size === 0 && held === undefined) return;
    for (const [callId, { input }] of this.madeIn) {
      const made = (path: string): boolean => applied.has(samePathKey(path)) || (held !== undefined && !heldBackEdit(held, input, path));
      if (!this.unsettled.get(callId)?.some((t) => made(t.path))) continue;
      this.unsettled.delete(callId);
      this.madeIn.delete(callId);
    }
  }

  /**
   * A later unit began: a call of an earlier one that never got its result, and that no console confirmed, wrote
   * nothing the record shows (aider asked to add the file to the chat first). Returns the paths whose entry changed.
   */
  expire(before: number): string[] {
    const changed: string[] = [];
    for (const [callId, { unit }] of this.madeIn) {
      if (unit >= before) continue;
      this.madeIn.delete(callId);
      const touches = this.unsettled.get(callId);
      this.unsettled.delete(callId);
      if (touches) changed.push(...this.withdraw(touches));
    }
    return changed;
  }

  /** Takes back what `touches` counted as modified or created; a file no other call touched leaves the index. */
  private withdraw(touches: readonly FileTouch[]): string[] {
    for (const touch of touches) {
      const entry = this.byPath.get(touch.path);
      if (!entry) continue;
      if (touch.access === 'create') entry.creations = Math.max(0, entry.creations - 1);
      else entry.modifications = Math.max(0, entry.modifications - 1);
      if (entry.reads + entry.modifications + entry.creations === 0) {
        this.byPath.delete(touch.path);
        const base = baseName(touch.path);
        const known = (this.byBase.get(base) ?? []).filter((p) => p !== touch.path);
        if (known.length) this.byBase.set(base, known);
        else this.byBase.delete(base);
      }
    }
    return [...new Set(touches.map((t) => t.path))];
  }

  get(path: string): ArtifactEntry | undefined {
    return this.byPath.get(path);
  }

  /** Entries in order of first touch. */
  entries(): ArtifactEntry[] {
    return [...this.byPath.values()].sort((a, b) => a.firstRecord - b.firstRecord || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  get size(): number {
    return this.byPath.size;
  }
}

/**
 * What one appended record's events change in the index: a call's files at
 * the call (read in its step, see touchesInStep), the file its result names
 * when the call named none, and what a failed call counted, taken back.
 * Returns the paths whose entry changed.
 */
export function observeArtifacts(index: ArtifactIndex, units: readonly Unit[], events: readonly AppendEvent[]): string[] {
  const changed: string[] = [];
  for (const event of events) {
    const unit = units[event.unitIndex];
    if (!unit) continue;
    // aider's reply that opens a step may say which edits of the step before were applied: read before they expire.
    const opening = event.type === 'unit' && unit.kind === 'step' ? unit.parts[0] : undefined;
    if (opening?.kind === 'text') index.confirm(opening.text);
    changed.push(...index.expire(event.unitIndex));
    // An edit an export rendered in the agent's text (see renderedEdits) touched its file like a call would.
    if (event.type === 'part' && event.part.kind === 'text' && unit.kind === 'step') {
      const part = event.part;
      [...renderedEdits(part.text, leadInOf(unit, unit.parts.lastIndexOf(part))), ...offeredEdits(part.text)].forEach((path, i) => {
        const edit: ToolInvocation = { callId: `${part.address}#edit${i}`, name: 'edit', input: undefined, output: '', isError: false, callRecord: part.record, resultRecord: part.record };
        changed.push(...index.observe(edit, unit.step, [{ path, access: 'modify' }]));
      });
    }
    if (event.type === 'part' && event.part.tool) {
      const tool = event.part.tool;
      changed.push(...index.observe(tool, unit.step, touchesInStep(unit, unit.parts.lastIndexOf(event.part), tool, unitsBefore(units, event.unitIndex)), event.unitIndex));
      if (tool.output !== undefined) index.confirm(tool.output);
    }
    if (event.type === 'result' && event.after.tool) {
      // A call that named no file may name it in its result ("The file src/a.ts has been updated").
      if (touchesInStep(unit, unit.parts.lastIndexOf(event.after), event.before.tool, unitsBefore(units, event.unitIndex)).length === 0) {
        const named = fileTouches(event.after.tool);
        if (named.length) changed.push(...index.observe(event.after.tool, unit.step, named));
      }
      changed.push(...index.settle(event.after.tool));
      if (event.after.tool.output !== undefined) index.confirm(event.after.tool.output);
    }
  }
  return changed;
}
