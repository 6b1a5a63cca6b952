/**
 * The layout of the head across folds: the lines a fold adds are appended
 * below the lines already sent, which keep their bytes (a prompt cache still
 * serves the head's start), until a line sent is no longer true or too many
 * lines were appended; then the head is rendered in full.
 */
import { CACHE_BLOCK_TOKENS } from './budget';
import { NEGATION } from './digest';
import { ARCHIVED_FROM, CAUSE_JOIN, FACT_SECTIONS, factLine, GIST_SEPARATOR, gistsOf, renderFacts, requestLines, SOURCES_SUFFIX, type SummaryLineCounter, type SummaryState } from './summary';
import { EVICTED_KEY, evictedCount } from './summaryCap';
import { FAILED_LINE } from './factLines';
import { forwardSlashes } from './paths';

/** How a head was laid out at a fold: appended to the text already sent, or rendered in full. */
export type LayoutKind = 'appended' | 'rendered';

/** Lines a fold may append before the head is rendered in full again. */
const LAYOUT_MAX_ADDED = 60;
/** How far past its cap a head may run while it keeps, as sent, lines the cap has compressed since. */
const LAYOUT_CAP_SLACK = 0.4;

/** The identity of the pointer line (see `renderedLines`). */
const EVICTED_ID = `Archived\u0000${EVICTED_KEY}`;
/** An archived line as rendered ("- [key: ][Findings] gist · gist"): its section, then its gists. */
const ARCHIVED_GISTS = new RegExp(`^- (?:\\S+: )?${ARCHIVED_FROM.source.slice(1)}(.*)$`);

/** A failure line's identity across folds: its command, and how many more commands share its line. */
const failureKey = (label: string, more: string | undefined): string => `${label}\u0000${more ?? ''}`;

/**
 * A failure line appended again — the command failed more times, or for one more cause — as what the head above
 * does not say yet: the causes the frozen head shows for the same command (`shownCauses`, by failureKey) are
 * "as above", the rest word for word (a test suite failing again for its known reasons is not its whole error
 * line again). Unchanged when the frozen head does not show the command's failure, or shares none of its causes.
 */
function failureSince(shownCauses: ReadonlyMap<string, readonly string[]>, text: string): string {
  const sources = SOURCES_SUFFIX.exec(text)?.[0] ?? '';
  const now = FAILED_LINE.exec(text.slice(2, text.length - sources.length));
  if (!now) return text;
  const [, label, more, code, times, error] = now;
  const shown = shownCauses.get(failureKey(label!, more));
  const causes = error!.split(CAUSE_JOIN);
  const fresh = causes.filter((c) => !shown?.includes(c));
  if (!shown || fresh.length === causes.length) return text;
  return `- ${label}${more ? ` and ${more} more` : ''} failed (${code})${times ? ` ×${times}` : ''}: as above${fresh.length ? `, and ${fresh.join(CAUSE_JOIN)}` : ''}${sources}`;
}

/** Each archived key's gist and the section it came from (a grouped line's gists by member, in order). */
function archivedGists(state: SummaryState): Map<string, { tag: string; gist: string }> {
  const out = new Map<string, { tag: string; gist: string }>();
  for (const l of state.facts.Archived) {
    const tag = ARCHIVED_FROM.exec(l.text)?.[1] ?? '';
    const parts = gistsOf(l);
    (l.members ?? [l.key]).forEach((key, i) => out.set(key, { tag, gist: parts[i] ?? '' }));
  }
  return out;
}

/** The words and numbers of a line, lower-cased, punctuation and source pointers left out. */
function tokens(text: string): Set<string> {
  return new Set(text.replace(SOURCES_SUFFIX, '').toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []);
}

/** Whether `now` says nothing `sent` does not: every word of it is in the line as sent, with the same polarity (a line that gains or loses a negation says something else). */
function saysNoMore(now: string, sent: string): boolean {
  if (NEGATION.test(now) !== NEGATION.test(sent)) return false;
  const said = tokens(sent);
  return [...tokens(now)].every((t) => said.has(t));
}

/**
 * Folds the appended lines of `keys` (any section) into one slot for `id`: the
 * first of them is kept for it, the rest removed. Returns the slot, or -1.
 */
function absorbAppended(added: string[], addedIds: string[], keys: ReadonlySet<string>, id: string): number {
  const own = addedIds.flatMap((a, i) => (a.includes('\u0000') && keys.has(a.slice(a.indexOf('\u0000') + 1)) ? [i] : []));
  if (own.length === 0) return -1;
  for (const i of own.slice(1).reverse()) {
    added.splice(i, 1);
    addedIds.splice(i, 1);
  }
  addedIds[own[0]!] = id;
  return own[0]!;
}

