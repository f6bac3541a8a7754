import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { CreateTemplateRequest, Template } from '#sdk';
import { signedIn } from './api.ts';
import { group, leaf, runs } from './command.ts';
import { EXIT, usageError } from './exitCodes.ts';
import { shortTime, table } from './output.ts';
import { readStdin } from './prompt.ts';
import { onInterrupt, parseDuration, pollUntil } from './waiting.ts';

// svc templates create|list|get: register templates for review and see where they stand.

interface CreateOptions {
  json?: boolean;
  file: string;
  wait?: boolean;
  timeout?: string;
}

async function readTemplateFile(file: string): Promise<CreateTemplateRequest> {
  let text: string;
  try {
    text = file === '-' ? await readStdin() : readFileSync(file, 'utf8');
  } catch (error) {
    throw usageError(`cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text) as CreateTemplateRequest;
  } catch (error) {
    throw usageError(`${file} is not JSON: ${(error as Error).message}`);
  }
}

function describe(template: Template): string {
  const lines = [`${template.name} (${template.language}, ${template.category}) ${template.id}: ${template.status}`];
  if (template.status === 'REJECTED' && template.rejectionReason) lines.push(`  reason: ${template.rejectionReason}`);
  for (const component of template.components) lines.push(`  ${component.type.padEnd(6)} ${component.text}`);
  return lines.join('\n');
}

export function registerTemplateCommands(program: Command): void {
  const templates = group(program, 'templates', 'message templates and their review');

  const create = leaf(templates, 'create', 'register a template (a JSON file, as POST /v1/templates takes it) for review')
    .requiredOption('-f, --file <file>', 'the template as JSON ({ name, language, category, components }); - reads stdin')
    .option('--wait', 'wait for the review: APPROVED exits 0, REJECTED prints the reason and exits 4')
    .option('--timeout <duration>', 'with --wait, give up after this long (exit 5), e.g. 10m');
  runs<CreateOptions>(create, async (out, options) => {
    const timeoutMs = options.timeout === undefined ? undefined : parseDuration(options.timeout);
    const body = await readTemplateFile(options.file);
    const api = signedIn();
    let template = await api.call(api.svc.POST('/v1/templates', { body }));
    if (options.wait && template.status === 'PENDING') {
      const started = Date.now();
      const label = () => `waiting for the review of ${template.name} (${template.language})… ${Math.round((Date.now() - started) / 1000)}s`;
      const spinner = out.spinner(label());
      const stopOnInterrupt = onInterrupt(() => spinner.stop());
      try {
        template = await pollUntil(
          async () => {
            spinner.update(label());
            const current = await api.call(api.svc.GET('/v1/templates/{id}', { params: { path: { id: template.id } } }));
            return current.status === 'PENDING' ? undefined : current;
          },
          { intervalMs: 1000, ...(timeoutMs !== undefined && { timeoutMs }), what: `the review of ${template.name}` },
        );
      } finally {
        spinner.stop();
        stopOnInterrupt();
      }
    }
    out.result(template, () => describe(template));
    if (template.status === 'REJECTED') process.exitCode = EXIT.unfavourable;
  });

  runs(leaf(templates, 'list', 'the project’s templates, newest first'), async (out) => {
    const api = signedIn();
    const all: Template[] = [];
    for await (const template of api.paginate('/v1/templates')) all.push(template);
    out.result(all, () =>
      table(
        ['ID', 'NAME', 'LANGUAGE', 'CATEGORY', 'STATUS', 'CREATED', 'REASON'],
        all.map((template) => [
          template.id,
          template.name,
          template.language,
          template.category,
          template.status,
          shortTime(template.createdAt),
          template.rejectionReason,
        ]),
      ),
    );
  });

  runs(leaf(templates, 'get <id>', 'one template, with its components'), async (out, _options, id) => {
    const api = signedIn();
    const template = await api.call(api.svc.GET('/v1/templates/{id}', { params: { path: { id: id! } } }));
    out.result(template, () => describe(template));
  });
}
