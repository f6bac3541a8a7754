import type { Command } from 'commander';
import { baseUrlOf, session } from './api.ts';
import { describeSignIn, signIn } from './auth.ts';
import { leaf, runs } from './command.ts';
import { confirm } from './prompt.ts';

// svc projects create: the public sign-up (POST /v1/projects). The operator's `projects
// disable|enable` live beside it in main.ts.

interface CreateOptions {
  json?: boolean;
  name: string;
  ownerEmail: string;
  baseUrl?: string;
  login?: boolean;
}

export function registerProjectCommands(projects: Command): void {
  const create = leaf(projects, 'create', 'create a project; prints its first API key, once')
    .requiredOption('--name <name>', 'display name')
    .requiredOption('--owner-email <email>', 'contact e-mail of the owner')
    .option('--base-url <url>', 'where svc answers (else SVC_BASE_URL, else the saved one)')
    .option('--login', 'sign in with the new key at once (else asked at a terminal)');
  runs<CreateOptions>(create, async (out, options) => {
    const baseUrl = baseUrlOf(options.baseUrl);
    const api = session(baseUrl);
    const project = await api.call(api.svc.POST('/v1/projects', { body: { name: options.name, ownerEmail: options.ownerEmail } }));
    out.result(project, () =>
      [
        `Created project ${project.name} (${project.projectId}).`,
        `API key (shown once; keep it somewhere safe): ${project.apiKey}`,
      ].join('\n'),
    );
    if (options.login || (!out.json && (await confirm('Sign in with this key?', false)))) {
      const signed = await signIn(baseUrl, project.apiKey);
      if (!out.json) out.note(describeSignIn(signed));
    } else if (!out.json) {
      out.note('Sign in with it: `svc login` (or run this with --login next time).');
    }
  });
}
