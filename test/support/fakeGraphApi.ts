import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A fake of the parts of Meta's Graph API (WhatsApp Cloud API) that svc calls, built from Meta's
// reference: POST /{phone-number-id}/messages, GET /debug_token, GET /{waba-id}/phone_numbers,
// POST and GET /{waba-id}/message_templates, GET /{template-id}. It records every request,
// answers errors in Graph's shape, and can be told to fail the next calls of a route.

export const FAKE_WABA_ID = '102290129340398';

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  authorization: string | undefined;
  contentType: string | undefined;
  body: any;
}

export interface FakeTemplate {
  id: string;
  name: string;
  language: string;
  category: string;
  status: string;
  rejected_reason: string;
  components: any[];
}

export interface FakeAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export type FakeRoute = 'send' | 'debug_token' | 'phone_numbers' | 'create_template' | 'list_templates' | 'get_template';

/** Graph's error body: `{ error: { message, type, code, error_subcode?, error_data, fbtrace_id } }`. */
export function graphError(status: number, code: number, title: string, details: string, subcode?: number): FakeAnswer {
  return {
    status,
    body: {
      error: {
        message: `(#${code}) ${title}`,
        type: 'OAuthException',
        code,
        ...(subcode !== undefined && { error_subcode: subcode }),
        error_data: { messaging_product: 'whatsapp', details },
        fbtrace_id: 'A' + randomBytes(8).toString('hex'),
      },
    },
  };
}

export class FakeGraphApi {
  readonly requests: RecordedRequest[] = [];
  readonly templates = new Map<string, FakeTemplate>();
  /** Tokens Meta accepts; any other is answered 401, code 190 (expired or invalid). */
  readonly validTokens = new Set<string>();
  /** Phone number ids of the fake WABA. */
  readonly phoneNumberIds = new Set<string>();
  readonly #failures = new Map<FakeRoute, FakeAnswer[]>();
  #server = createServer((request, response) => void this.#handle(request, response));
  url = '';

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** The next calls of `route` are answered with these, in order, before it behaves again. */
  failNext(route: FakeRoute, ...answers: FakeAnswer[]): void {
    this.#failures.set(route, [...(this.#failures.get(route) ?? []), ...answers]);
  }

  /** Meta's review of a template (what its message_template_status_update webhook then reports). */
  review(templateId: string, status: string, rejectedReason = 'NONE'): void {
    const template = this.templates.get(templateId);
    if (!template) throw new Error(`no fake template ${templateId}`);
    template.status = status;
    template.rejected_reason = rejectedReason;
  }

  templateNamed(name: string, language: string): FakeTemplate | undefined {
    return [...this.templates.values()].find((template) => template.name === name && template.language === language);
  }

  sends(): RecordedRequest[] {
    return this.requests.filter((request) => request.method === 'POST' && request.path.endsWith('/messages'));
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const url = new URL(request.url ?? '/', 'http://fake');
    const recorded: RecordedRequest = {
      method: request.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      authorization: request.headers.authorization,
      contentType: request.headers['content-type'],
      body: text === '' ? undefined : JSON.parse(text),
    };
    this.requests.push(recorded);
    const answer = this.#answer(recorded);
    response.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
    response.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
  }

