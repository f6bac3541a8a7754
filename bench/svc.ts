// svc as users run it: `node <svc-dir>/src/main.ts serve [--role …]` in its own process, and the
// setup every scenario needs, done over its public HTTP API.
import { join } from 'node:path';
import { type Child, spawnNode } from './processes.ts';

export const ENCRYPTION_KEY = Buffer.alloc(32, 7).toString('base64');

export interface SvcProcess {
  readonly child: Child;
  /** The HTTP base URL; undefined for a worker-only process. */
  readonly url: string | undefined;
}

let started = 0;

/** Starts svc and resolves once it logged "svc started" (with its URL when it serves HTTP). */
export async function startSvc(
  svcDir: string,
  env: Record<string, string>,
  role: 'all' | 'api' | 'worker' = 'all',
  options: { nodeOptions?: string } = {},
): Promise<SvcProcess> {
  const nodeOptions = [process.env.BENCH_SVC_NODE_OPTIONS, options.nodeOptions].filter(Boolean).join(' ');
  const child = spawnNode(`svc-${role}-${++started}`, join(svcDir, 'src', 'main.ts'), ['serve', '--role', role], {
    cwd: svcDir,
    env: {
      HOST: '127.0.0.1',
      PORT: '0',
      SVC_ENCRYPTION_KEY: ENCRYPTION_KEY,
      SVC_SIGNUP_RATE_LIMIT: '100000',
      SVC_LOG_LEVEL: 'info',
      // e.g. BENCH_SVC_NODE_OPTIONS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile svc alone.
      ...(nodeOptions && { NODE_OPTIONS: nodeOptions }),
      // With BENCH_SVC_NODE_OPTIONS="--import <bench>/writerTrace.ts": where it writes its trace.
      ...(process.env.BENCH_WRITER_TRACE_DIR && { BENCH_WRITER_TRACE_DIR: process.env.BENCH_WRITER_TRACE_DIR }),
      ...env,
    },
  });
  const line = await child.waitForLine(/"msg":"svc started"/, 30_000);
  return { child, url: /"url":"(http:\/\/[^"]+)"/.exec(line)?.[1] };
}

export interface Reply {
  status: number;
  body: any;
  text: string;
}

export async function call(
  baseUrl: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; timeoutMs?: number } = {},
): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(baseUrl + path, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body, text };
}

function expect(reply: Reply, status: number, what: string): any {
  if (reply.status !== status) throw new Error(`${what}: expected ${status}, got ${reply.status} ${reply.text.slice(0, 500)}`);
  return reply.body;
}

export interface Sender {
  projectId: string;
  key: string;
  templateId: string;
  templateName: string;
  language: string;
  bodyText: string;
  phoneNumberId: string;
}

export const TEMPLATE_NAME = 'bench';
export const TEMPLATE_LANGUAGE = 'en';
export const BODY_TEXT = 'Your code is {{1}} now.';

/**
 * A project ready to send: created, credentials saved (and a callback URL when given), a template
 * registered. With the sandbox the test helper approves it; with another provider the caller
 * settles it (approveTemplate).
 */
export async function createSender(
  baseUrl: string,
  options: { phoneNumberId?: string; callbackUrl?: string; sandbox?: boolean; name?: string } = {},
): Promise<Sender> {
  const phoneNumberId = options.phoneNumberId ?? '1065550001';
  const project = expect(
    await call(baseUrl, 'POST', '/v1/projects', { body: { name: options.name ?? 'Bench', ownerEmail: 'bench@example.com' } }),
    200,
    'create project',
  );
  const key: string = project.apiKey;
  expect(
    await call(baseUrl, 'PUT', '/v1/projects/me/provider-credentials', {
      key,
      body: {
        providerPhoneNumberId: phoneNumberId,
        providerAccessToken: `EAAG-bench-${phoneNumberId}`,
        ...(options.callbackUrl !== undefined && { callbackUrl: options.callbackUrl }),
      },
    }),
    200,
    'save credentials',
  );
  const template = expect(
    await call(baseUrl, 'POST', '/v1/templates', {
      key,
      body: { name: TEMPLATE_NAME, language: TEMPLATE_LANGUAGE, category: 'UTILITY', components: [{ type: 'BODY', text: BODY_TEXT }] },
    }),
    200,
    'register template',
  );
  if (options.sandbox !== false) {
    expect(
      await call(baseUrl, 'POST', `/v1/test-helpers/templates/${template.id}/review`, { key, body: { status: 'APPROVED' } }),
      200,
      'approve template',
    );
  }
  return {
    projectId: project.projectId,
    key,
    templateId: template.id,
    templateName: TEMPLATE_NAME,
    language: TEMPLATE_LANGUAGE,
    bodyText: BODY_TEXT,
    phoneNumberId,
  };
}

/** The body of one send, to a distinct recipient per index. */
export function messageBody(index: number) {
  return { to: `+55119${String(30_000_000 + index)}`, template: TEMPLATE_NAME, language: TEMPLATE_LANGUAGE, variables: { '1': String(index) } };
}
