import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A fake of the parts of Meta's Graph API (WhatsApp Cloud API) that svc calls, built from Meta's
// reference: POST /{phone-number-id}/messages, GET /{phone-number-id}, GET /debug_token,
// GET /{waba-id}/phone_numbers, POST|GET /{waba-id}/subscribed_apps, POST|GET|DELETE
// /{waba-id}/message_templates and GET /{template-id}. It models what a real customer meets:
// the kinds of token (system user: scopes without target_ids; Embedded Signup business token:
// its WABA under whatsapp_business_manage_events; user token: its WABAs under each scope), which
// WABAs a token may touch, the phone number's fields, the app's webhook subscription, Meta's
// authentication-template model, template deletion, and errors in Graph's shape — without
// `error_subcode`, which Meta stopped returning in v16. It records every request and can be told
// to fail the next calls of a route.

export const FAKE_WABA_ID = '102290129340398';
export const OTHER_WABA_ID = '102290129340777';
export const FAKE_APP_ID = '670843887433847';

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
  waba: string;
  name: string;
  language: string;
  category: string;
  status: string;
  rejected_reason: string;
  /** As Meta returns them: an AUTHENTICATION template's texts are Meta's, its button a URL button. */
  components: any[];
}

export interface FakePhoneNumber {
  id: string;
  display_phone_number: string;
  verified_name: string;
  quality_rating: string;
  throughput: { level: string };
}

export interface FakeToken {
  /** debug_token's `type`. */
  type: 'SYSTEM_USER' | 'USER';
  scopes: string[];
  granular_scopes: { scope: string; target_ids?: string[] }[];
  /** The WABAs the token may act on (a system user's assigned accounts). */
  wabas: string[];
}

export interface FakeAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export type FakeRoute =
  | 'send'
  | 'debug_token'
  | 'phone_number'
  | 'phone_numbers'
  | 'subscribe'
  | 'subscribed_apps'
  | 'create_template'
  | 'list_templates'
  | 'delete_template'
  | 'get_template';

const MANAGEMENT = 'whatsapp_business_management';
const MESSAGING = 'whatsapp_business_messaging';
const MANAGE_EVENTS = 'whatsapp_business_manage_events';

/** A system-user token (Meta's permissions page): its granular scopes name no WABA at all. */
export function systemUserToken(wabas: string[], scopes = [MANAGEMENT, MESSAGING]): FakeToken {
  return { type: 'SYSTEM_USER', scopes, granular_scopes: scopes.map((scope) => ({ scope })), wabas };
}

/** A business token from Embedded Signup: its WABA is named under whatsapp_business_manage_events only. */
export function embeddedSignupToken(waba: string): FakeToken {
  return {
    type: 'SYSTEM_USER',
    scopes: [MANAGEMENT, MESSAGING, MANAGE_EVENTS],
    granular_scopes: [{ scope: MANAGEMENT }, { scope: MESSAGING }, { scope: MANAGE_EVENTS, target_ids: [waba] }],
    wabas: [waba],
  };
}

/** A user token: its WABAs named under each WhatsApp scope. */
export function userToken(wabas: string[]): FakeToken {
  return {
    type: 'USER',
    scopes: [MANAGEMENT, MESSAGING],
    granular_scopes: [
      { scope: MANAGEMENT, target_ids: wabas },
      { scope: MESSAGING, target_ids: wabas },
    ],
    wabas,
  };
}

/** Graph's error body: `{ error: { message, type, code, error_data, fbtrace_id } }` (no subcode since v16). */
export function graphError(status: number, code: number, title: string, details: string): FakeAnswer {
  return {
    status,
    body: {
      error: {
        message: `(#${code}) ${title}`,
        type: 'OAuthException',
        code,
        error_data: { messaging_product: 'whatsapp', details },
        fbtrace_id: 'A' + randomBytes(8).toString('hex'),
      },
    },
  };
}

function noSuchObject(id: string): FakeAnswer {
  return graphError(
    400,
    100,
    'Invalid parameter',
    `Unsupported request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`,
  );
}

const PERMISSION_DENIED = () => graphError(403, 200, 'Permissions error', 'The token does not have access to this WhatsApp Business Account.');
const PLACEHOLDERS = /\{\{\d+\}\}/g;

function placeholders(text: unknown): number {
  return typeof text === 'string' ? new Set(text.match(PLACEHOLDERS) ?? []).size : 0;
}

