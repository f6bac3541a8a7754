import type { Command } from 'commander';
import type { ApiKey } from '#sdk';
import { signedIn } from './api.ts';
import { group, leaf, runs } from './command.ts';
import { shortTime, table } from './output.ts';

// svc keys create|list|revoke: the project's API keys.

export function registerKeyCommands(program: Command): void {
  const keys = group(program, 'keys', 'the project’s API keys');

  const create = leaf(keys, 'create', 'create another API key; prints it once').requiredOption(
    '--name <name>',
    'a label, e.g. the environment it is for',
  );
  runs<{ json?: boolean; name: string }>(create, async (out, options) => {
    const api = signedIn();
    const key = await api.call(api.svc.POST('/v1/api-keys', { body: { name: options.name } }));
    out.result(key, () => `Created key ${key.name} (${key.id}).\nAPI key (shown once; keep it somewhere safe): ${key.key}`);
  });

  runs(leaf(keys, 'list', 'the active keys (values are never shown again)'), async (out) => {
    const api = signedIn();
    const all: ApiKey[] = [];
    for await (const key of api.paginate('/v1/api-keys')) all.push(key);
    out.result(all, () =>
      table(
        ['ID', 'NAME', 'PREFIX', 'CREATED', 'LAST USED'],
        all.map((key) => [key.id, key.name, key.prefix, shortTime(key.createdAt), shortTime(key.lastUsedAt)]),
      ),
    );
  });

  runs(leaf(keys, 'revoke <id>', 'revoke a key at once (by its id, key_…)'), async (out, _options, id) => {
    const api = signedIn();
    const revoked = await api.call(api.svc.DELETE('/v1/api-keys/{id}', { params: { path: { id: id! } } }));
    out.result(revoked, () => `Revoked key ${revoked.name} (${revoked.id}) at ${shortTime(revoked.revokedAt)}.`);
  });
}
