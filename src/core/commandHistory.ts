/**
 * What later commands of a fold say about earlier ones: a failed command
 * replaced by the next command of the same program that worked (said on the
 * failure's line), and the commits a new commit replaces on its branch
 * (amended, or redone after the branch's history was rewritten); and what the
 * agent says of a failure: that it reproduced the bug it was meant to.
 */
import { FAILED_LINE, REPLACED_TAIL, RESOLVED, sourceJustBefore } from './factLines';
import { gistsOf, mergeSources, OBSERVATION, SOURCES_SUFFIX, type FactLine, type SummaryBuilder } from './summary';
import { handles } from './digest';
import { lastSegment, nameOneFile } from './paths';
import { writtenPaths, type FileTouch } from './tools';
import type { Redactor } from './redact';
import { ABSENT_LINE, commandCore, commandLabel, commandProper, programOf } from './toolResults';
import { COMMIT_LINE, commitLine, pushedRefs, tipOf } from './gitLines';

/** A look's finding: what looked (group 1) and what it saw (group 2), without its "(as of rN)". */
const LOOK_LINE = /^(.*?) → (.*?)(?: \(as of r\d+\))?$/;

/** An answer of this many words is a statement (`Status for task #027: IN-REVIEW`), not a bare value. */
const STATEMENT_WORDS = 4;

/**
 * What a command that sets something to a value given last sets, when its answer is a statement that names the value
 * last: `… tasks status set 027 DONE` → "Status for task #027 updated to: DONE" sets "… tasks status set 027" (and
 * says "Status for task #027 updated to:"). Setting it again to another value (`… set 027 IN-REVIEW`) is the same
 * finding, which the later answer supersedes. Undefined for any other command.
 */
export function settingOf(core: string, observed: string): string | undefined {
  const command = /^(.*\S)\s+([\w-]+)$/.exec(core);
  const answer = observed.trim().split(/\s+/);
  if (!command || command[2]!.startsWith('-') || answer.length < STATEMENT_WORDS || answer[answer.length - 1] !== command[2]) return undefined;
  return `${command[1]} → ${answer.slice(0, -1).join(' ')}`;
}

/** What an edit tool says when the text it was to replace is not in the file as given. */
const EDIT_MISMATCH = /\b(?:string to replace not found|old_string (?:was )?not found|not found in (?:the )?file|did not match|no (?:exact )?match(?:es)? found|SearchReplaceNoExactMatch|found \d+ matches of the string to replace)\b/i;
/** What a program prints when it refuses the arguments it was called with. */
const USAGE_ERROR = /\b(?:missing (?:required )?(?:argument|option|operand)|unknown (?:option|command|flag|argument|subcommand)|unrecognized (?:option|argument|arguments|command)|invalid (?:option|argument|choice|flag)|too (?:many|few) arguments|no such option|expected \d+ arguments?)\b|^usage:/im;

/** The agent saying the command that just failed reproduced the bug: the failure was the aim. */
export const REPRODUCED = /\breproduced (?:the |this |our )?(?:bug|issue|error|problem|behaviou?r)\b|\b(?:bug|issue|error|problem) (?:is|was|has been) (?:successfully )?reproduced\b|\b(?:fails|failed) (?:exactly )?as (?:we )?expected\b/i;
/** A sentence that only says so again ("This confirms the issue described."): it joins the line already moved. */
const CONFIRMS = /\bconfirms (?:the |this |our )?(?:bug|issue|error|problem|behaviou?r)\b/i;
const REPRODUCES = ' reproduced the bug ';

/** The command history of one fold, kept on the lines of the fold's builder. */
export class CommandHistory {
  /** The last failed command of each program, until another command of that program works. */
  private readonly unreplaced = new Map<string, { cmd: string; label: string; record: number }>();
  /** The record of the latest command that rewrote a branch's history (`git reset`, `git rebase`). */
  private rewrittenAt = -1;
  /** The edits of this fold that failed, by label, with the files they were to write, until one of them is written. */
  private readonly failedEdits = new Map<string, readonly string[]>();

