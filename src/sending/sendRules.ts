import type { TemplatesTable } from '../db/tables.ts';
import type { FieldError } from '../domain/fieldError.ts';
import { parameterProblems, recipientProblem, variablesMatch } from '../domain/messageRequest.ts';
import { renderText, sendProblem } from '../domain/templates.ts';
import { ApiError } from '../http/errors.ts';
import type { TemplateParts } from './sendContexts.ts';

// The rules of a send, each in one place, answered with the contract's error codes: the single
// send, each item of a batch and the template preview all go through these.

/** What one recipient of a send carries: the single send's body, or a batch item. */
export interface SendItem {
  to: string;
  variables?: Record<string, string>;
  headerVariables?: Record<string, string>;
  /** ISO 8601 date-time. */
  sendAt?: string;
}

export type Content = { header?: string; body: string; footer?: string };

/** How far ahead a send may be scheduled. */
export const MAX_SCHEDULE_AHEAD_MS = 35 * 24 * 60 * 60 * 1000;
/** A sendAt this far in the past still counts as now (clocks differ, requests take time). */
export const SCHEDULE_CLOCK_SLACK_MS = 1000;

/** Field errors of variable values (400 validation_failed), with pointers under `at`. */
export function variableProblems(item: Pick<SendItem, 'variables' | 'headerVariables'>, at = ''): FieldError[] {
  return [...parameterProblems(`${at}/variables`, item.variables), ...parameterProblems(`${at}/headerVariables`, item.headerVariables)];
}

/** Field errors of what a schema cannot check (400 validation_failed), with pointers under `at`. */
export function itemProblems(item: Pick<SendItem, 'to' | 'variables' | 'headerVariables'>, at = ''): FieldError[] {
  const recipient = recipientProblem(item.to);
  return [
    ...(recipient ? [{ field: `${at}/to`, code: 'invalid_phone', message: `${at}/to ${recipient}.` }] : []),
    ...variableProblems(item, at),
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
    throw new ApiError('send_at_out_of_range', message, { errors: [{ field, code: 'out_of_range', message }] });
  }
  if (time > now + MAX_SCHEDULE_AHEAD_MS) {
    const message = `${field} is more than 35 days ahead; give a time from now to 35 days ahead.`;
    throw new ApiError('send_at_out_of_range', message, { errors: [{ field, code: 'out_of_range', message }] });
  }
  // A time just past (within the slack) is now: the message is not scheduled at all.
  return time <= now ? undefined : time;
}

/** Picks the template a send names, or explains with the error the contract gives. */
export function chooseTemplate(candidates: readonly TemplatesTable[], name: string, language: string): TemplatesTable {
  if (candidates.length === 0) {
    throw new ApiError('template_not_found', `No template named '${name}' exists in this project.`);
  }
  const template = candidates.find((candidate) => candidate.language === language);
  if (!template) {
    const languages = candidates.map((candidate) => candidate.language).sort();
    throw new ApiError(
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
  if (problem !== undefined) throw new ApiError('template_not_approved', problem);
  return template;
}

export function providerNotConfigured(): ApiError {
  return new ApiError('provider_not_configured', 'Save the provider credentials first: PUT /v1/projects/me/provider-credentials.');
}

function describeKeys(values: Record<string, string> | undefined): string {
  const keys = Object.keys(values ?? {}).sort((a, b) => Number(a) - Number(b));
  return keys.length === 0 ? 'none' : keys.map((key) => `"${key}"`).join(', ');
}

function expectedKeys(count: number): string {
  return count === 0 ? 'none' : Array.from({ length: count }, (_, i) => `"${i + 1}"`).join(', ');
}

/** The variables must fill the template's placeholders exactly: 422 template_variables_mismatch otherwise. */
export function checkVariables(
  template: Pick<TemplatesTable, 'name' | 'language'>,
  parts: TemplateParts,
  item: Pick<SendItem, 'variables' | 'headerVariables'>,
): void {
  if (variablesMatch(parts.bodyCount, item.variables) && variablesMatch(parts.headerCount, item.headerVariables)) return;
  throw new ApiError(
    'template_variables_mismatch',
    `Template '${template.name}' (${template.language}) needs variables ${expectedKeys(parts.bodyCount)} and ` +
      `headerVariables ${expectedKeys(parts.headerCount)}; got variables ${describeKeys(item.variables)} and ` +
      `headerVariables ${describeKeys(item.headerVariables)}.`,
  );
}

/** What the recipient reads: the template rendered with the variables (checked first). */
export function renderContent(parts: TemplateParts, item: Pick<SendItem, 'variables' | 'headerVariables'>): Content {
  return {
    ...(parts.header && { header: renderText(parts.header.text, item.headerVariables ?? {}) }),
    body: renderText(parts.body.text, item.variables ?? {}),
    ...(parts.footer && { footer: parts.footer.text }),
  };
}

export function recipientSuppressed(to: string, at = ''): ApiError {
  const message = `${to} is on this project’s suppression list (opted out); remove it with DELETE /v1/suppressions/{phoneNumber} to send to it.`;
  return new ApiError('recipient_suppressed', message, {
    errors: [{ field: `${at}/to`, code: 'suppressed', message }],
  });
}
