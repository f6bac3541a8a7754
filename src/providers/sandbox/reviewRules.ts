import { bodyOf, findPlaceholders } from '../../domain/templates.ts';
import type { ParameterFormat, TemplateCheck, TemplateComponent } from '../provider.ts';

// How the sandbox reviews a template (README, "Sandbox"). Modelled on the reasons Meta rejects
// templates for, made exact so tests can rely on them. Checked in this order; the first that
// applies is the rejection reason:
// 1. the name starts with `reject_`;
// 2. the BODY text, trimmed, starts or ends with a placeholder;
// 3. the BODY has too many placeholders for its text: more placeholders (each use counts) than
//    words besides them. A word is a run of non-space characters with at least one letter or
//    digit; punctuation alone is not a word.
// Everything else is APPROVED. An AUTHENTICATION template's wording is Meta's preset, checked at
// registration with the same rules as for WhatsApp: only the name rule applies to it here.

export const REJECT_PREFIX = 'reject_';

/** Words of text around the placeholders that the ratio rule counts. */
export function wordCount(text: string, placeholders: { start: number; end: number }[]): number {
  let rest = '';
  let from = 0;
  for (const match of placeholders) {
    rest += text.slice(from, match.start) + ' ';
    from = match.end;
  }
  rest += text.slice(from);
  return rest.split(/\s+/).filter((word) => /[\p{L}\p{N}]/u.test(word)).length;
}

export function sandboxReview(template: {
  name: string;
  category?: string;
  components: TemplateComponent[];
  parameterFormat?: ParameterFormat;
}): TemplateCheck {
  if (template.name.startsWith(REJECT_PREFIX)) {
    return { status: 'REJECTED', reason: `The sandbox rejects every template whose name starts with "${REJECT_PREFIX}".` };
  }
  if (template.category === 'AUTHENTICATION') return { status: 'APPROVED' };
  const body = bodyOf(template.components);
  if (body === undefined) return { status: 'REJECTED', reason: 'The template has no BODY component.' };
  const text = body.text.trim();
  const placeholders = findPlaceholders(text, template.parameterFormat);
  if (placeholders.length === 0) return { status: 'APPROVED' };

  const first = placeholders[0]!;
  const last = placeholders.at(-1)!;
  if (first.start === 0) {
    return { status: 'REJECTED', reason: `The body starts with the placeholder {{${first.key}}}; put some text before it.` };
  }
  if (last.end === text.length) {
    return { status: 'REJECTED', reason: `The body ends with the placeholder {{${last.key}}}; put some text after it.` };
  }
  const words = wordCount(text, placeholders);
  if (placeholders.length > words) {
    return {
      status: 'REJECTED',
      reason:
        `The body has too many placeholders for its length: ${placeholders.length} placeholder(s) need at ` +
        `least ${placeholders.length} words of text, and it has ${words}. Add text or use fewer placeholders.`,
    };
  }
  return { status: 'APPROVED' };
}