/** A line's identity and its text, as the head shows it. */
function renderedLines(state: SummaryState): Map<string, string> {
  const out = new Map<string, string>();
  for (const [id, text] of requestLines(state.requests)) out.set(id, text);
  for (const section of FACT_SECTIONS) for (const l of state.facts[section]) out.set(`${section}\u0000${l.key}`, factLine(state, section, l));
  return out;
}

/**
 * A line as the added block shows it: its section named (a request says it is one), and the section it moved from,
 * where the head above may still show it ("[Findings, moved from Ruled out]": a failure since overcome).
 */
function addedLine(id: string, text: string, movedFrom?: string): string {
  if (id.startsWith('#')) return text.replace(/^- /, '- [Request] ');
  const section = id.slice(0, id.indexOf('\u0000'));
  return text.replace(/^- /, `- [${section}${movedFrom ? `, moved from ${movedFrom}` : ''}] `);
}

/**
 * The layout of the head after a fold, from the head the previous fold sent.
 * When every line already sent is still there (its sources may have grown: the
 * line as sent stays), the new lines and the lines whose statement changed are
 * appended under ADDED_HEADING, newest last, and the text already sent keeps
 * its bytes. A line that left (demoted, superseded elsewhere, withdrawn), a
 * request that changed, or too many appended lines render the head in full.
 * Pure: the layout is part of the stored floor summary, so a view derived again
 * from the store is the same.
 */
