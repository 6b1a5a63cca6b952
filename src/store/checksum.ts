/**
 * CRC-32 (IEEE 802.3, the zlib one) of text: the checksum of every journal line
 * and of every record row. node:zlib has crc32 from Node 20.15; older 20.x lack it.
 */
import * as zlib from 'node:zlib';

let crcTable: Uint32Array | undefined;
function crc32Table(bytes: Uint8Array): number {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) crc = crcTable[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

const nativeCrc32: ((data: string) => number) | undefined =
  typeof (zlib as { crc32?: unknown }).crc32 === 'function' ? (s: string) => zlib.crc32(s) : undefined;

/** CRC-32 of the UTF-8 bytes of `text`. */
export function crc32(text: string, forceTable = false): number {
  if (nativeCrc32 && !forceTable) return nativeCrc32(text) >>> 0;
  return crc32Table(Buffer.from(text, 'utf8'));
}