export class FakeGraphApi {
  readonly requests: RecordedRequest[] = [];
  readonly templates = new Map<string, FakeTemplate>();
  readonly tokens = new Map<string, FakeToken>();
  readonly wabas = new Map<string, { phoneNumbers: Map<string, FakePhoneNumber>; subscribedApps: Set<string> }>();
  readonly #failures = new Map<FakeRoute, FakeAnswer[]>();
  #server = createServer((request, response) => void this.#handle(request, response));
  #templateCount = 0;
  url = '';
  /** How long a send is held before its answer (a provider's latency: submissions in flight). */
  sendLatencyMs = 0;

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** A business phone number of a WABA (created on first use), with Meta's default fields. */
  addPhoneNumber(waba: string, id: string, fields: Partial<FakePhoneNumber> = {}): FakePhoneNumber {
    const account = this.#waba(waba);
    const number: FakePhoneNumber = {
      id,
      display_phone_number: `+1 555-010-${id.slice(-4)}`,
      verified_name: 'Acme Inc.',
      quality_rating: 'GREEN',
      throughput: { level: 'STANDARD' },
      ...fields,
    };
    account.phoneNumbers.set(id, number);
    return number;
  }

  phoneNumber(id: string): FakePhoneNumber | undefined {
    for (const account of this.wabas.values()) if (account.phoneNumbers.has(id)) return account.phoneNumbers.get(id);
    return undefined;
  }

  subscribed(waba: string): boolean {
    return this.wabas.get(waba)?.subscribedApps.has(FAKE_APP_ID) ?? false;
  }

  /** The next calls of `route` are answered with these, in order, before it behaves again. */
  failNext(route: FakeRoute, ...answers: FakeAnswer[]): void {
    this.#failures.set(route, [...(this.#failures.get(route) ?? []), ...answers]);
  }

  /** Meta's review of a template, or a later change (what its webhook then reports). */
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

  of(route: FakeRoute): RecordedRequest[] {
    return this.requests.filter((request) => this.#routeOf(request) === route);
  }

  #waba(id: string) {
    let account = this.wabas.get(id);
    if (!account) this.wabas.set(id, (account = { phoneNumbers: new Map(), subscribedApps: new Set() }));
    return account;
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
    if (this.sendLatencyMs > 0 && this.#routeOf(recorded) === 'send') {
      await new Promise((resolve) => setTimeout(resolve, this.sendLatencyMs));
    }
    response.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
    response.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
  }

