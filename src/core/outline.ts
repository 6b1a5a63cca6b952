/**
 * The outline of a long markdown message: what stands in for a report too
 * large for the window when it must be cut to fit. A head and a tail keep the
 * first and last pages and lose every section between; an outline keeps every
 * heading and the opening words of every list item and paragraph, so each
 * section still says what it found — at a length chosen to fill the budget.
 */

/** How a line of a message ranks for the outline: headings first, then list items, then the rest. */
interface OutlineLine {
  readonly text: string;
  readonly rank: 0 | 1 | 2;
}

const HEADING_MAX_CHARS = 120;
/** Items and paragraphs are cut to the longest length that fits, between these. */
const ITEM_MIN_CHARS = 40;
const ITEM_MAX_CHARS = 240;
/** The share of the room after the headings that list items may take when there are paragraphs too. */
const ITEM_SHARE = 0.75;
/** A message with fewer headings and items than this has no outline worth keeping. */
const MIN_STRUCTURE = 4;

function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = text.slice(0, max);
  const space = head.lastIndexOf(' ');
  return `${space > max / 2 ? head.slice(0, space) : head}…`;
}

function linesOf(text: string): OutlineLine[] {
  const out: OutlineLine[] = [];
  let fence: string | undefined;
  let fenced = 0;
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    const marker = /^\s*(```|~~~)/.exec(line)?.[1];
    if (marker !== undefined && (fence === undefined || marker === fence)) {
      if (fence !== undefined) out.push({ text: `[${fenced}-line code block]`, rank: 2 });
      fence = fence === undefined ? marker : undefined;
      fenced = 0;
      continue;
    }
    if (fence !== undefined) {
      if (line.trim() !== '') fenced++;
      continue;
    }
    if (line.trim() === '' || /^\s*[-=*_|:]{3,}\s*$/.test(line)) continue;
    // Emphasis markers and deep indentation cost characters and say nothing an outline needs.
    const text = `${/^\s/.test(line) ? '  ' : ''}${line.trim().replace(/\*\*|__/g, '')}`;
    if (/^\s{0,3}#{1,6}\s/.test(line)) out.push({ text: cut(text, HEADING_MAX_CHARS), rank: 0 });
    else if (/^\s*(?:[-*+•]|\d+[.)]|\[[ xX]\])\s|^\s*\*\*[^*]+\*\*/.test(line)) out.push({ text, rank: 1 });
    else out.push({ text, rank: 2 });
  }
  if (fence !== undefined && fenced > 0) out.push({ text: `[${fenced}-line code block]`, rank: 2 });
  return out;
}

/**
 * The lines of one rank cut to the longest length (ITEM_MIN_CHARS to
 * ITEM_MAX_CHARS) at which they fit in `room`; when none fits, the first ones
 * at the shortest length. Returns the kept lines by index and the room left.
 */
function fit(lines: readonly OutlineLine[], rank: 1 | 2, room: number): { kept: Map<number, string>; left: number } {
  const at = lines.flatMap((l, i) => (l.rank === rank ? [i] : []));
  const size = (max: number): number => at.reduce((n, i) => n + Math.min(lines[i]!.text.length, max + 1) + 1, 0);
  let lo = ITEM_MIN_CHARS;
  let hi = ITEM_MAX_CHARS;
  if (size(lo) <= room) {
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (size(mid) <= room) lo = mid;
      else hi = mid - 1;
    }
  }
  // When even the shortest cut does not fit them all, every section keeps its first lines before any keeps more.
  const sections = new Map<number, number[]>();
  let heading = -1;
  lines.forEach((l, i) => {
    if (l.rank === 0) heading = i;
    else if (l.rank === rank) sections.set(heading, [...(sections.get(heading) ?? []), i]);
  });
  const queues = [...sections.values()];
  const kept = new Map<number, string>();
  let left = room;
  for (let round = 0, more = true; more; round++) {
    more = false;
    for (const queue of queues) {
      const i = queue[round];
      if (i === undefined) continue;
      const text = cut(lines[i]!.text, lo);
      if (text.length + 1 > left) continue;
      kept.set(i, text);
      left -= text.length + 1;
      more = true;
    }
  }
  return { kept, left };
}

/**
 * The outline of `text` in at most about `budget` characters, or undefined
 * when the text has too little structure (a log, one long paragraph) for an
 * outline to say more than its head.
 */
export function outlineOf(text: string, budget: number): string | undefined {
  const lines = linesOf(text);
  if (lines.filter((l) => l.rank < 2).length < MIN_STRUCTURE) return undefined;
  const kept = new Map<number, string>();
  let room = budget;
  lines.forEach((l, i) => {
    if (l.rank !== 0 || l.text.length + 1 > room) return;
    kept.set(i, l.text);
    room -= l.text.length + 1;
  });
  // List items first, leaving a share for the paragraphs (a verdict is often a sentence, not an item).
  const itemRoom = lines.some((l) => l.rank === 2) ? Math.floor(room * ITEM_SHARE) : room;
  const items = fit(lines, 1, itemRoom);
  for (const [i, t] of items.kept) kept.set(i, t);
  room = room - itemRoom + items.left;
  for (const [i, t] of fit(lines, 2, room).kept) kept.set(i, t);
  return lines.flatMap((_, i) => (kept.has(i) ? [kept.get(i)!] : [])).join('\n');
}
