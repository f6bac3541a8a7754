import type { TemplatesTable } from '../db/tables.ts';
import type { FieldError } from '../domain/fieldError.ts';
import { type ParameterRule, parameterProblems, recipientProblem, variablesMatch } from '../domain/messageRequest.ts';
import { type MessageFields, messageFieldProblems, renderMessage, richParameters } from '../domain/templateMessage.ts';
import { renderText, sendProblem } from '../domain/templates.ts';
import type { RichSendParameters } from '../providers/provider.ts';
import { DomainError, messageOf, validationError } from '../errors.ts';
import type { TemplateParts } from './sendContexts.ts';

// The rules of a send, each in one place, answered with the contract's error codes: the single
// send, each item of a batch and the template preview all go through these.

/** What one recipient of a send carries: the single send's body, or a batch item. */
export interface SendItem extends MessageFields {
  to: string;
  /** ISO 8601 date-time. */
  sendAt?: string;
}

export type Content = ReturnType<typeof renderMessage>;

/** The fields of a send a rich template takes (CONTRACT §9): absent from the spec's sends. */
const RICH_FIELDS = ['headerMedia', 'headerLocation', 'buttons'] as const;

/** How far ahead a send may be scheduled. */
export const MAX_SCHEDULE_AHEAD_MS = 35 * 24 * 60 * 60 * 1000;
/** A sendAt this far in the past still counts as now (clocks differ, requests take time). */
export const SCHEDULE_CLOCK_SLACK_MS = 1000;

/** Field errors of variable values (400 validation_failed), with pointers under `at`; `rule`: the provider's. */
export function variableProblems(item: MessageFields, at: string, rule: ParameterRule): FieldError[] {
  const buttonTexts = Object.fromEntries(
    Object.entries(item.buttons ?? {}).flatMap(([index, value]) => (value.text === undefined ? [] : [[`${index}/text`, value.text]])),
  );
  return [
    ...parameterProblems(`${at}/variables`, item.variables, rule),
    ...parameterProblems(`${at}/headerVariables`, item.headerVariables, rule),
    ...parameterProblems(`${at}/buttons`, buttonTexts, rule),
  ];
}

/** Field errors of what a schema cannot check (400 validation_failed), with pointers under `at`. */
export function itemProblems(item: Omit<SendItem, 'sendAt'>, at: string, rule: ParameterRule): FieldError[] {
  const recipient = recipientProblem(item.to);
  return [
    ...(recipient ? [{ field: `${at}/to`, code: 'invalid_phone', message: `${at}/to ${recipient}.` }] : []),
    ...variableProblems(item, at, rule),
  ];
}

/**
 * When a message with this sendAt is due: undefined for at once. A time before now (beyond the
 * clock slack) or more than 35 days ahead is 422 send_at_out_of_range.
 */
export function scheduledTime(sendAt: string | undefined, now: number, at = ''): number | undefined {
  if (sendAt === undefined) return undefined;
  const time = Date.parse(sendAt);
  const field = `${at}/sendAt`;
  if (time < now - SCHEDULE_CLOCK_SLACK_MS) {
    const message = `${field} is in the past; give a time from now to 35 days ahead, or leave it out to send at once.`;
    throw new DomainError('send_at_out_of_range', message, { errors: [{ field, code: 'out_of_range', message }] });
  }
  if (time > now + MAX_SCHEDULE_AHEAD_MS) {
    const message = `${field} is more than 35 days ahead; give a time from now to 35 days ahead.`;
    throw new DomainError('send_at_out_of_range', message, { errors: [{ field, code: 'out_of_range', message }] });
  }
  // A time just past (within the slack) is now: the message is not scheduled at all.
  return time <= now ? undefined : time;
}

