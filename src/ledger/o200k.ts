// o200k_base token counts of pre-tokenizer pieces, without gpt-tokenizer's encoder: its rank table
// is a 2.8 MB JavaScript array that cost ~140 ms CPU to load at every `tapedeck ledger` (more than
// the rest of the command). The same ranks are read from gpt-tokenizer's data/o200k_base.tiktoken
// into typed arrays on first use, and a piece is counted by the same byte-pair merge as tiktoken and
// gpt-tokenizer (whole piece first, then merge the lowest-ranked adjacent pair, leftmost on ties),
// with a heap so that a long piece costs n log n rather than n².
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { packagePath } from '../package.js';

export interface RankTable {
  /** Token i's bytes are bytes[offsets[i]..offsets[i + 1]). */
  bytes: Uint8Array;
  offsets: Uint32Array;
  ranks: Uint32Array;
  /** Open addressing: token index + 1, 0 when empty. */
  slots: Int32Array;
  mask: number;
  maxLength: number;
}

let table: RankTable | undefined;

const BASE64 = new Int16Array(256).fill(-1);
for (let i = 0; i < 64; i++)
  BASE64['ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.charCodeAt(i)] = i;

function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ (bytes[i] as number), 0x01000193);
  return h >>> 0;
}

/** gpt-tokenizer's o200k_base ranks: one `base64 rank` line per token. */
function tiktokenFile(): string {
  return createRequire(import.meta.url).resolve('gpt-tokenizer/data/o200k_base.tiktoken');
}

/** The rank table written by `npm run build` (parsing the text file costs ~45 ms; this, ~1 ms). */
export const RANK_TABLE_FILE = 'dist/o200k_base.bin';
const MAGIC = 0x4b32304f; // 'O02K'
const HEADER = 6;

/** Parses `base64 rank` lines into the table (~200k tokens). */
export function parseTiktoken(text: Uint8Array): RankTable {
  let lines = 0;
  for (let i = 0; i < text.length; i++) if (text[i] === 10) lines++;
  if (text.length > 0 && text[text.length - 1] !== 10) lines++;
  const bytes = new Uint8Array(text.length); // decoded bytes are fewer than their base64
  const offsets = new Uint32Array(lines + 1);
  const ranks = new Uint32Array(lines);
  let out = 0;
  let n = 0;
  let maxLength = 0;
  for (let i = 0; i < text.length; ) {
    offsets[n] = out;
    let acc = 0;
    let bits = 0;
    for (; i < text.length && text[i] !== 32; i++) {
      const v = BASE64[text[i] as number] as number;
      if (v < 0) continue; // '=' padding
      acc = ((acc << 6) | v) & 0xffffff;
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        bytes[out++] = (acc >> bits) & 0xff;
      }
    }
    let rank = 0;
    for (i++; i < text.length && text[i] !== 10; i++) rank = rank * 10 + ((text[i] as number) - 48);
    i++;
    ranks[n] = rank;
    maxLength = Math.max(maxLength, out - (offsets[n] as number));
    n++;
  }
  offsets[n] = out;
  let size = 1;
  while (size < n * 1.25) size <<= 1;
  const slots = new Int32Array(size);
  const mask = size - 1;
  for (let t = 0; t < n; t++) {
    let s = hashBytes(bytes, offsets[t] as number, offsets[t + 1] as number) & mask;
    while (slots[s] !== 0) s = (s + 1) & mask;
    slots[s] = t + 1;
  }
  return { bytes: bytes.subarray(0, out), offsets, ranks, slots, mask, maxLength };
}

/** The table as one buffer: a header (magic, source size, counts), then the arrays. */
export function serializeRankTable(t: RankTable, sourceSize: number): Uint8Array {
  const n = t.ranks.length;
  const words = HEADER + (n + 1) + n + t.slots.length;
  const out = new Uint8Array(words * 4 + t.bytes.length);
  const u32 = new Uint32Array(out.buffer, 0, words);
  u32.set([MAGIC, sourceSize, n, t.slots.length, t.bytes.length, t.maxLength]);
  u32.set(t.offsets, HEADER);
  u32.set(t.ranks, HEADER + n + 1);
  new Int32Array(out.buffer, (HEADER + 2 * n + 1) * 4, t.slots.length).set(t.slots);
  out.set(t.bytes, words * 4);
  return out;
}

/** The table in `buf`, if it is one and (given `sourceSize`) was built from a text file of that size. */
export function deserializeRankTable(buf: Uint8Array, sourceSize?: number): RankTable | undefined {
  if (buf.byteOffset % 4 !== 0) buf = buf.slice();
  if (buf.length < HEADER * 4) return undefined;
  const [magic, size, n, slotCount, byteCount, maxLength] = new Uint32Array(buf.buffer, buf.byteOffset, HEADER);
  if (magic !== MAGIC || (sourceSize !== undefined && size !== sourceSize)) return undefined;
  const words = HEADER + 2 * (n as number) + 1 + (slotCount as number);
  if (buf.length !== words * 4 + (byteCount as number)) return undefined;
  const at = (word: number) => buf.byteOffset + word * 4;
  return {
    offsets: new Uint32Array(buf.buffer, at(HEADER), (n as number) + 1),
    ranks: new Uint32Array(buf.buffer, at(HEADER + (n as number) + 1), n as number),
    slots: new Int32Array(buf.buffer, at(HEADER + 2 * (n as number) + 1), slotCount as number),
    bytes: new Uint8Array(buf.buffer, at(words), byteCount as number),
    mask: (slotCount as number) - 1,
    maxLength: maxLength as number,
  };
}

