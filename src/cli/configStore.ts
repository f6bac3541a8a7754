import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { CliError, EXIT } from './exitCodes.ts';

// Where `svc login` keeps the base URL and API key: $XDG_CONFIG_HOME/svc/config.json, else
// ~/.config/svc/config.json. The folder is 0700 and the file 0600: the key is a secret.

export interface CliConfig {
  baseUrl?: string;
  apiKey?: string;
  projectId?: string;
  projectName?: string;
  /** The secret `svc webhooks listen` signs forwarded events with; made once, kept across logins. */
  listenSecret?: string;
}

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CONFIG_HOME;
  return join(xdg && xdg.startsWith('/') ? xdg : join(homedir(), '.config'), 'svc');
}

export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(configDir(env), 'config.json');
}

export function readConfig(path = configPath()): CliConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new CliError(`cannot read ${path}: ${(error as Error).message}`, EXIT.failed);
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
    return parsed as CliConfig;
  } catch {
    throw new CliError(`${path} is not valid JSON; fix it or delete it and run svc login again`, EXIT.failed);
  }
}

/** Writes the whole config: a 0600 file renamed into a 0700 folder, so no reader sees it half written or open. */
export function writeConfig(config: CliConfig, path = configPath()): void {
  const dir = dirname(path);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
    const temporary = `${path}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify(config, null, 2) + '\n', { mode: 0o600 });
    chmodSync(temporary, 0o600);
    renameSync(temporary, path);
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    throw new CliError(`cannot write ${path}: ${code ?? message} (set XDG_CONFIG_HOME to a folder of yours)`, EXIT.failed);
  }
}

/** The config with `changes` applied (undefined removes a field), written back. */
export function updateConfig(changes: Partial<Record<keyof CliConfig, string | undefined>>, path = configPath()): CliConfig {
  const next: Record<string, unknown> = { ...readConfig(path) };
  for (const [field, value] of Object.entries(changes)) {
    if (value === undefined) delete next[field];
    else next[field] = value;
  }
  writeConfig(next as CliConfig, path);
  return next as CliConfig;
}

/** The listen secret of this config, made (and saved) the first time it is asked for. */
export function listenSecret(path = configPath()): string {
  const existing = readConfig(path).listenSecret;
  if (existing) return existing;
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  updateConfig({ listenSecret: secret }, path);
  return secret;
}