  constructor(private readonly b: SummaryBuilder) {}

  /** A command failed: it stays the failure of its program until another attempt at the same thing works. */
  noteFailure(cmd: string, label: string, record: number): void {
    this.unreplaced.set(programOf(cmd), { cmd, label, record });
  }

  /**
   * "The script has reproduced the bug" (`text`, said at `record`): the command that just failed was the
   * reproduction, meant to fail. Its line moves from Ruled out to Findings as what reproduces the bug, with its
   * verbatim error; the sentence joins it. Whether the sentence was taken so.
   */
  reproduced(text: string, record: number): boolean {
    const confirms = CONFIRMS.test(text);
    if (!confirms && !REPRODUCED.test(text)) return false;
    const near = (l: FactLine): boolean => sourceJustBefore(l.sources, record) >= 0;
    // A second sentence saying so ("This confirms the issue described.") joins the line already moved.
    const moved = this.b.facts.Findings.findIndex((l) => l.text.includes(REPRODUCES) && near(l));
    if (moved >= 0) {
      const line = this.b.facts.Findings[moved]!;
      this.b.facts.Findings[moved] = { ...line, sources: mergeSources(line.sources, [record]) };
      return true;
    }
    if (!REPRODUCED.test(text)) return false;
    const lines = this.b.facts['Ruled out'];
    let at = lines.length - 1;
    while (at >= 0 && !(lines[at]!.origin === 'exact' && near(lines[at]!))) at--;
    const m = at >= 0 ? FAILED_LINE.exec(lines[at]!.text) : null;
    if (!m || m[2] !== undefined || m[4] !== undefined || m[5]!.includes(' → then ')) return false;
    const line = lines.splice(at, 1)[0]!;
    this.b.upsert('Findings', { ...line, text: `${m[1]}${REPRODUCES}(${m[3]}): ${m[5]}`, sources: mergeSources(line.sources, [record]), priority: 3 });
    return true;
  }

  /** An edit of the files it was to write (of `touches`) failed: a later edit of the same file that works, or any write of it, may overcome it (see noteEditWorked). */
  noteEditFailure(label: string, touches: readonly FileTouch[]): void {
    this.failedEdits.set(label, writtenPaths(touches));
  }

  /**
   * A tool that worked (at `record`) touched these files. An edit of one of them earlier in this fold that failed on
   * its text (see noteEditWorked) was overcome if this wrote it another way: `echo … >> .gitignore` after Claude
   * Code's Edit of `/…/.gitignore` found its old text missing. A look that found no such file is followed by where a
   * file of that name was then read or written ("Read /c/Users/me/repo/README.md → File does not exist. → then
   * `C:\Users\me\repo\README.md` read (r23)"): the next attempt starts from the path that worked.
   */
  noteTouched(touches: readonly FileTouch[], record: number): void {
    const written = writtenPaths(touches);
    for (const [label, failed] of this.failedEdits) {
      if (failed.some((f) => written.some((p) => nameOneFile(f, p)))) this.noteEditWorked(label);
    }
    if (touches.length > 0) this.foundElsewhere(touches, record);
  }

