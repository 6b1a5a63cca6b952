/**
 * The files of a fold: each file written (created, modified ×n) with what it
 * is for, its last edit or what a here-document wrote into it, the purpose of
 * a file read for the first time, and an edit that put back what an earlier
 * edit replaced (the earlier change undone).
 */
import { knownPathOf } from './artifacts';
import { declaredOf, handles, purposeOf, statementOf, subjectKey, words } from './digest';
import { addStatement } from './factLines';
import { mergeSources, type SummaryBuilder } from './summary';
import { changedLine, editTexts, firstLine, heredocBody, readContent, toolDescription, writtenContent } from './toolResults';
import { fileTouches, shellMoves, shellRemovals, shellRestores, writtenPaths, type FileTouch, type ToolFamily } from './tools';
import type { ToolInvocation, Unit } from './types';
import { forwardSlashes, nameOneFile, onlyLongerPath, onlyPartialName } from './paths';

/** A file written in the session, as its Deliverables line says it. */
interface Written {
  created: boolean;
  writes: number;
  sources: number[];
  note: string;
  edit?: string;
  purpose?: string;
  written?: string;
  /** Removed by a later command (`rm`, `git rm`) and not written since. */
  deleted?: boolean;
}

/** A file written to pass something along, not to keep: in a temp directory, or named as temporary. */
const SCRATCH_FILE = /(?:^|\/)(?:tmp|temp)\/|^\/var\/folders\/|(?:^|\/)[^/]*(?:[-_.]te?mp|te?mp[-_.])[^/]*$/i;

/** A path whose removal tells nothing: scratch, a build's or a tool's output, a cache, a log. */
const DISPOSABLE = new RegExp(
  `${SCRATCH_FILE.source}|(?:^|/)(?:dist|build|out|target|coverage|node_modules|__pycache__|\\.pytest_cache|\\.cache|\\.next|\\.turbo)(?:/|$)|\\.(?:log|out|pyc|o|tmp|bak|orig)$|(?:^|/)[^/]*(?:output|result|log)s?[^/]*\\.txt$`,
  'i',
);
/** What a deletion line says of a file this session did not write. */
const UNWRITTEN = ' (not written in this session)';
/** A change sentence is a note of the file it names within its first this many words (see noteChange). */
const NOTE_SUBJECT_WORDS = 12;
/** A Deliverables line as `finish` writes it: created, modified ×n, deleted, then its note. */
const DELIVERABLE_LINE = /^(created)?(?:, )?(?:modified ×(\d+))?(?:(?:, )?(deleted))?(?: — (.*))?$/;

/** The write log of one fold: Deliverables lines and the read files' purposes, kept in the fold's builder. */
export class Deliverables {
  /** The steps of the current turn folded so far, oldest first: an edit that names no file wrote the one they read last (see touchesInStep). */
  readonly turnSteps: Unit[] = [];
  private readonly writes = new Map<string, Written>();
  private modified: string[] = [];
  /** The files read in the fold (a bare name an edit gives is matched against them). */
  private readonly readPaths = new Set<string>();
  /** An edit that puts back what an earlier edit of the span replaced: the earlier change was undone. */
  private readonly edits = new Map<string, { old: string; new: string; record: number }[]>();

  constructor(
    private readonly b: SummaryBuilder,
    /** How many words a created file's purpose keeps (a gist's length for this head's cap). */
    private readonly purposeWords: number,
  ) {
    for (const line of b.facts.Deliverables) {
      const m = DELIVERABLE_LINE.exec(line.text);
      // Its last edit (or what a command wrote) read back as such, so an edit this fold makes replaces it.
      const said = m?.[4] ?? '';
      const kept = said.startsWith('last edit ') ? { edit: said.slice('last edit '.length) } : said.startsWith('written: ') ? { written: said.slice('written: '.length) } : { note: said };
      this.writes.set(line.key, { created: m?.[1] === 'created', writes: Number(m?.[2] ?? 0), sources: [...line.sources], note: '', ...kept, ...(m?.[3] ? { deleted: true } : {}) });
    }
  }