/** Writes the prebuilt table (`npm run build` calls this). */
export function writeRankTable(file: string): void {
  const text = readFileSync(tiktokenFile());
  writeFileSync(file, serializeRankTable(parseTiktoken(text), text.length));
}

/**
 * Bundled into dist/ (a .js module), this code carries gpt-tokenizer's split pattern as it was at
 * build time, and the prebuilt table holds the ranks of that same build: they belong together
 * whatever gpt-tokenizer is installed now, so the table is taken without resolving gpt-tokenizer's
 * data file (resolving it reads gpt-tokenizer's package.json: ~3 ms of every `tapedeck ledger`).
 * Run from source (.ts), the installed gpt-tokenizer is the one in use: the table must match it.
 */
const BUILT = import.meta.url.endsWith('.js');

/** The table `npm run build` wrote, if there is one (and, given sourceSize, built from that text file). */
function prebuiltTable(sourceSize?: number): RankTable | undefined {
  try {
    return deserializeRankTable(readFileSync(packagePath(RANK_TABLE_FILE)), sourceSize);
  } catch {
    return undefined; // Not built (a checkout running from source): parse the text file.
  }
}

function load(): RankTable {
  if (BUILT) {
    const prebuilt = prebuiltTable();
    if (prebuilt) return prebuilt;
  }
  const source = tiktokenFile();
  return (BUILT ? undefined : prebuiltTable(statSync(source).size)) ?? parseTiktoken(readFileSync(source));
}

/** The rank of piece[start..end), or -1 when it is not a token. */
function rankOf(t: RankTable, piece: Uint8Array, start: number, end: number): number {
  const length = end - start;
  if (length > t.maxLength) return -1;
  for (let s = hashBytes(piece, start, end) & t.mask; ; s = (s + 1) & t.mask) {
    const slot = t.slots[s] as number;
    if (slot === 0) return -1;
    const from = t.offsets[slot - 1] as number;
    if ((t.offsets[slot] as number) - from !== length) continue;
    let i = 0;
    while (i < length && t.bytes[from + i] === piece[start + i]) i++;
    if (i === length) return t.ranks[slot - 1] as number;
  }
}

const encoder = new TextEncoder();
let buffer = new Uint8Array(256);

/** A min-heap of pair keys: rank * 2^32 + start (the lowest rank first, the leftmost on ties). */
class KeyHeap {
  #keys = new Float64Array(64);
  size = 0;
  push(key: number): void {
    if (this.size === this.#keys.length) {
      const grown = new Float64Array(this.size * 2);
      grown.set(this.#keys);
      this.#keys = grown;
    }
    const keys = this.#keys;
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((keys[parent] as number) <= key) break;
      keys[i] = keys[parent] as number;
      i = parent;
    }
    keys[i] = key;
  }
  pop(): number {
    const keys = this.#keys;
    const top = keys[0] as number;
    const last = keys[--this.size] as number;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= this.size) break;
      if (child + 1 < this.size && (keys[child + 1] as number) < (keys[child] as number)) child++;
      if ((keys[child] as number) >= last) break;
      keys[i] = keys[child] as number;
      i = child;
    }
    keys[i] = last;
    return top;
  }
}

const SHIFT = 2 ** 32;

/**
 * The number of o200k_base tokens in one pre-tokenizer piece (a match of O200K_TOKEN_SPLIT_REGEX),
 * as gpt-tokenizer's `countTokens(piece)` gives it with special tokens treated as text.
 */
export function countPieceTokens(piece: string): number {
  if (piece.length === 0) return 0;
  const t = (table ??= load());
  if (buffer.length < piece.length * 3) buffer = new Uint8Array(piece.length * 3);
  const n = encoder.encodeInto(piece, buffer).written;
  const bytes = buffer;
  if (n === 1 || rankOf(t, bytes, 0, n) >= 0) return 1;
  // Parts are identified by their first byte; next[s] is the first byte of the part after s (n: none).
  const next = new Int32Array(n + 1);
  const prev = new Int32Array(n + 1);
  const pairRank = new Int32Array(n).fill(-1);
  for (let i = 0; i <= n; i++) {
    next[i] = i + 1;
    prev[i] = i - 1;
  }
  next[n] = n;
  const heap = new KeyHeap();
  const rescore = (s: number): void => {
    const mid = next[s] as number;
    const rank = mid >= n ? -1 : rankOf(t, bytes, s, next[mid] as number);
    pairRank[s] = rank;
    if (rank >= 0) heap.push(rank * SHIFT + s);
  };
  for (let s = 0; s < n - 1; s++) rescore(s);
  let parts = n;
  while (heap.size > 0) {
    const key = heap.pop();
    const s = key % SHIFT;
    const rank = (key - s) / SHIFT;
    // A stale entry: the part was merged away, or its pair changed (a longer pair has another rank).
    if (pairRank[s] !== rank) continue;
    const gone = next[s] as number;
    const after = next[gone] as number;
    next[s] = after;
    if (after < n) prev[after] = s;
    pairRank[gone] = -1;
    parts--;
    rescore(s);
    const before = prev[s] as number;
    if (before >= 0) rescore(before);
  }
  return parts;
}