  #answer(request: RecordedRequest): FakeAnswer {
    const match = /^\/v\d+\.\d+\/([^/]+)(?:\/([^/]+))?$/.exec(request.path);
    if (!match) return graphError(400, 100, 'Unknown path', `No such path: ${request.path}`);
    const [, node, edge] = match;
    const route = this.#routeOf(request.method, node!, edge);
    if (!route) return graphError(400, 100, 'Invalid parameter', `Unsupported ${request.method} request`, 33);
    const failure = this.#failures.get(route)?.shift();
    if (failure) return failure;
    const token = /^Bearer (.+)$/.exec(request.authorization ?? '')?.[1];
    if (token === undefined || !this.validTokens.has(token)) {
      return graphError(401, 190, 'Error validating access token', 'The access token has expired or is invalid.');
    }
    switch (route) {
      case 'send':
        return this.#send(node!, request.body);
      case 'debug_token':
        return {
          status: 200,
          body: {
            data: {
              app_id: '670843887433847',
              type: 'SYSTEM_USER',
              application: 'svc test app',
              is_valid: request.query.get('input_token') === token,
              scopes: ['whatsapp_business_management', 'whatsapp_business_messaging'],
              granular_scopes: [
                { scope: 'whatsapp_business_management', target_ids: [FAKE_WABA_ID] },
                { scope: 'whatsapp_business_messaging', target_ids: [FAKE_WABA_ID] },
              ],
            },
          },
        };
      case 'phone_numbers':
        return { status: 200, body: { data: [...this.phoneNumberIds].map((id) => ({ id, verified_name: 'Acme' })) } };
      case 'create_template':
        return this.#createTemplate(request.body);
      case 'list_templates': {
        const name = request.query.get('name');
        const data = [...this.templates.values()].filter((template) => name === null || template.name === name);
        return { status: 200, body: { data, paging: { cursors: { before: 'MAZDZD', after: 'MjQZD' } } } };
      }
      case 'get_template': {
        const template = this.templates.get(node!);
        if (!template) return graphError(400, 100, 'Invalid parameter', `Object with ID '${node}' does not exist`, 33);
        return { status: 200, body: template };
      }
    }
  }

  #routeOf(method: string, node: string, edge: string | undefined): FakeRoute | undefined {
    if (method === 'POST' && edge === 'messages') return 'send';
    if (method === 'GET' && node === 'debug_token' && edge === undefined) return 'debug_token';
    if (method === 'GET' && node === FAKE_WABA_ID && edge === 'phone_numbers') return 'phone_numbers';
    if (method === 'POST' && node === FAKE_WABA_ID && edge === 'message_templates') return 'create_template';
    if (method === 'GET' && node === FAKE_WABA_ID && edge === 'message_templates') return 'list_templates';
    if (method === 'GET' && edge === undefined && this.templates.has(node)) return 'get_template';
    if (method === 'GET' && edge === undefined && /^\d+$/.test(node)) return 'get_template';
    return undefined;
  }

  #send(phoneNumberId: string, body: any): FakeAnswer {
    if (!this.phoneNumberIds.has(phoneNumberId)) {
      return graphError(400, 100, 'Invalid parameter', `Object with ID '${phoneNumberId}' does not exist`, 33);
    }
    if (body?.messaging_product !== 'whatsapp' || body?.type !== 'template' || typeof body?.to !== 'string') {
      return graphError(400, 131009, 'Parameter value is not valid', 'messaging_product, to and type are required');
    }
    const template = this.templateNamed(body.template?.name, body.template?.language?.code);
    if (!template || template.status !== 'APPROVED') {
      return graphError(
        404,
        132001,
        'Template name does not exist in the translation',
        `template name (${body.template?.name}) does not exist in ${body.template?.language?.code}`,
      );
    }
    const expected = (type: string) => {
      const text: string = template.components.find((component) => component.type === type)?.text ?? '';
      return new Set(text.match(/\{\{\d+\}\}/g) ?? []).size;
    };
    const given = (type: string) =>
      (body.template.components ?? []).find((component: any) => component.type === type)?.parameters?.length ?? 0;
    if (expected('HEADER') !== given('header') || expected('BODY') !== given('body')) {
      return graphError(400, 132000, 'Number of parameters does not match the expected number of params', 'parameter count mismatch');
    }
    return {
      status: 200,
      body: {
        messaging_product: 'whatsapp',
        contacts: [{ input: body.to, wa_id: body.to.replace(/^\+/, '') }],
        messages: [{ id: `wamid.${randomBytes(16).toString('base64url')}`, message_status: 'accepted' }],
      },
    };
  }

  #createTemplate(body: any): FakeAnswer {
    if (typeof body?.name !== 'string' || typeof body?.language !== 'string' || !Array.isArray(body?.components)) {
      return graphError(400, 100, 'Invalid parameter', 'name, language and components are required');
    }
    if (this.templateNamed(body.name, body.language)) {
      return graphError(400, 100, 'Invalid parameter', 'Content in this language already exists.', 2388024);
    }
    const id = String(1_000_000_000_000_000n + BigInt(this.templates.size + 1));
    const template: FakeTemplate = {
      id,
      name: body.name,
      language: body.language,
      category: body.category,
      status: 'PENDING',
      rejected_reason: 'NONE',
      components: body.components,
    };
    this.templates.set(id, template);
    return { status: 200, body: { id, status: 'PENDING', category: body.category } };
  }
}

export async function startFakeGraphApi(): Promise<FakeGraphApi> {
  return new FakeGraphApi().start();
}