  /** A change report that names a file written in the session becomes that deliverable's note. */
  noteChange(text: string): boolean {
    // The file is what the sentence is about when it names it early ("Updated `api.ts` to …"); named at the end of a
    // long account of the work ("…: 2. a markdown backend reading `process/tasks.md`"), it is no note of that file.
    const named = handles(words(text).slice(0, NOTE_SUBJECT_WORDS).join(' '));
    for (const [path, entry] of this.writes) {
      const base = path.split(/[/\\]/).pop()!.toLowerCase();
      if (named.some((h) => h === path.toLowerCase() || h.endsWith(`/${base}`) || h === base)) {
        entry.note = statementOf(text, 16);
        return true;
      }
    }
    return false;
  }

  /** A tool call that worked: the files it read, created or modified, and the edit it made. */
  toolWorked(tool: ToolInvocation, touches: readonly FileTouch[], family: ToolFamily, cmd: string | undefined, sources: number[]): void {
    const targets = touches.length ? touches : fileTouches(tool);
    // A here-document describes the file when the command writes one file only.
    const body = targets.filter((t) => t.access !== 'read').length === 1 ? heredocBody(cmd ?? '') : undefined;
    for (const touch of targets) {
      if (touch.access === 'read') {
        if (family === 'read' && tool.output !== undefined) this.read(touch.path, tool.output, sources);
        continue;
      }
      // A file that only caught a run's output for the agent to read is no deliverable (the artifact index keeps it).
      if (touch.capture) continue;
      const entry = this.written(this.keyFor(touch.path), tool.callRecord);
      if (touch.access === 'create') {
        entry.created = true;
        // What the file is for, as its own header says it (a docstring, a leading comment, a title).
        const content = writtenContent(tool);
        if (content !== undefined) this.describe(entry, touch.path, content);
      } else entry.writes++;
      // A short file a shell command wrote whole (a here-document: a config, a unit file) is said by its lines.
      if (body !== undefined) {
        const description = toolDescription(tool, this.b.redactor);
        entry.written = `${description ? `${description}: ` : ''}\`${this.b.redactor.redact(body).text}\``;
      }
    }
    const edit = family === 'edit' ? editTexts(tool) : undefined;
    if (edit) {
      this.checkUndo(tool, edit, sources);
      const path = (touches[0] ?? fileTouches(tool)[0])?.path;
      const entry = path !== undefined ? this.writes.get(this.deliverableKey(path)) : undefined;
      // An edit that replaced nothing wrote the file whole (aider's empty SEARCH block): what the file is for tells a
      // reader more than "(nothing) → `import { z } from "zod";`".
      if (entry && path !== undefined && edit.old.trim() === '') this.describe(entry, path, edit.new);
      else {
        const diff = changedLine(edit.old, edit.new, this.b.redactor);
        if (entry && diff) entry.edit = diff;
      }
    }
  }

  /**
   * An edit an export rendered in the agent's text (see renderedEdits): one
   * more write of its file. A partial name (`tasks.ts`, `session/get.ts`) is
   * the one file written or read before whose path ends in it, when there is
   * one (see keyFor for the other way).
   */
  renderedEdit(path: string, record: number): void {
    this.written(this.keyFor(onlyLongerPath(path, [...this.writes.keys(), ...this.readPaths]) ?? path), record).writes++;
  }

  /** What a new file is for, as its own header says it (a docstring, a leading comment, a title), else what it declares. */
  private describe(entry: Written, path: string, content: string): void {
    if (entry.purpose !== undefined) return;
    const purpose = purposeOf(path, content, this.purposeWords) ?? declaredOf(content);
    if (purpose !== undefined) entry.purpose = this.b.redactor.redact(purpose).text;
  }