  /** Each look that found no file of a touched file's name where it looked (any fold's finding) says where one was then touched. */
  private foundElsewhere(touches: readonly FileTouch[], record: number): void {
    const lines = this.b.facts.Findings;
    // The looks not yet followed, with the paths they name (read once for all the touches).
    const looks: { at: number; looked: string[] }[] = [];
    lines.forEach((l, at) => {
      const m = l.origin === 'exact' && l.key.startsWith('seen-') && !l.text.includes(' → then ') ? LOOK_LINE.exec(l.text) : null;
      if (m && m[2]!.split('; ').every((said) => ABSENT_LINE.test(said))) looks.push({ at, looked: `${m[1]} ${m[2]}`.split(/[\s`'":;,()]+/).filter((w) => /[\\/]/.test(w)) });
    });
    for (const touch of touches) {
      const name = lastSegment(touch.path);
      const shown = this.b.redactor.redact(touch.path).text;
      const i = looks.findIndex(({ looked }) => looked.some((p) => lastSegment(p) === name) && !looked.includes(shown));
      if (i < 0) continue;
      const { at } = looks.splice(i, 1)[0]!;
      const line = lines[at]!;
      const then = ` → then \`${shown}\` ${touch.access === 'read' ? 'read' : 'written'} (r${record})`;
      lines[at] = { ...line, text: line.text.replace(/( \(as of r\d+\))?$/, `${then}$1`), sources: mergeSources(line.sources, [record]) };
    }
  }

  /**
   * An edit worked: an edit of the same file earlier in this fold that failed because the text it was to replace
   * did not match (Claude Code's "String to replace not found in file", a search block that matched nothing) ruled
   * nothing out — the file was read again and the edit made — and its line goes.
   */
  noteEditWorked(label: string): void {
    if (!this.failedEdits.delete(label)) return;
    const lines = this.b.facts['Ruled out'];
    const at = lines.findIndex((l) => {
      const m = l.origin === 'exact' ? FAILED_LINE.exec(l.text) : null;
      return m !== null && m[1] === label && m[2] === undefined && EDIT_MISMATCH.test(m[5]!);
    });
    if (at >= 0) lines.splice(at, 1);
  }

  /**
   * Another command's finding (live or archived) that printed the same answer, when the answer is a path or a statement (not a bare
   * value: two files may both hold `2.4.1`), goes, and its sources are returned for the finding of the command that
   * printed it now (`own`, its key): `pwd`, `cd $(minsky session dir task#022) && pwd` and `minsky session dir
   * task#022` printing one directory state one fact, said once by the latest command.
   */
  sameAnswer(observed: string, own: string): number[] {
    if (!handles(observed).some((h) => /[\\/]/.test(h)) && observed.trim().split(/\s+/).length < STATEMENT_WORDS) return [];
    // An earlier fold's answer archived whole (not grouped with others) is said again all the same.
    const said = (l: FactLine): boolean => l.origin === 'exact' && !l.members && l.key !== own && l.key.startsWith('seen-') && OBSERVATION.exec(l.text)?.[1] === observed;
    const same = [...this.b.facts.Findings.filter(said), ...this.b.facts.Archived.filter(said)];
    if (same.length === 0) return [];
    this.b.facts.Findings = this.b.facts.Findings.filter((l) => !same.includes(l));
    this.b.facts.Archived = this.b.facts.Archived.filter((l) => !same.includes(l));
    return same.flatMap((l) => l.sources);
  }

  /**
   * A command worked: one that rewrote a branch's history (`git reset`, `git rebase`) is remembered; a push marks
   * the commits it sent (their lines, live or archived, end `(pushed)`), so the commit line says the remote has it
   * wherever the push's own line goes.
   */
  noteWorked(cmd: string, output: string | undefined, record: number): void {
    if (/\bgit (?:reset|rebase)\b/.test(cmd)) this.rewrittenAt = record;
    const refs = output === undefined ? [] : pushedRefs(cmd, output);
    if (refs.length === 0) return;
    const tips = refs.flatMap((r) => tipOf(r) ?? []);
    const branches = refs.filter((r) => r.range === '[new branch]').map((r) => r.src);
    for (const section of ['Decisions', 'Archived'] as const) {
      // A commit archived with others (a group's gists) is marked in its group.
      for (const line of [...this.b.facts[section]]) {
        let text = line.text;
        for (const body of gistsOf(line).map((g) => g.replace(SOURCES_SUFFIX, ''))) {
          const c = COMMIT_LINE.exec(body);
          if (!c || /\bpushed\b/.test(c[4] ?? '') || !(tips.some((t) => t.startsWith(c[1]!) || c[1]!.startsWith(t)) || branches.includes(c[2]!))) continue;
          text = text.replace(body, commitLine(c[1]!, c[2]!, c[3]!, [...(c[4] ? [c[4]] : []), 'pushed']));
        }
        if (text !== line.text) this.b.upsert(section, { ...line, text, sources: mergeSources(line.sources, [record]) });
      }
    }
  }

  /**
   * What replaced a failed approach: the next command that worked at the same
   * thing (sameAttempt), said on the failure's line ("→ then `…` worked
   * (r52)"), so the next attempt starts from what worked rather than from what
   * failed. Another command of the program (`task-master tags add` after a
   * failed `task-master add-task`, `bun test src/x` after a failed `bun test`)
   * replaces nothing: the failure stands.
   */
  noteReplacement(cmd: string, label: string, record: number): boolean {
    const program = programOf(cmd);
    const failed = this.unreplaced.get(program);
    const lines = this.b.facts['Ruled out'];
    // A failure line not yet said to be replaced or overcome.
    const open = (l: FactLine): RegExpExecArray | null => (l.origin === 'exact' && !REPLACED_TAIL.test(l.text) && !RESOLVED.test(l.text) ? FAILED_LINE.exec(l.text) : null);
    let at: number;
    if (failed && sameAttempt(failed.cmd, cmd)) {
      this.unreplaced.delete(program);
      if (failed.label === label) return false;
      at = lines.findIndex((l) => open(l)?.[1] === failed.label);
    } else if (!failed) {
      // A failure an earlier fold ruled out (its command whole in its label, never replaced since), the newest first:
      // `git push` rejected, the commit amended, then `git push --force-with-lease` worked a fold later.
      at = -1;
      for (let i = lines.length - 1; i >= 0 && at < 0; i--) {
        const m = open(lines[i]!);
        const quoted = m && !m[2] ? /^`([^`…]+)`$/.exec(m[1]!) : null;
        if (quoted && m![1] !== label && sameAttempt(quoted[1]!, cmd)) at = i;
      }
    } else return false;
    if (at < 0) return false;
    const line = lines[at]!;
    // A program that refused how it was called (a missing argument, an unknown option), once, then ran when called
    // right, ruled nothing out: the next attempt starts from the call that worked.
    const [, , more, , times, error] = FAILED_LINE.exec(line.text) ?? [];
    if (failed && !more && !times && USAGE_ERROR.test(error ?? '')) {
      lines.splice(at, 1);
      return true;
    }
    lines[at] = { ...line, text: `${line.text} → then ${label} worked (r${record})`, sources: [...new Set([...line.sources, record])].sort((x, y) => x - y) };
    return true;
  }

  /**
   * The commits a new commit replaces on its branch, removed (their sources are
   * returned for the new line): with `--amend` the branch's latest commit, and
   * an earlier commit with the same message when the branch was rewritten since
   * (the work redone after a reset). A branch holds one of them, so the summary
   * says one.
   */
  replacedCommits(commit: string): number[] {
    const parsed = COMMIT_LINE.exec(commit);
    if (!parsed) return [];
    const [, , branch, message, flags] = parsed;
    const gone: FactLine[] = [];
    const ofBranch: { line: FactLine; message: string }[] = [];
    for (const section of ['Decisions', 'Archived'] as const) {
      for (const line of this.b.facts[section]) {
        if (line.members) continue;
        const earlier = COMMIT_LINE.exec(gistsOf(line)[0]!.replace(SOURCES_SUFFIX, ''));
        if (earlier && earlier[2] === branch) ofBranch.push({ line, message: earlier[3]! });
      }
    }
    const latest = (c: { line: FactLine }): number => Math.max(-1, ...c.line.sources);
    const amended = flags?.includes('--amend') ? ofBranch.reduce<(typeof ofBranch)[number] | undefined>((a, c) => (!a || latest(c) > latest(a) ? c : a), undefined) : undefined;
    // The same message again replaces a commit only when the branch was rewritten since (a reset, a rebase):
    // two commits of one message with work between them are two commits.
    for (const c of ofBranch) if (c === amended || (c.message === message && this.rewrittenAt > latest(c))) gone.push(c.line);
    for (const line of gone) this.b.remove(line.key);
    return gone.flatMap((l) => l.sources);
  }
}

/** The plain words leading a command (its program and subcommands, `npx task-master add-task`), at most this many. */
const ATTEMPT_WORDS = 3;

/** A command's words without the quotes around them. */
function wordsOf(cmd: string): string[] {
  return cmd.split(/\s+/).map((w) => w.replace(/^['"`(]+|['"`);]+$/g, '')).filter(Boolean);
}

/** A word naming a file or a module: a slash in it, or an extension (`src/x`, `test_server.py`, `pkg.server`); not a URL or a version pin. */
function isPathWord(word: string): boolean {
  return !/[@=]|:\/\//.test(word) && (/[\/\\]/.test(word) || /^[\w.-]*\w\.[A-Za-z]\w{0,5}$/.test(word));
}

/**
 * Whether a command that worked is another attempt at what a failed one tried: the same leading plain words
 * (program and subcommands) and the same files, its flags and values free to differ (`minsky git pr` then
 * `minsky git pr --session 2`, `pip install a==1` then `pip install a==2`). Another subcommand, or a run on
 * other or fewer files (`bun test` then `bun test src/session`), is another thing.
 */
export function sameAttempt(failed: string, worked: string): boolean {
  const words = (cmd: string): string[] => wordsOf(commandCore(cmd));
  // The plain words up to the first flag (a host or a file between them skipped): `git push origin` of `git push
  // origin main`, `git push` of `git push -u origin main`, `ssh uci set` of `ssh root@h "uci set a=1"`.
  const lead = (cmd: string): string[] => {
    const out: string[] = [];
    for (const w of wordsOf(commandCore(cmd).split(/\s(?:&&|\|\||;|\|)\s/)[0]!)) {
      if (w.startsWith('-') || out.length === ATTEMPT_WORDS) break;
      if (/^[A-Za-z][\w:-]*$/.test(w)) out.push(w);
    }
    return out;
  };
  const paths = (cmd: string): string => [...new Set(words(cmd).filter(isPathWord))].sort().join(' ');
  const [a, b] = [lead(failed), lead(worked)];
  const [short, long, shortCmd] = a.length <= b.length ? [a, b, failed] : [b, a, worked];
  // One lead may stop at a flag the other lacks (`git push -u origin`): the words it did not reach are still in its command.
  const reached = words(shortCmd);
  const sameLead = short.every((w, i) => long[i] === w) && long.slice(short.length).every((w) => reached.includes(w));
  return sameLead && paths(failed) === paths(worked);
}

/** The words of an error that can say which command of a chain printed it: files and names, not short ones. */
const LINK_HANDLE_MIN_CHARS = 4;

/**
 * Where a chain of commands (`a && b`) failed, when it is not at its first command: the error names a file
 * or a name that only one later command holds (`mv test_*.py tests/ && mv test_connections.py tests/` →
 * "mv: test_connections.py: No such file or directory"). The commands before it ran, and what they did stands:
 * said after the error (" — at `mv test_connections.py tests/`; the commands before it ran"), or '' when the
 * error does not tell.
 */
export function failedLinkNote(cmd: string, error: string, redactor: Redactor): string {
  const links = commandProper(cmd).split(/\s*&&\s*/).map((l) => l.trim().replace(/^["']|["']$/g, '')).filter(Boolean);
  if (links.length < 2) return '';
  const named = handles(error).map((h) => h.replace(/`/g, '')).filter((h) => h.length >= LINK_HANDLE_MIN_CHARS);
  const holders = links.flatMap((link, i) => (named.some((h) => link.includes(h)) ? [i] : []));
  if (holders.length !== 1 || holders[0] === 0) return '';
  return ` — at \`${commandLabel(links[holders[0]!]!, redactor, 60)}\`; the commands before it ran`;
}
