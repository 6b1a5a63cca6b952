/**
 * Counts as people read them ("12,345"), without ICU: the first
 * `toLocaleString` of a process loads ICU's number formatting, about 20-30 ms
 * in one block, which in the extension host fell inside the first @keeper turn
 * (the status bar's tooltip, the compaction line).
 */

/** An integer with thousands separators, as `toLocaleString('en-US')` writes it; any other number as that writes it too. */
export function formatCount(n: number): string {
  if (!Number.isSafeInteger(n)) return n.toLocaleString('en-US');
  const digits = String(Math.abs(n));
  let out = digits.slice(0, ((digits.length - 1) % 3) + 1);
  for (let i = out.length; i < digits.length; i += 3) out += `,${digits.slice(i, i + 3)}`;
  return n < 0 || Object.is(n, -0) ? `-${out}` : out;
}