  /** The entry of a file written now (at `record`): there again if it was deleted, the latest file written. */
  private written(key: string, record: number): Written {
    const entry = this.writes.get(key) ?? { created: false, writes: 0, sources: [], note: '' };
    entry.deleted = false;
    entry.sources.push(record);
    this.writes.set(key, entry);
    this.modified.push(key);
    return entry;
  }

  /**
   * Files a command that worked removed: a deliverable among them is said to be gone (what it was stays); a file the
   * session did not write (`rm ~/.local/state/app/session-db.json`) is the user's, and that it is gone is news the
   * next step needs — unless it was scratch, a build's output or a log.
   */
  removed(paths: readonly string[], record: number): void {
    for (const path of paths) {
      const key = this.deliverableKey(path);
      const entry = this.writes.get(key);
      if (entry === undefined && !DISPOSABLE.test(forwardSlashes(path))) {
        addStatement(this.b, 'Decisions', { text: `deleted \`${this.b.redactor.redact(path).text}\`${UNWRITTEN}`, sources: [record], priority: 2 }, 'exact');
      }
      if (entry === undefined || entry.deleted) continue;
      entry.deleted = true;
      entry.sources.push(record);
      // Gone, it is no longer among the files written latest.
      this.modified = this.modified.filter((k) => k !== key);
    }
  }

  /** A command that worked (at `record`; `touches`, the files it read and wrote): the files it removed, moved or put back from git. */
  commandWorked(cmd: string, touches: readonly FileTouch[], record: number): void {
    // `rm -f out.txt && gen > out.txt` leaves the file there: what the same command writes is not gone.
    const written = writtenPaths(touches);
    this.removed(shellRemovals(cmd).filter((p) => !written.includes(p)), record);
    this.moved(shellMoves(cmd), record);
    this.restored(shellRestores(cmd));
  }

  /**
   * Files a command that worked put back from git (`git checkout -- f`, `git restore f`): a deletion of one of them
   * this session made is undone, and its "deleted" line goes (the command's own line says the work was discarded).
   */
  restored(paths: readonly string[]): void {
    if (paths.length === 0) return;
    const shown = paths.map((p) => this.b.redactor.redact(p).text);
    const undone = (text: string): boolean => {
      const m = text.endsWith(UNWRITTEN) ? /^deleted `(.+)`$/.exec(text.slice(0, -UNWRITTEN.length)) : null;
      return m !== null && shown.some((p) => nameOneFile(p, m[1]!));
    };
    this.b.facts.Decisions = this.b.facts.Decisions.filter((l) => l.origin !== 'exact' || !undone(l.text));
  }

  /** Files a command that worked moved (`mv a.py src/`): a deliverable among them is now at its new path, counts kept. */
  moved(moves: readonly { from: string; to: string }[], record: number): void {
    for (const { from, to } of moves) {
      const key = this.deliverableKey(from);
      const entry = this.writes.get(key);
      if (entry === undefined || entry.deleted) continue;
      const target = this.deliverableKey(to);
      if (target === key) continue;
      this.writes.delete(key);
      const there = this.writes.get(target);
      this.writes.set(target, there ? { ...there, created: there.created || entry.created, writes: there.writes + entry.writes, sources: mergeSources(mergeSources(there.sources, entry.sources), [record]) } : { ...entry, sources: mergeSources(entry.sources, [record]) });
      this.b.facts.Deliverables = this.b.facts.Deliverables.filter((l) => l.key !== key);
      this.modified = this.modified.map((k) => (k === key ? target : k));
    }
  }

  /**
   * The deliverable a written path belongs to: one file written by its absolute
   * path and by a relative one (`reproduce_bug.py`, then
   * `/repo/reproduce_bug.py`) is one deliverable, under the form it was first
   * written by — when exactly one earlier path of the other form matches.
   */
  private deliverableKey(path: string): string {
    return this.writes.has(path) ? path : knownPathOf(path, this.writes.keys());
  }

