/**
 * The workspace rules a Cursor agent fetched, as an export prints them inside
 * the assistant's text: what the agent was told to follow in this workspace.
 */
import { sharedWords, statementOf, stems, words } from './digest';
import { withoutInjectedBlocks } from './harness';

/** A line a rule file gives wholly in bold: "- **ALWAYS use absolute paths when editing files**", "⚠️ **CRITICAL: …**". */
const BOLD_LINE = /^[ \t]*(?:[-*][ \t]+|\d+\.[ \t]+)?(?:⚠\uFE0F?[ \t]*)?\*\*(?:⚠\uFE0F?[ \t]*)?([^*\n]{8,240}?)[:.]?\*\*[.:]?[ \t]*$/gm;
/** A directive's own words: it prescribes or forbids ("CRITICAL:" as a label; "Data Integrity is Critical" is a title). */
const DIRECTIVE = /\b(?:always|never|must|required|do not|don't|strictly|forbidden)\b|\b(?:critical|important):/i;
/** A directive of a rule file is cut to this many words, and a rule's directives kept within RULE_WORDS in all. */
const DIRECTIVE_WORDS = 24;
const RULE_WORDS = 72;
/** A directive whose significant words are this share in one kept before it says that one again ("Always Use Minsky CLI"). */
const DIRECTIVE_SAID_SHARE = 0.6;

/**
 * The directives of the workspace rules an export printed inside the
 * assistant's text (Cursor's fetched rules: `### Rule: <name>` and the rule
 * file after it): the lines each rule gives wholly in bold that prescribe or
 * forbid ("REQUIRED workflow … MUST use Minsky CLI", "ALWAYS use absolute
 * paths when editing files"), in the file's order, each cut to
 * DIRECTIVE_WORDS, one that says an earlier one again left out, RULE_WORDS
 * in all. They are what the agent was told to follow in this workspace: the
 * rule file itself is evidence (withoutInjectedBlocks), its directives a
 * statement of what holds here. Bold lines of the agent's own text after a
 * rule are not the rule's (`own`: the text without the rules, when the caller
 * has it).
 */
export function fetchedRules(text: string, own = withoutInjectedBlocks(text)): { name: string; directives: string[] }[] {
  if (!text.includes('### Rule: ')) return [];
  const headings = [...text.matchAll(/^### Rule: (\S.*)$/gm)];
  const rules = new Map<string, string[]>();
  headings.forEach((h, i) => {
    const name = h[1]!.trim();
    const directives = rules.get(name) ?? [];
    let budget = RULE_WORDS - directives.reduce((n, d) => n + words(d).length, 0);
    for (const m of text.slice(h.index, headings[i + 1]?.index ?? text.length).matchAll(BOLD_LINE)) {
      const said = statementOf(m[1]!, DIRECTIVE_WORDS);
      if (!DIRECTIVE.test(said) || own.includes(m[0].trim()) || words(said).length > budget) continue;
      const mine = stems(said);
      if (directives.some((d) => sharedWords(mine, stems(d)) >= DIRECTIVE_SAID_SHARE * mine.size)) continue;
      directives.push(said);
      budget -= words(said).length;
    }
    rules.set(name, directives);
  });
  return [...rules].filter(([, d]) => d.length > 0).map(([name, directives]) => ({ name, directives }));
}
