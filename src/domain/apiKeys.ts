import { createHash, randomInt } from 'node:crypto';

export const API_KEY_PREFIX = 'svc_live_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 43; // 43 base62 characters carry 256 bits.
const KEY_SHAPE = /^svc_live_[0-9A-Za-z]{32,128}$/;
/** How much of a key value the listing shows, so people can tell their keys apart. */
export const VISIBLE_PREFIX_LENGTH = 12;

export function generateApiKey(): string {
  let random = '';
  for (let i = 0; i < RANDOM_LENGTH; i++) random += BASE62[randomInt(62)];
  return API_KEY_PREFIX + random;
}

export function isWellFormedApiKey(value: string): boolean {
  return KEY_SHAPE.test(value);
}

/** Keys carry 256 random bits, so one fast hash is enough; it makes a lookup O(1) by index. */
export function hashApiKey(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

export function visiblePrefix(value: string): string {
  return value.slice(0, VISIBLE_PREFIX_LENGTH);
}
