import type { Command } from 'commander';
import { signedIn } from './api.ts';
import { group, leaf, runs } from './command.ts';
import { usageError } from './exitCodes.ts';
import { confirm, interactive } from './prompt.ts';
import { shortTime, table } from './output.ts';

// The rest of the public API from the command line: batches, suppressions, the webhook signing
// secret, templates delete, credentials show. Each command is one API call and prints its answer.

const pretty = (value: unknown) => JSON.stringify(value, null, 2);

/** Whether to go on with something that cannot be undone: --yes, or a yes at a terminal. */
async function confirmed(question: string, yes: boolean | undefined): Promise<boolean> {
  if (yes) return true;
  if (!interactive()) throw usageError(`${question} Asked without a terminal: add --yes`);
  return confirm(question, false);
}

export function registerBatchCommands(program: Command): void {
  const batches = group(program, 'batches', 'batch sends and their progress');
  runs(leaf(batches, 'list', 'the project’s batches, newest first'), async (out) => {
    const api = signedIn();
    const all: { id: string; template: string; language: string; total: number; createdAt: string; counts: Record<string, number> }[] = [];
    for await (const batch of api.paginate('/v1/batches')) all.push(batch as (typeof all)[number]);
    out.result(all, () =>
      table(
        ['ID', 'TEMPLATE', 'LANGUAGE', 'TOTAL', 'READ', 'FAILED', 'CREATED'],
        all.map((batch) => [batch.id, batch.template, batch.language, batch.total, batch.counts.READ ?? 0, batch.counts.FAILED ?? 0, shortTime(batch.createdAt)]),
      ),
    );
  });
  runs(leaf(batches, 'get <id>', 'one batch: its messages counted by status'), async (out, _options, id) => {
    const api = signedIn();
    const batch = await api.call(api.svc.GET('/v1/batches/{id}', { params: { path: { id: id! } } }));
    out.result(batch, () => pretty(batch));
  });
}

export function registerSuppressionCommands(program: Command): void {
  const suppressions = group(program, 'suppressions', 'numbers that opted out: sends to them are refused');
  runs(leaf(suppressions, 'list', 'the suppressed numbers, newest first'), async (out) => {
    const api = signedIn();
    const all: { phoneNumber: string; reason?: string | null; source?: string; createdAt: string }[] = [];
    for await (const entry of api.paginate('/v1/suppressions')) all.push(entry as (typeof all)[number]);
    out.result(all, () => table(['NUMBER', 'SOURCE', 'REASON', 'SINCE'], all.map((entry) => [entry.phoneNumber, entry.source, entry.reason, shortTime(entry.createdAt)])));
  });
  const add = leaf(suppressions, 'add <number>', 'suppress a number (E.164, e.g. +5521998765432)').option('--reason <text>', 'why, for your records');
  runs<{ json?: boolean; reason?: string }>(add, async (out, options, phoneNumber) => {
    const api = signedIn();
    const entry = await api.call(
      api.svc.POST('/v1/suppressions', { body: { phoneNumber: phoneNumber!, ...(options.reason !== undefined && { reason: options.reason }) } }),
    );
    out.result(entry, () => `Suppressed ${entry.phoneNumber}: sends to it are refused (recipient_suppressed).`);
  });
  runs(leaf(suppressions, 'remove <number>', 'let a number receive messages again'), async (out, _options, phoneNumber) => {
    const api = signedIn();
    await api.call(api.svc.DELETE('/v1/suppressions/{phoneNumber}', { params: { path: { phoneNumber: phoneNumber! } } }));
    out.result({ phoneNumber, removed: true }, () => `${phoneNumber} is no longer suppressed.`);
  });
}

export function registerSecretCommands(webhooks: Command): void {
  const secret = group(webhooks, 'secret', 'the project’s webhook signing secret (whsec_…)');
  runs(leaf(secret, 'show', 'print the signing secret (and the previous one while a rotation lasts)'), async (out) => {
    const api = signedIn();
    const answer = await api.call(api.svc.GET('/v1/projects/me/webhook-secret'));
    out.result(answer, () => [answer.secret, ...answer.secrets.filter((one) => one !== answer.secret).map((old) => `${old} (previous, still signing)`)].join('\n'));
  });
  const rotate = leaf(secret, 'rotate', 'make a new signing secret; the old one keeps signing for a while').option('--yes', 'do not ask');
  runs<{ json?: boolean; yes?: boolean }>(rotate, async (out, options) => {
    if (!(await confirmed('Rotate the webhook signing secret?', options.yes))) return;
    const api = signedIn();
    const answer = await api.call(api.svc.POST('/v1/projects/me/webhook-secret/rotate'));
    const until = (answer as { previousSecretExpiresAt?: string | null }).previousSecretExpiresAt;
    out.result(answer, () => `New signing secret: ${answer.secret}` + (until ? `\nThe previous one signs too until ${shortTime(until)}.` : ''));
  });
}

export function registerTemplateDelete(templates: Command): void {
  const remove = leaf(templates, 'delete <id>', 'delete a template (at the provider too)').option('--yes', 'do not ask');
  runs<{ json?: boolean; yes?: boolean }>(remove, async (out, options, id) => {
    if (!(await confirmed(`Delete template ${id}?`, options.yes))) return;
    const api = signedIn();
    const deleted = await api.call(api.svc.DELETE('/v1/templates/{id}', { params: { path: { id: id! } } }));
    out.result(deleted ?? { id, deleted: true }, () => `Deleted template ${id}.`);
  });
}

export function registerCredentialsShow(credentials: Command): void {
  runs(leaf(credentials, 'show', 'the saved credentials (never the token), callback URL and sending number'), async (out) => {
    const api = signedIn();
    const project = await api.call(api.svc.GET('/v1/projects/me'));
    out.result(project, () => pretty(project));
  });
}
