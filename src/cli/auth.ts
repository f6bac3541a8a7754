import type { Command } from 'commander';
import { baseUrlOf, session } from './api.ts';
import { leaf, runs } from './command.ts';
import { configPath, DEFAULT_BASE_URL, readConfig, updateConfig } from './configStore.ts';
import { ask, askSecret, interactive, readStdin } from './prompt.ts';

// svc login / logout: the base URL and API key the other commands use, kept in the config file.

interface LoginOptions {
  json?: boolean;
  baseUrl?: string;
  apiKeyStdin?: boolean;
}

export interface SignedIn {
  baseUrl: string;
  projectId: string;
  projectName: string;
  configPath: string;
}

/** Checks the key with GET /v1/projects/me, then saves it with the base URL. */
export async function signIn(baseUrl: string, apiKey: string): Promise<SignedIn> {
  const api = session(baseUrl, apiKey);
  const project = await api.call(api.svc.GET('/v1/projects/me'));
  updateConfig({ baseUrl, apiKey, projectId: project.projectId, projectName: project.name });
  return { baseUrl, projectId: project.projectId, projectName: project.name, configPath: configPath() };
}

export function describeSignIn(signed: SignedIn): string {
  return (
    `Signed in to project ${signed.projectName} (${signed.projectId}) at ${signed.baseUrl}.\n` +
    `Saved in ${signed.configPath} (readable by you only).`
  );
}

async function chooseBaseUrl(flag: string | undefined): Promise<string> {
  if (flag !== undefined || process.env.SVC_BASE_URL !== undefined || !interactive()) return baseUrlOf(flag);
  return baseUrlOf(await ask('svc base URL', { fallback: readConfig().baseUrl ?? DEFAULT_BASE_URL, otherwise: '' }));
}

async function chooseApiKey(fromStdin: boolean | undefined): Promise<string> {
  if (fromStdin) return (await readStdin()).trim();
  if (process.env.SVC_API_KEY) return process.env.SVC_API_KEY;
  return askSecret('API key (svc_live_…)', { otherwise: 'set SVC_API_KEY or pipe the key into --api-key-stdin' });
}

export function registerAuthCommands(program: Command): void {
  const login = leaf(program, 'login', 'check an API key and save it, with the base URL, for the other commands')
    .option('--base-url <url>', `where svc answers (else SVC_BASE_URL, else a prompt; default ${DEFAULT_BASE_URL})`)
    .option('--api-key-stdin', 'read the API key from stdin (else SVC_API_KEY, else a prompt without echo)');
  runs<LoginOptions>(login, async (out, options) => {
    const baseUrl = await chooseBaseUrl(options.baseUrl);
    const apiKey = await chooseApiKey(options.apiKeyStdin);
    const signed = await signIn(baseUrl, apiKey);
    out.result(signed, () => describeSignIn(signed));
  });

  runs(leaf(program, 'logout', 'forget the saved API key (the base URL and listen secret stay)'), async (out) => {
    updateConfig({ apiKey: undefined, projectId: undefined, projectName: undefined });
    out.result({ signedOut: true, configPath: configPath() }, () =>
      `Signed out: the API key is removed from ${configPath()}.` +
      (process.env.SVC_API_KEY ? '\nSVC_API_KEY is still set in this shell: commands keep using it.' : ''),
    );
  });
}