export function layoutAfterFold(previous: SummaryState | undefined, next: SummaryState, counter?: SummaryLineCounter, cap?: number): { state: SummaryState; kind: LayoutKind } {
  const full = (): { state: SummaryState; kind: LayoutKind } => ({ state: { ...next, layout: { frozen: renderFacts(next).join('\n'), added: [], addedIds: [] } }, kind: 'rendered' });
  // A workspace chosen at this fold rewrites the paths of lines already sent.
  if (!previous || previous.root !== next.root) return full();
  const sent = renderedLines(previous);
  // A head that said (almost) nothing yet is no prefix worth keeping: no cache block would be served from it,
  // and appending would leave every section reading "(none)" above the lines that fill it.
  if (sent.size === 0 || (counter && counter.count(previous.layout?.frozen ?? renderFacts(previous).join('\n')) < CACHE_BLOCK_TOKENS)) return full();
  const now = renderedLines(next);
  const bare = (t: string): string => t.replace(SOURCES_SUFFIX, '');
  const added: string[] = previous.layout ? [...previous.layout.added] : [];
  const addedIds: string[] = previous.layout?.addedIds?.length === added.length ? [...previous.layout.addedIds] : added.map(() => '');
  // What the cap compressed since (a line demoted to a gist, gists grouped, gists counted in the pointer) still
  // says what it said: the head keeps it as sent rather than rewriting every line after it. A line that left
  // for any other reason (superseded, withdrawn) is no longer true, and the head is rendered in full.
  // A key still in a live section was moved or restated there: a new statement, not a compressed one (the head
  // appends it in its new place rather than renders: see below).
  const live = new Map<string, string>();
  for (const section of FACT_SECTIONS) if (section !== 'Archived') for (const l of next.facts[section]) live.set(l.key, section);
  const gists = archivedGists(next);
  const sentGists = archivedGists(previous);
  const evictedMore = evictedCount(next) > evictedCount(previous);
  // Compressed: the key's gist now comes from the same section and says only words of the line as sent.
  const compressedTo = (key: string, section: string, text: string): boolean => {
    const g = gists.get(key);
    if (live.has(key) || !g || (section !== 'Archived' && g.tag !== section)) return false;
    const said = tokens(text);
    return [...tokens(g.gist)].every((t) => said.has(t));
  };
  const frozen = previous.layout?.frozen ?? renderFacts(previous).join('\n');
  // The gists the frozen head shows, whole: an archived gist counts as shown only when it stands there as one;
  // and the causes each failure line there shows (see failureSince; the last line of a command counts).
  const frozenGists = new Set<string>();
  const frozenCauses = new Map<string, readonly string[]>();
  for (const l of frozen.split('\n')) {
    const bare = l.replace(SOURCES_SUFFIX, '');
    const m = ARCHIVED_GISTS.exec(bare);
    if (m) for (const g of m[2]!.split(GIST_SEPARATOR)) frozenGists.add(g);
    const failed = l.startsWith('- ') ? FAILED_LINE.exec(bare.slice(2)) : null;
    if (failed) frozenCauses.set(failureKey(failed[1]!, failed[2]), failed[5]!.split(CAUSE_JOIN));
  }
  const kept = new Set<string>();
  // Keys whose line moved to another section since: the section the head as sent shows them in.
  const movedFrom = new Map<string, string>();
  for (const [id, text] of sent) {
    const current = now.get(id);
    if (current === undefined) {
      if (id.startsWith('#')) return full();
      const section = id.slice(0, id.indexOf('\u0000'));
      const key = id.slice(id.indexOf('\u0000') + 1);
      // A line moved to another section since (a failure overcome, now in Findings with "later it worked"; a change
      // the user said did not take, now in Ruled out) or a deliverable first named in part and now by its path: what
      // was sent was so when sent, and the line in its new place is appended below it, newest last.
      const moved = live.has(key) && live.get(key) !== section;
      const renamed = section === 'Deliverables' && next.facts.Deliverables.some((l) => forwardSlashes(l.key).endsWith(`/${key}`));
      if (moved) movedFrom.set(key, section);
      if (moved || renamed) continue;
      const group = section === 'Archived' ? previous.facts.Archived.find((l) => l.key === key) : undefined;
      const members = group?.members ?? [key];
      const compressed =
        members.every((m) => compressedTo(m, section, group?.members ? (sentGists.get(m)?.gist ?? '') : text)) ||
        (evictedMore && section === 'Archived' && members.every((m) => !live.has(m) && !gists.has(m)));
      if (!compressed) return full();
      for (const m of members) kept.add(m);
      continue;
    }
    if (id.startsWith('#') && current !== text) return full();
  }
  for (const [id, text] of now) {
    // Appended, the head keeps as sent every line evicted since it was rendered: a pointer counting them as not shown
    // would be false (the one rendered with the head, if any, still counts right).
    if (id === EVICTED_ID) continue;
    const before = sent.get(id);
    if (before !== undefined && bare(before) === bare(text)) continue;
    // A line the cap shortened since (a deliverable's note dropped) says only what the line as sent says: not repeated.
    if (before !== undefined && !id.startsWith('#') && saysNoMore(bare(text), bare(before))) continue;
    // The compressed form of lines the head keeps as sent says less than they do: not repeated.
    const line = next.facts.Archived.find((l) => `Archived\u0000${l.key}` === id);
    if (line && (line.members ?? [line.key]).every((m) => kept.has(m))) continue;
    // An archived line shows only the gists the head as first sent does not show: a group that only lost gists
    // (one superseded, its new wording appended on its own) is not repeated. (Lines appended since may be
    // rewritten where they stand, so what they show is no reason to leave a gist out.)
    let shown = text;
    let at = addedIds.indexOf(id);
    // An archived line whose statements were appended earlier on lines of their own (live, or a gist alone) is
    // written where the first of those stands, and the others go: the head says each statement once.
    if (at < 0 && line) at = absorbAppended(added, addedIds, new Set(line.members ?? [line.key]), id);
    if (line) {
      const gists = gistsOf(line);
      const fresh = gists.filter((g) => !frozenGists.has(g));
      if (fresh.length === 0) {
        // An appended line left with nothing the frozen head does not show goes (what it held changed since).
        if (at >= 0) {
          added.splice(at, 1);
          addedIds.splice(at, 1);
        }
        continue;
      }
      if (fresh.length < gists.length) shown = factLine(next, 'Archived', { ...line, text: `[${ARCHIVED_FROM.exec(line.text)?.[1] ?? 'Findings'}] ${fresh.join(GIST_SEPARATOR)}` });
    }
    // A line that moved here from another section: where it was appended under that section, it is rewritten there.
    const key = id.slice(id.indexOf('\u0000') + 1);
    const from = id.startsWith('#') ? undefined : movedFrom.get(key);
    if (at < 0 && from !== undefined) {
      at = addedIds.indexOf(`${from}\u0000${key}`);
      if (at >= 0) addedIds[at] = id;
    }
    if (id.startsWith('Ruled out\u0000')) shown = failureSince(frozenCauses, shown);
    // The line says it moved: the head above may still show it (or an earlier wording of it) under its old section.
    // A line added at an earlier fold and changed again is rewritten where it stands, not repeated.
    if (at >= 0) added[at] = addedLine(id, shown, from);
    else {
      added.push(addedLine(id, shown, from));
      addedIds.push(id);
    }
  }
  if (added.length > LAYOUT_MAX_ADDED) return full();
  // A head whose appended lines outweigh the lines first sent reads as a few sections, most of them "(none)", under a
  // long list tagged by section: rendered once in full it reads by section again, and the prefix it gives up was the
  // smaller part.
  if (counter && counter.count(added.join('\n')) > counter.count(frozen)) return full();
  const state: SummaryState = { ...next, layout: { frozen, added, addedIds } };
  // Lines repeated in their new wording and lines kept as sent may take the head a little past its cap, not more.
  if (counter && cap !== undefined && counter.countSummary(state) > cap * (1 + LAYOUT_CAP_SLACK)) return full();
  return { state, kind: 'appended' };
}
