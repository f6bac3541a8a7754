import { randomBytes } from 'node:crypto';

// UUID version 7 (RFC 9562): 48 bits of Unix time in milliseconds, then 74 random bits, with
// the version and variant bits in their places. They sort by creation time, so a table keyed by
// them pages newest-first by id. Within one millisecond of one process the random part is
// incremented (RFC 9562 §6.2, method 2), so ids made here are strictly increasing — which
// crypto.randomUUIDv7() does not promise.

const RANDOM_BITS = 74n;
const RANDOM_MAX = (1n << RANDOM_BITS) - 1n;
const RAND_B_BITS = 62n;

let lastTime = -1;
let lastRandom = 0n;

function freshRandom(): bigint {
  // 73 bits: the top bit stays clear, leaving room to increment within the millisecond.
  const bytes = randomBytes(10);
  return BigInt('0x' + bytes.toString('hex')) >> 7n;
}

export function newUuid7(now: number = Date.now()): string {
  if (now <= lastTime) {
    now = lastTime;
    lastRandom++;
    if (lastRandom > RANDOM_MAX) {
      lastTime = now = lastTime + 1;
      lastRandom = freshRandom();
    }
  } else {
    lastTime = now;
    lastRandom = freshRandom();
  }
  const randA = (lastRandom >> RAND_B_BITS) & 0xfffn;
  const randB = lastRandom & ((1n << RAND_B_BITS) - 1n);
  const hex =
    now.toString(16).padStart(12, '0') +
    (0x7000n | randA).toString(16).padStart(4, '0') +
    ((0b10n << RAND_B_BITS) | randB).toString(16).padStart(16, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The smallest UUIDv7 that can be made at or after `ms`: a keyset bound for time filters. */
export function uuid7LowerBound(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`;
}
