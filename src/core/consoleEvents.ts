/**
 * What a coding tool's own console reports, in aider's words: the commits it
 * made ("Commit dd581c5 refactor: …"), the files a shell command it ran
 * removed, a commit undone ("Removed: 2bae9da … / Now at: dd581c5 …"), the
 * model it runs ("Aider v0.84.0 / Main model: … with diff edit format", or
 * "Model: …" when it runs one; the latest start wins).
 */
import { clipChars } from './digest';
import { addStatement } from './factLines';
import { mergeSources, type SummaryBuilder } from './summary';
import { shellRemovals } from './tools';

/**
 * Writes what `output`, a coding tool's console, reports into the summary;
 * `removed` is told the files a shell command it ran removed. Returns the last
 * commit it made (`committed 9a6175d: "…"`), if any.
 */
export function consoleEvents(b: SummaryBuilder, removed: (paths: string[], record: number) => void, output: string, sources: number[], record: number): string | undefined {
  const said = (text: string): string => clipChars(b.redactor.redact(text.trim()).text, 100);
  // The shell commands it proposed and the user let it run ("rm validators/PoIValidator.ts / Run shell command?
  // (Y)es/(N)o… [Yes]: y"): a file they removed is gone.
  for (const m of output.matchAll(/((?:^[^\n]+\n){1,5})Run shell commands?\? \(Y\)es[^\n]*:\s*y(?:es)?\s*$/gim)) {
    removed(m[1]!.split('\n').flatMap((line) => shellRemovals(line)), record);
  }
  let committed: string | undefined;
  for (const m of output.matchAll(/^(Committing .+ before applying edits\.?\r?\n)?Commit ([0-9a-f]{7,40}) (.+)$/gm)) {
    // "Committing x before applying edits." then "Commit …": the user's own edits of x, saved before aider edits
    // (its message written by aider, its content the user's: a user who undid the agent's change by hand did it
    // here); no end of its turn.
    const line = `${m[1] ? "the user's own edits " : ''}committed ${m[2]}: "${said(m[3]!)}"`;
    addStatement(b, 'Decisions', { text: line, sources, priority: 2 }, 'exact');
    if (!m[1]) committed = line;
  }
  const undo = /^Removed: ([0-9a-f]{7,40}) (.+)\r?\n\s*Now at:\s+([0-9a-f]{7,40}) (.+)$/m.exec(output);
  if (undo) {
    // The commit undone is no decision any more: its line goes, the undo says what it was.
    const decisions = b.facts.Decisions;
    const at = decisions.findIndex((l) => l.text.startsWith(`committed ${undo[1]}`));
    const before = at >= 0 ? decisions.splice(at, 1)[0]!.sources : [];
    addStatement(b, 'Ruled out', { text: `work discarded: commit ${undo[1]} "${said(undo[2]!)}" undone; now at ${undo[3]} "${said(undo[4]!)}"`, sources: mergeSources(before, sources), priority: 2 }, 'exact');
    committed = undefined;
  }
  const model = /^(?:Main model|Model): (\S+) with /m.exec(output);
  if (model) {
    const version = /^Aider (v\d+(?:\.\d+)+)/m.exec(output)?.[1];
    b.upsert('Findings', { key: 'console-main-model', text: `${version ? `aider ${version}, ` : ''}main model ${model[1]} (as of r${record})`, sources, priority: 3, origin: 'exact' });
  }
  return committed;
}
