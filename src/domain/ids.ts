import { randomBytes } from 'node:crypto';

// Ids are `prefix_` + 10 characters of millisecond time + 16 random characters, in lowercase
// Crockford base32, so they sort by creation time (ULID layout). Within one millisecond of one
// process the random part is incremented, so ids made here are strictly increasing.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const TIME_LENGTH = 10;
const RANDOM_LENGTH = 16;

export type IdPrefix = 'proj' | 'tpl' | 'msg' | 'key' | 'evt' | 'tse' | 'att' | 'bat' | 'sup' | 'we';

let lastTime = -1;
let lastRandom: number[] = [];

function encodeTime(ms: number): string {
  let out = '';
  let rest = ms;
  for (let i = 0; i < TIME_LENGTH; i++) {
    out = ALPHABET[rest % 32] + out;
    rest = Math.floor(rest / 32);
  }
  return out;
}

function freshRandom(): number[] {
  const bytes = randomBytes(RANDOM_LENGTH);
  return Array.from(bytes, (byte) => byte % 32);
}

function increment(digits: number[]): number[] {
  const next = digits.slice();
  for (let i = next.length - 1; i >= 0; i--) {
    if (next[i]! < 31) {
      next[i]!++;
      return next;
    }
    next[i] = 0;
  }
  return freshRandom();
}

export function newId(prefix: IdPrefix, now: number = Date.now()): string {
  if (now <= lastTime) {
    lastRandom = increment(lastRandom);
    now = lastTime;
  } else {
    lastTime = now;
    lastRandom = freshRandom();
  }
  return `${prefix}_${encodeTime(now)}${lastRandom.map((digit) => ALPHABET[digit]).join('')}`;
}

/** The smallest id of `prefix` that can be made at or after `ms`: a keyset bound for time filters. */
export function idLowerBound(prefix: IdPrefix, ms: number): string {
  return `${prefix}_${encodeTime(Math.max(0, ms))}`;
}

/** Decodes the creation time (epoch ms) an id carries. */
export function idTime(id: string): number {
  const time = id.slice(id.indexOf('_') + 1, id.indexOf('_') + 1 + TIME_LENGTH);
  let ms = 0;
  for (const char of time) ms = ms * 32 + ALPHABET.indexOf(char);
  return ms;
}
