import type { FieldError } from './fieldError.ts';

// A project's opt-out keywords (CONTRACT §9): an inbound message whose text or button payload is
// one of them, compared case-insensitively and trimmed, opts its sender out. Pure rules only.

/** WhatsApp's policy asks businesses to honour opt-outs: on by default, with the common words. */
export const DEFAULT_OPT_OUT_KEYWORDS: readonly string[] = ['STOP', 'UNSUBSCRIBE', 'PARAR', 'SAIR', 'BAJA', 'ARRET'];

export const MAX_OPT_OUT_KEYWORDS = 50;
export const MAX_OPT_OUT_KEYWORD_LENGTH = 64;

/** How a keyword and an inbound text are compared: trimmed, Unicode-normalised, case folded. */
export function keywordKey(text: string): string {
  return text.normalize('NFKC').trim().toLocaleLowerCase('und');
}

/** The keyword the text is, if any: the whole text (trimmed) must be one, not merely contain it. */
export function matchingKeyword(keywords: readonly string[], text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const key = keywordKey(text);
  if (key === '') return undefined;
  return keywords.find((keyword) => keywordKey(keyword) === key);
}

// Control characters (C0, DEL, C1) and the invisible formatting ones (zero-width, bidi overrides).
const UNPRINTABLE = /[\p{Cc}\p{Cf}]/u;

/**
 * Field errors of a keyword list (400 validation_failed): each keyword has printable text of at
 * most 64 characters once trimmed, and no two are the same keyword.
 */
export function keywordProblems(keywords: readonly string[], at = '/keywords'): FieldError[] {
  const problems: FieldError[] = [];
  const seen = new Map<string, number>();
  for (const [index, keyword] of keywords.entries()) {
    const field = `${at}/${index}`;
    const key = keywordKey(keyword);
    if (key === '') {
      problems.push({ field, code: 'empty', message: `${field} is blank; a keyword needs a visible character.` });
    } else if (UNPRINTABLE.test(keyword)) {
      problems.push({ field, code: 'invalid', message: `${field} holds a control or invisible character.` });
    } else if (keyword.trim().length > MAX_OPT_OUT_KEYWORD_LENGTH) {
      problems.push({ field, code: 'too_long', message: `${field} is longer than ${MAX_OPT_OUT_KEYWORD_LENGTH} characters.` });
    } else if (seen.has(key)) {
      problems.push({ field, code: 'duplicate', message: `${field} repeats ${at}/${seen.get(key)} (keywords ignore case).` });
    } else {
      seen.set(key, index);
    }
  }
  return problems;
}

/** The list as stored and shown: each keyword trimmed, in the order given. */
export function normalizedKeywords(keywords: readonly string[]): string[] {
  return keywords.map((keyword) => keyword.trim());
}
