/**
 * Content hashing for part addresses and coverage keys. The core may not import
 * `node:crypto`, and addresses need speed more than cryptographic strength.
 */

/**
 * A short content address (16 hex digits, 64 bits) for part addresses and
 * coverage digests. Not cryptographic: two independent 32-bit multiplicative
 * lanes over the UTF-16 code units, mixed at the end (the cyrb53 construction
 * widened to 64 bits). About ten times faster than SHA-256 in JavaScript, and
 * a collision inside one session is vanishingly unlikely at this width.
 */
export function contentHash(text: string): string {
  return contentHashOf([text]);
}

/**
 * `contentHash` of the pieces joined with `separator` (the same digest), without
 * building the joined string.
 */
export function contentHashOf(pieces: readonly string[], separator = ''): string {
  let length = separator.length * Math.max(0, pieces.length - 1);
  for (const piece of pieces) length += piece.length;
  let h1 = 0xdeadbeef ^ length;
  let h2 = 0x41c6ce57 ^ length;
  for (let k = 0; k < pieces.length; k++) {
    for (let i = 0, sep = k > 0 ? separator.length : 0; i < sep; i++) {
      const c = separator.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 2654435761);
      h2 = Math.imul(h2 ^ c, 1597334677);
    }
    const text = pieces[k]!;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 2654435761);
      h2 = Math.imul(h2 ^ c, 1597334677);
    }
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (h1 >>> 0).toString(16).padStart(8, '0') + (h2 >>> 0).toString(16).padStart(8, '0');
}