/** Picks the template a send names, or explains with the error the contract gives. */
export function chooseTemplate(candidates: readonly TemplatesTable[], name: string, language: string): TemplatesTable {
  if (candidates.length === 0) {
    throw new DomainError('template_not_found', { name });
  }
  const template = candidates.find((candidate) => candidate.language === language);
  if (!template) {
    const languages = candidates.map((candidate) => candidate.language).sort();
    throw new DomainError(
      'template_language_mismatch',
      `Template '${name}' exists in ${languages.join(', ')}, not in '${language}'; send with one of those languages.`,
    );
  }
  const problem = sendProblem({
    name,
    language,
    status: template.status,
    providerStatus: template.provider_status,
    providerStatusReason: template.provider_status_reason,
  });
  if (problem !== undefined) throw new DomainError('template_not_approved', problem);
  return template;
}

export function providerNotConfigured(): DomainError {
  return new DomainError('provider_not_configured');
}

function describeKeys(values: Record<string, string> | undefined): string {
  const keys = Object.keys(values ?? {}).sort((a, b) => Number(a) - Number(b));
  return keys.length === 0 ? 'none' : keys.map((key) => `"${key}"`).join(', ');
}

function expectedKeys(count: number): string {
  return count === 0 ? 'none' : Array.from({ length: count }, (_, i) => `"${i + 1}"`).join(', ');
}

const NUMBERED = /^[1-9][0-9]{0,2}$/;

/**
 * A POSITIONAL template's variables are numbered: a named key is refused as the request schema
 * refuses any other key (400), as it always was for the spec's templates.
 */
function namedKeyProblems(parts: TemplateParts, item: MessageFields, at: string): FieldError[] {
  if (parts.format === 'NAMED') return [];
  return (['variables', 'headerVariables'] as const).flatMap((field) =>
    Object.keys(item[field] ?? {})
      .filter((key) => !NUMBERED.test(key))
      .map((key) => {
        const pointer = `${at}/${field}/${key}`;
        return { field: pointer, code: 'unknown_field', message: `${pointer} is not a known field.` };
      }),
  );
}

function hasRichFields(item: MessageFields): boolean {
  return RICH_FIELDS.some((field) => item[field] !== undefined);
}

/**
 * The send's values must fit the template exactly — variables, headerVariables and, for a rich
 * template, headerMedia, headerLocation and buttons: 422 template_variables_mismatch naming what
 * is missing or extra otherwise.
 */
export function checkVariables(
  template: Pick<TemplatesTable, 'name' | 'language'>,
  parts: TemplateParts,
  item: MessageFields,
  at = '',
): void {
  const named = namedKeyProblems(parts, item, at);
  if (named.length > 0) throw validationError(named);
  if (parts.rich || hasRichFields(item)) {
    const problems = messageFieldProblems(parts, item);
    if (problems.length === 0) return;
    throw new DomainError(
      'template_variables_mismatch',
      `Template '${template.name}' (${template.language}) does not match the values sent: ${problems.join('; ')}.`,
    );
  }
  if (variablesMatch(parts.bodyCount, item.variables) && variablesMatch(parts.headerCount, item.headerVariables)) return;
  throw new DomainError(
    'template_variables_mismatch',
    `Template '${template.name}' (${template.language}) needs variables ${expectedKeys(parts.bodyCount)} and ` +
      `headerVariables ${expectedKeys(parts.headerCount)}; got variables ${describeKeys(item.variables)} and ` +
      `headerVariables ${describeKeys(item.headerVariables)}.`,
  );
}

/** What the recipient reads: the template rendered with the variables (checked first). */
export function renderContent(parts: TemplateParts, item: MessageFields): Content {
  if (parts.rich) return renderMessage(parts, item);
  return {
    ...(parts.header && { header: renderText(parts.header.text, item.headerVariables ?? {}) }),
    body: renderText(parts.body.text, item.variables ?? {}),
    ...(parts.footer && { footer: parts.footer.text }),
  };
}

/** What the provider needs beyond the variables (stored with the message); undefined for the spec's templates. */
export function sendParameters(parts: TemplateParts, item: MessageFields): RichSendParameters | undefined {
  return richParameters(parts, item);
}

export function recipientSuppressed(to: string, at = ''): DomainError {
  const message = messageOf('recipient_suppressed', { to });
  return new DomainError('recipient_suppressed', message, {
    errors: [{ field: `${at}/to`, code: 'suppressed', message }],
  });
}