  /**
   * The key of a file written now. A file an earlier edit could only name in
   * part (`repo-utils.ts`, `session/get.ts`: an export's rendered edit) is this
   * one once a longer path ending in it is written, when only one such
   * earlier name fits: its line becomes this path's, not a second line.
   */
  private keyFor(path: string): string {
    const key = this.deliverableKey(path);
    if (this.writes.has(key) || !key.includes('/')) return key;
    const earlier = onlyPartialName(key, this.writes.keys());
    if (earlier === undefined) return key;
    this.writes.set(key, this.writes.get(earlier)!);
    this.writes.delete(earlier);
    this.b.facts.Deliverables = this.b.facts.Deliverables.filter((l) => l.key !== earlier);
    this.modified = this.modified.map((k) => (k === earlier ? key : k));
    return key;
  }

  /**
   * A file read for the first time: what it says it is for (its docstring,
   * leading comment or title) is a finding about the code, so an exploration
   * leaves a map of what each file does rather than nothing.
   */
  private read(path: string, output: string, sources: number[]): void {
    this.readPaths.add(path);
    if (this.writes.has(path)) return;
    const purpose = purposeOf(path, readContent(output), this.purposeWords);
    if (purpose === undefined) return;
    const key = `file-${subjectKey(path, this.b.redactor, 10)}`;
    if (this.b.facts.Findings.some((l) => l.key === key) || this.b.facts.Archived.some((l) => l.key === key)) return;
    this.b.upsert('Findings', { key, text: `\`${path}\` (read): ${this.b.redactor.redact(purpose).text}`, sources, priority: 3, origin: 'exact' });
  }

  private checkUndo(tool: ToolInvocation, edit: { old: string; new: string }, sources: number[]): void {
    const path = fileTouches(tool)[0]?.path ?? '';
    const earlier = this.edits.get(path) ?? [];
    const undone = earlier.find((e) => e.new === edit.old && e.old === edit.new);
    if (undone) {
      addStatement(this.b, 'Ruled out', { text: `edit of ${path} undone: \`${firstLine(this.b.redactor.redact(undone.old).text, 60)}\` → \`${firstLine(this.b.redactor.redact(undone.new).text, 60)}\` was reverted`, sources: [undone.record, ...sources], priority: 2 }, 'exact');
    }
    earlier.push({ ...edit, record: tool.callRecord });
    this.edits.set(path, earlier.slice(-20));
  }

  /** Writes each file's Deliverables line; returns Current state's Deliverable: how many files, the latest written. */
  finish(): string {
    for (const [path, entry] of this.writes) {
      const parts: string[] = [];
      if (entry.created) parts.push('created');
      if (entry.writes > 0) parts.push(`modified ×${entry.writes}`);
      if (entry.deleted) parts.push('deleted');
      const note = entry.note ? ` — ${entry.note}` : entry.purpose ? ` — ${entry.purpose}` : entry.edit ? ` — last edit ${entry.edit}` : entry.written ? ` — written: ${entry.written}` : '';
      this.b.upsert('Deliverables', { key: path, text: `${parts.join(', ')}${note}`, sources: mergeSources(entry.sources, []), priority: 1 });
    }
    // Every Deliverables line is one of `writes` (read back at construction, written above): its deletion is known here.
    const gone = new Set([...this.writes].filter(([, entry]) => entry.deleted).map(([path]) => path));
    const delivered = this.b.facts.Deliverables.map((d) => d.key).filter((k) => !gone.has(k));
    const since = gone.size ? ` (${gone.size} more deleted since)` : '';
    // A scratch file (in a temp directory, named temp) stays listed, but is no deliverable the work is about.
    const latest = [...new Set(this.modified.length ? this.modified : delivered)].filter((k) => !gone.has(k));
    const lasting = latest.filter((k) => !SCRATCH_FILE.test(forwardSlashes(k)));
    return delivered.length
      ? `${delivered.length} file(s) written so far${since}; latest: ${(lasting.length ? lasting : latest).slice(-4).join(', ')}`
      : gone.size ? `every file written so far was deleted since (${gone.size})` : 'no file written by a tool yet';
  }
}