  #parts(request: RecordedRequest): [string, string | undefined] | undefined {
    const match = /^\/v\d+\.\d+\/([^/]+)(?:\/([^/]+))?$/.exec(request.path);
    return match ? [match[1]!, match[2]] : undefined;
  }

  #routeOf(request: RecordedRequest): FakeRoute | undefined {
    const parts = this.#parts(request);
    if (!parts) return undefined;
    const [node, edge] = parts;
    const { method } = request;
    if (method === 'POST' && edge === 'messages') return 'send';
    if (method === 'GET' && node === 'debug_token' && edge === undefined) return 'debug_token';
    if (edge === 'phone_numbers' && method === 'GET') return 'phone_numbers';
    if (edge === 'subscribed_apps') return method === 'POST' ? 'subscribe' : method === 'GET' ? 'subscribed_apps' : undefined;
    if (edge === 'message_templates') {
      if (method === 'POST') return 'create_template';
      if (method === 'GET') return 'list_templates';
      if (method === 'DELETE') return 'delete_template';
    }
    // A node read by id is a template or, failing that, a phone number (both answer "no such object").
    if (method === 'GET' && edge === undefined) return this.templates.has(node) ? 'get_template' : 'phone_number';
    return undefined;
  }

  #answer(request: RecordedRequest): FakeAnswer {
    const route = this.#routeOf(request);
    if (!route) return graphError(400, 100, 'Invalid parameter', `Unsupported ${request.method} request to ${request.path}`);
    const failure = this.#failures.get(route)?.shift();
    if (failure) return failure;
    const value = /^Bearer (.+)$/.exec(request.authorization ?? '')?.[1];
    const token = value === undefined ? undefined : this.tokens.get(value);
    if (value === undefined || token === undefined) {
      return graphError(401, 190, 'Error validating access token', 'The access token has expired or is invalid.');
    }
    const [node] = this.#parts(request)!;
    const reaches = (waba: string) => token.wabas.includes(waba) && this.wabas.has(waba);
    // A WABA that does not exist is "no such object"; one the token was not given, a permission error.
    const refused = (waba: string, scope?: string) => {
      if (!this.wabas.has(waba)) return noSuchObject(waba);
      if (!token.wabas.includes(waba) || (scope !== undefined && !token.scopes.includes(scope))) return PERMISSION_DENIED();
      return undefined;
    };
    switch (route) {
      case 'debug_token':
        return this.#debugToken(request.query.get('input_token'), value);
      case 'phone_number': {
        const waba = this.#wabaOfNumber(node);
        if (waba === undefined || !reaches(waba)) return noSuchObject(node);
        return { status: 200, body: this.phoneNumber(node) };
      }
      case 'send': {
        const waba = this.#wabaOfNumber(node);
        if (waba === undefined || !reaches(waba) || !token.scopes.includes(MESSAGING)) return noSuchObject(node);
        return this.#send(waba, request.body);
      }
      case 'phone_numbers':
        return refused(node) ?? this.#phoneNumbers(node, request.query);
      case 'subscribe':
        if (refused(node, MANAGEMENT)) return refused(node, MANAGEMENT)!;
        this.wabas.get(node)!.subscribedApps.add(FAKE_APP_ID);
        return { status: 200, body: { success: true } };
      case 'subscribed_apps':
        if (refused(node)) return refused(node)!;
        return {
          status: 200,
          body: { data: [...this.wabas.get(node)!.subscribedApps].map((id) => ({ whatsapp_business_api_data: { id, name: 'svc test app' } })) },
        };
      case 'create_template':
        return refused(node, MANAGEMENT) ?? this.#createTemplate(node, request.body);
      case 'list_templates': {
        if (refused(node)) return refused(node)!;
        const name = request.query.get('name');
        const data = [...this.templates.values()].filter((template) => template.waba === node && (name === null || template.name === name));
        return { status: 200, body: { data: data.map(({ waba: _waba, ...template }) => template), paging: { cursors: { before: 'MAZDZD', after: 'MjQZD' } } } };
      }
      case 'delete_template':
        return refused(node, MANAGEMENT) ?? this.#deleteTemplate(node, request.query);
      case 'get_template': {
        const template = this.templates.get(node);
        if (!template || !reaches(template.waba)) return noSuchObject(node);
        const { waba: _waba, ...shown } = template;
        return { status: 200, body: shown };
      }
    }
  }

  #wabaOfNumber(id: string): string | undefined {
    for (const [waba, account] of this.wabas) if (account.phoneNumbers.has(id)) return waba;
    return undefined;
  }

  #debugToken(input: string | null, caller: string): FakeAnswer {
    const token = input === null ? undefined : this.tokens.get(input);
    if (input === null || token === undefined) {
      return { status: 200, body: { data: { app_id: FAKE_APP_ID, is_valid: false, scopes: [], granular_scopes: [] } } };
    }
    return {
      status: 200,
      body: {
        data: {
          app_id: FAKE_APP_ID,
          type: token.type,
          application: 'svc test app',
          data_access_expires_at: 0,
          expires_at: 0,
          is_valid: input === caller || this.tokens.has(caller),
          issued_at: 1712099387,
          scopes: token.scopes,
          granular_scopes: token.granular_scopes,
          user_id: '104169029247128',
        },
      },
    };
  }

  /** Paged like Meta: `limit` per page, an `after` cursor, and `paging.next` while more follow. */
  #phoneNumbers(waba: string, query: URLSearchParams): FakeAnswer {
    const all = [...this.wabas.get(waba)!.phoneNumbers.values()];
    const limit = Math.min(Number(query.get('limit') ?? 25), 100);
    const start = query.get('after') === null ? 0 : Number(Buffer.from(query.get('after')!, 'base64url').toString());
    const page = all.slice(start, start + limit);
    const more = start + limit < all.length;
    const after = Buffer.from(String(start + limit)).toString('base64url');
    return {
      status: 200,
      body: {
        data: page.map((number) => ({ id: number.id, display_phone_number: number.display_phone_number })),
        paging: { cursors: { before: 'QVFIUk', after }, ...(more && { next: `https://graph.facebook.com/next?after=${after}` }) },
      },
    };
  }

  #send(waba: string, body: any): FakeAnswer {
    if (body?.messaging_product !== 'whatsapp' || body?.type !== 'template' || typeof body?.to !== 'string') {
      return graphError(400, 131009, 'Parameter value is not valid', 'messaging_product, to and type are required');
    }
    const template = [...this.templates.values()].find(
      (candidate) => candidate.waba === waba && candidate.name === body.template?.name && candidate.language === body.template?.language?.code,
    );
    if (template?.status === 'PAUSED') return graphError(400, 132015, 'Template is Paused', 'Template is paused due to low quality.');
    if (template?.status === 'DISABLED') return graphError(400, 132016, 'Template is Disabled', 'Template is disabled due to low quality.');
    if (!template || template.status !== 'APPROVED') {
      return graphError(
        404,
        132001,
        'Template name does not exist in the translation',
        `template name (${body.template?.name}) does not exist in ${body.template?.language?.code}`,
      );
    }
    const given = (type: string) => (body.template.components ?? []).find((component: any) => component.type === type);
    const expected = (type: string) => placeholders(template.components.find((component) => component.type === type)?.text);
    if (expected('HEADER') !== (given('header')?.parameters?.length ?? 0) || expected('BODY') !== (given('body')?.parameters?.length ?? 0)) {
      return graphError(400, 132000, 'Number of parameters does not match the expected number of params', 'parameter count mismatch');
    }
    if (template.category === 'AUTHENTICATION') {
      // The one-time password twice: in the body and in the OTP (URL) button, index 0.
      const button = given('button');
      const code = given('body')?.parameters?.[0]?.text;
      if (button?.sub_type !== 'url' || button?.index !== '0' || button?.parameters?.[0]?.text !== code) {
        return graphError(400, 131008, 'Required parameter is missing', 'The OTP button needs the code as its parameter (sub_type url, index 0).');
      }
      if (typeof code !== 'string' || code.length > 15) return graphError(400, 131009, 'Parameter value is not valid', 'The code is at most 15 characters.');
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

  /** Meta's rules for a new template, the ones a fake can check: examples, and the authentication model. */
  #templateProblem(body: any): string | undefined {
    const components: any[] = body.components;
    if (body.category === 'AUTHENTICATION') {
      const bodyComponent = components.find((component) => component.type === 'BODY');
      if (!bodyComponent || bodyComponent.text !== undefined) return 'An authentication template body takes no text: its wording is preset.';
      if (components.some((component) => component.type === 'HEADER')) return 'Authentication templates have no header.';
      const footer = components.find((component) => component.type === 'FOOTER');
      if (footer && (footer.text !== undefined || !(footer.code_expiration_minutes >= 1 && footer.code_expiration_minutes <= 90))) {
        return 'An authentication template footer takes code_expiration_minutes (1–90) only.';
      }
      const button = components.find((component) => component.type === 'BUTTONS')?.buttons?.[0];
      if (button?.type !== 'OTP' || !['COPY_CODE', 'ONE_TAP'].includes(String(button.otp_type).toUpperCase())) {
        return 'An authentication template needs one OTP button (copy code or one tap).';
      }
      return undefined;
    }
    for (const component of components) {
      const count = placeholders(component.text);
      if (component.type === 'HEADER' && count > 0 && component.example?.header_text?.length !== count) return 'The header needs an example.';
      if (component.type === 'BODY' && count > 0 && component.example?.body_text?.[0]?.length !== count) {
        return 'The body needs one example value per variable.';
      }
    }
    return undefined;
  }

  #createTemplate(waba: string, body: any): FakeAnswer {
    if (typeof body?.name !== 'string' || typeof body?.language !== 'string' || !Array.isArray(body?.components)) {
      return graphError(400, 100, 'Invalid parameter', 'name, language and components are required');
    }
    const problem = this.#templateProblem(body);
    if (problem) return graphError(400, 100, 'Invalid parameter', problem);
    if ([...this.templates.values()].some((template) => template.waba === waba && template.name === body.name && template.language === body.language)) {
      return graphError(400, 100, 'Invalid parameter', 'Content in this language already exists.');
    }
    const id = String(1_000_000_000_000_000n + BigInt(++this.#templateCount));
    const authentication = body.category === 'AUTHENTICATION';
    const components = authentication
      ? body.components.map((component: any) => {
          if (component.type === 'BODY') {
            const security = component.add_security_recommendation ? ' For your security, do not share this code.' : '';
            return { type: 'BODY', text: `*{{1}}* is your verification code.${security}`, ...component };
          }
          if (component.type === 'FOOTER') return { type: 'FOOTER', text: `This code expires in ${component.code_expiration_minutes} minutes.`, ...component };
          return { type: 'BUTTONS', buttons: [{ type: 'URL', text: 'Copy code', url: 'https://www.whatsapp.com/otp/code/?otp_type=COPY_CODE&code=otp{{1}}' }] };
        })
      : body.components;
    this.templates.set(id, {
      id,
      waba,
      name: body.name,
      language: body.language,
      category: body.category,
      status: 'PENDING',
      rejected_reason: 'NONE',
      components,
    });
    return { status: 200, body: { id, status: 'PENDING', category: body.category } };
  }

  #deleteTemplate(waba: string, query: URLSearchParams): FakeAnswer {
    const id = query.get('hsm_id');
    const name = query.get('name');
    if (name === null) return graphError(400, 100, 'Invalid parameter', 'name is required');
    const matching = [...this.templates.values()].filter(
      (template) => template.waba === waba && template.name === name && (id === null || template.id === id),
    );
    if (matching.length === 0) return graphError(400, 100, 'Invalid parameter', `Message template "${name}" does not exist.`);
    if (matching.some((template) => template.status === 'DISABLED')) {
      return graphError(400, 100, 'Invalid parameter', 'Templates in a disabled status cannot be deleted.');
    }
    for (const template of matching) this.templates.delete(template.id);
    return { status: 200, body: { success: true } };
  }
}

export async function startFakeGraphApi(): Promise<FakeGraphApi> {
  return new FakeGraphApi().start();
}
