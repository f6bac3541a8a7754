import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_GRAPH_VERSION } from '../../src/providers/whatsapp/graphVersions.ts';

// A fake of the parts of Meta's Graph API (WhatsApp Cloud API) that svc calls, built from Meta's
// reference: POST /{phone-number-id}/messages, GET /{phone-number-id}, GET /debug_token,
// GET /{waba-id}/phone_numbers, POST|GET /{waba-id}/subscribed_apps, POST|GET|DELETE
// /{waba-id}/message_templates, GET /{template-id}, and the Resumable Upload API (POST
// /{app-id}/uploads, POST /upload:{id}) that gives a media sample's handle. It models what a real customer meets:
// the kinds of token (system user: scopes without target_ids; Embedded Signup business token:
// its WABA under whatsapp_business_manage_events; user token: its WABAs under each scope), which
// WABAs a token may touch, the phone number's fields, the app's webhook subscription, Meta's
// authentication-template model, template deletion, and errors in Graph's shape — without
// `error_subcode`, which Meta stopped returning in v16. It records every request and can be told
// to fail the next calls of a route. Rich templates follow Meta's component reference: media and
// location headers, buttons (QUICK_REPLY, URL with a {{1}} suffix, PHONE_NUMBER, COPY_CODE),
// named parameters; and their sends are checked as Meta checks them (132012 for a header of the
// wrong kind, 132000 for parameters that do not match, 131008 for a missing button parameter).
// The Marketing Messages API (marketing-messages/send-marketing-messages, error-codes): POST
// /{phone-number-id}/marketing_messages takes /messages' payload plus `product_policy`
// (CLOUD_API_FALLBACK or STRICT), MARKETING templates only (134100), refuses a template still
// syncing with its ad account (134101) and, under STRICT, a business not onboarded (134102);
// under CLOUD_API_FALLBACK such a business's message goes through Cloud API instead.
// It serves one Graph API version (`apiVersion`, by default the
// one svc uses): a call to any other is refused, so svc and the fake never drift apart unnoticed.

export const FAKE_WABA_ID = '102290129340398';
export const OTHER_WABA_ID = '102290129340777';
export const FAKE_APP_ID = '670843887433847';

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  authorization: string | undefined;
  contentType: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  /** The raw bytes of a body that is not JSON (an upload). */
  bytes?: Buffer;
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
  parameter_format?: string;
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
  | 'marketing_send'
  | 'debug_token'
  | 'phone_number'
  | 'phone_numbers'
  | 'subscribe'
  | 'subscribed_apps'
  | 'create_template'
  | 'list_templates'
  | 'delete_template'
  | 'get_template'
  | 'upload_session'
  | 'upload'
  | 'pricing_analytics'
  | 'business_account';

/**
 * A data point of `pricing_analytics` (Meta's analytics reference): messages delivered in
 * [start, end) of one country, pricing type and category, and what they cost in the WABA's
 * currency. `tier` is present on charged utility and authentication points (0:MAX on marketing).
 */
export interface FakePricingPoint {
  start: number;
  end: number;
  country: string;
  pricing_type: 'REGULAR' | 'FREE_CUSTOMER_SERVICE' | 'FREE_ENTRY_POINT';
  pricing_category: string;
  volume: number;
  cost: number;
  tier?: string;
  phone_number?: string;
}

/** `pricing_analytics.start(…).end(…).granularity(…)[.dimensions(…)]`: the filters, or why they are refused. */
function pricingAnalyticsFilters(fields: string): { start: number; end: number; granularity: string; dimensions: string[] } | string {
  const filter = (name: string) => new RegExp(`\\.${name}\\(([^)]*)\\)`).exec(fields)?.[1];
  const start = Number(filter('start'));
  const end = Number(filter('end'));
  const granularity = filter('granularity');
  if (!Number.isInteger(start) || !Number.isInteger(end) || filter('start') === undefined || filter('end') === undefined) {
    return 'pricing_analytics requires start and end (UNIX timestamps)';
  }
  if (granularity === undefined || !['DAILY', 'HALF_HOUR', 'MONTHLY'].includes(granularity)) {
    return 'pricing_analytics requires granularity DAILY, HALF_HOUR or MONTHLY';
  }
  const dimensions = (filter('dimensions') ?? '').replace(/[[\]"\s]/g, '').split(',').filter(Boolean);
  return { start, end, granularity, dimensions };
}

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
const NAMED_PLACEHOLDERS = /\{\{([a-z0-9_]+)\}\}/g;

function placeholders(text: unknown): number {
  return typeof text === 'string' ? new Set(text.match(PLACEHOLDERS) ?? []).size : 0;
}

function namedPlaceholders(text: unknown): string[] {
  return typeof text === 'string' ? [...new Set([...text.matchAll(NAMED_PLACEHOLDERS)].map((match) => match[1]!))] : [];
}

/** The file types Meta's Resumable Upload API takes. */
const UPLOAD_TYPES = ['application/pdf', 'image/jpeg', 'image/jpg', 'image/png', 'video/mp4'];
const MEDIA_FORMATS = ['IMAGE', 'VIDEO', 'DOCUMENT'];

function sorted(values: string[]): string {
  return [...values].sort().join(',');
}

export class FakeGraphApi {
  readonly requests: RecordedRequest[] = [];
  readonly templates = new Map<string, FakeTemplate>();
  readonly tokens = new Map<string, FakeToken>();
  readonly wabas = new Map<string, { phoneNumbers: Map<string, FakePhoneNumber>; subscribedApps: Set<string> }>();
  readonly #failures = new Map<FakeRoute, FakeAnswer[]>();
  #server = createServer((request, response) => void this.#handle(request, response));
  #templateCount = 0;
  /** Upload sessions by id ("upload:…"), and the handles given for uploaded files. */
  readonly uploads = new Map<string, { fileLength: number; fileType: string; handle?: string; bytes?: Buffer }>();
  url = '';
  /** The Graph API version served; any other is "unknown path components". */
  apiVersion = DEFAULT_GRAPH_VERSION;
  /**
   * Business portfolio pacing (templates/portfolio-pacing): while on, template sends are taken
   * but held, answered with `message_status: held_for_quality_assessment`; their wamids are in
   * `held` (Meta later releases them with a `sent` status, or drops them with a `failed` 132015).
   */
  portfolioPacing = false;
  readonly held: string[] = [];
  /** How long a send is held before its answer (a provider's latency: submissions in flight). */
  sendLatencyMs = 0;
  /** Whether the business is onboarded to the Marketing Messages API (else STRICT sends fail 134102). */
  marketingMessagesOnboarded = true;
  /** Templates (Meta ids) still syncing with the ad account: /marketing_messages answers 134101. */
  readonly syncingTemplates = new Set<string>();
  /** Wamids of messages the Marketing Messages API sent (their statuses would say marketing_lite); the rest went by Cloud API. */
  readonly marketingLite = new Set<string>();

  /** What Meta's pricing_analytics says each WABA was charged (tests fill it, as Meta's billing would). */
  readonly pricing = new Map<string, FakePricingPoint[]>();
  /** Data points per page of a pricing_analytics answer; more follow behind `paging.next`, as the Graph API pages lists. */
  pricingPageSize = 1000;
  /** Each WABA's billing currency (GET /{waba-id}?fields=currency); USD unless a test sets another. */
  readonly currencies = new Map<string, string>();

  /**
   * GET /{waba-id}?fields=pricing_analytics…: the WABA's data points starting in [start, end),
   * newest first as Meta lists them, in one `data` entry; without the TIER dimension, no `tier`.
   */
  #pricingAnalytics(waba: string, query: URLSearchParams): FakeAnswer {
    const fields = query.get('fields')!;
    const filters = pricingAnalyticsFilters(fields);
    if (typeof filters === 'string') return graphError(400, 100, 'Invalid parameter', filters);
    const points = (this.pricing.get(waba) ?? [])
      .filter((point) => point.start >= filters.start && point.start < filters.end)
      .sort((a, b) => b.start - a.start)
      .map(({ tier, phone_number, ...point }) => ({
        ...point,
        ...(filters.dimensions.includes('TIER') && tier !== undefined && { tier }),
        ...(filters.dimensions.includes('PHONE') && phone_number !== undefined && { phone_number }),
      }));
    // Paged like any Graph API list: cursors, and `next` (the same request from the next cursor) while more follow.
    const from = query.get('after') === null ? 0 : Number(Buffer.from(query.get('after')!, 'base64url').toString());
    const page = points.slice(from, from + this.pricingPageSize);
    const after = Buffer.from(String(from + this.pricingPageSize)).toString('base64url');
    const more = from + this.pricingPageSize < points.length;
    const next = `https://graph.facebook.com/${this.apiVersion}/${waba}?${new URLSearchParams({ fields, after, access_token: 'EAAG-in-the-link' })}`;
    const paging = { cursors: { before: 'MAZDZD', after }, ...(more && { next }) };
    return { status: 200, body: { pricing_analytics: { data: [{ data_points: page }], paging }, id: waba } };
  }

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

  /** Requests to the Marketing Messages API. */
  marketingSends(): RecordedRequest[] {
    return this.of('marketing_send');
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
    const raw = Buffer.concat(chunks);
    const text = raw.toString('utf8');
    const url = new URL(request.url ?? '/', 'http://fake');
    const json = request.headers['content-type']?.startsWith('application/json') ?? false;
    const recorded: RecordedRequest = {
      method: request.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      authorization: request.headers.authorization,
      contentType: request.headers['content-type'],
      headers: request.headers,
      body: text === '' || !json ? undefined : JSON.parse(text),
      ...(!json && raw.length > 0 && { bytes: raw }),
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
    const match = /^\/(v\d+\.\d+)\/([^/]+)(?:\/([^/]+))?$/.exec(request.path);
    return match && match[1] === this.apiVersion ? [match[2]!, match[3]] : undefined;
  }

  #routeOf(request: RecordedRequest): FakeRoute | undefined {
    const parts = this.#parts(request);
    if (!parts) return undefined;
    const [node, edge] = parts;
    const { method } = request;
    if (method === 'POST' && edge === 'messages') return 'send';
    if (method === 'POST' && edge === 'marketing_messages') return 'marketing_send';
    if (method === 'POST' && edge === 'uploads') return 'upload_session';
    if (method === 'POST' && edge === undefined && node.startsWith('upload:')) return 'upload';
    if (method === 'GET' && node === 'debug_token' && edge === undefined) return 'debug_token';
    if (edge === 'phone_numbers' && method === 'GET') return 'phone_numbers';
    if (edge === 'subscribed_apps') return method === 'POST' ? 'subscribe' : method === 'GET' ? 'subscribed_apps' : undefined;
    if (edge === 'message_templates') {
      if (method === 'POST') return 'create_template';
      if (method === 'GET') return 'list_templates';
      if (method === 'DELETE') return 'delete_template';
    }
    if (method === 'GET' && edge === undefined && request.query.get('fields')?.startsWith('pricing_analytics')) return 'pricing_analytics';
    if (method === 'GET' && edge === undefined && this.wabas.has(node)) return 'business_account';
    // A node read by id is a template or, failing that, a phone number (both answer "no such object").
    if (method === 'GET' && edge === undefined) return this.templates.has(node) ? 'get_template' : 'phone_number';
    return undefined;
  }

  #answer(request: RecordedRequest): FakeAnswer {
    const route = this.#routeOf(request);
    if (!route) return graphError(400, 100, 'Invalid parameter', `Unsupported ${request.method} request to ${request.path}`);
    const failure = this.#failures.get(route)?.shift();
    if (failure) return failure;
    // The upload of a file's bytes authenticates with `OAuth {token}` (Meta's Resumable Upload API).
    const scheme = route === 'upload' ? 'OAuth' : 'Bearer';
    const value = new RegExp(`^${scheme} (.+)$`).exec(request.authorization ?? '')?.[1];
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
      case 'marketing_send': {
        const waba = this.#wabaOfNumber(node);
        if (waba === undefined || !reaches(waba) || !token.scopes.includes(MESSAGING)) return noSuchObject(node);
        return this.#marketingSend(waba, request.body);
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
      case 'upload_session':
        return this.#uploadSession(node, request.query);
      case 'upload':
        return this.#upload(node, request);
      case 'pricing_analytics':
        return refused(node) ?? this.#pricingAnalytics(node, request.query);
      case 'business_account': {
        // The WhatsApp Business Account node: the fields asked for (Meta's reference lists currency, name, timezone_id, …).
        if (refused(node)) return refused(node)!;
        const known: Record<string, unknown> = { name: 'Acme WABA', currency: this.currencies.get(node) ?? 'USD', timezone_id: '1' };
        const asked = (request.query.get('fields') ?? 'name').split(',').filter((field) => field in known);
        return { status: 200, body: { id: node, ...Object.fromEntries(asked.map((field) => [field, known[field]])) } };
      }
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
    // A phone number in `to`, or (2026) a business-scoped user id in `recipient`; `to` wins when both are given.
    const phone = typeof body?.to === 'string' ? body.to : undefined;
    const bsuid = phone === undefined && typeof body?.recipient === 'string' ? body.recipient : undefined;
    if (body?.messaging_product !== 'whatsapp' || body?.type !== 'template' || (phone === undefined && bsuid === undefined)) {
      return graphError(400, 131009, 'Parameter value is not valid', 'messaging_product, to (or recipient) and type are required');
    }
    if (bsuid !== undefined && !/^[A-Z]{2}\.(?:ENT\.)?[A-Za-z0-9]{1,128}$/.test(bsuid)) {
      return graphError(400, 100, 'Invalid parameter', `recipient ${bsuid} is not a business-scoped user id`);
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
    const rich = this.#richSendProblem(template, body.template.components ?? []);
    if (rich) return rich;
    const expected = (type: string) => placeholders(template.components.find((component) => component.type === type)?.text);
    const mediaHeader = template.components.some((component) => component.type === 'HEADER' && component.format !== undefined && component.format !== 'TEXT');
    const named = (template as any).parameter_format === 'NAMED';
    if (
      (!mediaHeader && !named && expected('HEADER') !== (given('header')?.parameters?.length ?? 0)) ||
      (!named && expected('BODY') !== (given('body')?.parameters?.length ?? 0))
    ) {
      return graphError(400, 132000, 'Number of parameters does not match the expected number of params', 'parameter count mismatch');
    }
    if (template.category === 'AUTHENTICATION' && bsuid !== undefined) {
      return graphError(400, 131062, 'Business-scoped User ID recipients are not supported for this message.', "You can only send authentication messages to recipients' phone numbers, not their business-scoped user IDs.");
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
    const id = `wamid.${randomBytes(16).toString('base64url')}`;
    if (this.portfolioPacing) this.held.push(id);
    return {
      status: 200,
      body: {
        messaging_product: 'whatsapp',
        contacts: [phone === undefined ? { input: bsuid, user_id: bsuid } : { input: phone, wa_id: phone.replace(/^\+/, '') }],
        messages: [{ id, message_status: this.portfolioPacing ? 'held_for_quality_assessment' : 'accepted' }],
      },
    };
  }

  /** POST /{phone-number-id}/marketing_messages: MARKETING templates only, by the product policy. */
  #marketingSend(waba: string, body: any): FakeAnswer {
    if (body?.type !== 'template') {
      return graphError(400, 100, 'Invalid parameter', 'Message must be a template message.');
    }
    const policy = body.product_policy;
    if (policy !== undefined && policy !== 'CLOUD_API_FALLBACK' && policy !== 'STRICT') {
      return graphError(400, 100, 'Invalid parameter', `product_policy must be CLOUD_API_FALLBACK or STRICT, not ${String(policy)}`);
    }
    const template = [...this.templates.values()].find(
      (candidate) => candidate.waba === waba && candidate.name === body.template?.name && candidate.language === body.template?.language?.code,
    );
    if (template && template.category !== 'MARKETING') {
      return graphError(400, 134100, 'Only marketing messages supported', "You're only able to send marketing messages on this API.");
    }
    if (template && this.syncingTemplates.has(template.id)) {
      return graphError(
        400,
        134101,
        'Your template is still syncing',
        'When you send a message from a template, the template syncing process can take up to 10 minutes to complete. Wait a few minutes, and then try sending your message again.',
      );
    }
    if (!this.marketingMessagesOnboarded && policy === 'STRICT') {
      return graphError(500, 134102, 'Template unavailable for use', 'Please check your eligibility status to ensure you are onboarded or contact Meta\'s customer support.');
    }
    const { product_policy: _policy, ...payload } = body;
    const answer = this.#send(waba, payload);
    const id = (answer.body as any)?.messages?.[0]?.id;
    if (answer.status === 200 && typeof id === 'string' && this.marketingMessagesOnboarded) this.marketingLite.add(id);
    return answer;
  }

  /** POST /{app-id}/uploads?file_length=&file_type=: a session for one file, `{ id: "upload:…" }`. */
  #uploadSession(appId: string, query: URLSearchParams): FakeAnswer {
    if (appId !== FAKE_APP_ID) return noSuchObject(appId);
    const fileLength = Number(query.get('file_length'));
    const fileType = query.get('file_type') ?? '';
    if (!Number.isInteger(fileLength) || fileLength <= 0) return graphError(400, 100, 'Invalid parameter', 'file_length is required');
    if (!UPLOAD_TYPES.includes(fileType)) return graphError(400, 100, 'Invalid parameter', `file_type ${fileType} is not supported`);
    const id = `upload:${Buffer.from(`session-${this.uploads.size + 1}`).toString('base64url')}`;
    this.uploads.set(id, { fileLength, fileType });
    return { status: 200, body: { id: `${id}?sig=ARZ${randomBytes(6).toString('hex')}` } };
  }

  /** POST /upload:{id} with `file_offset: 0` and the bytes: `{ h }`, the handle a template's example takes. */
  #upload(id: string, request: RecordedRequest): FakeAnswer {
    const session = this.uploads.get(id);
    if (!session || !request.query.get('sig')) return noSuchObject(id);
    if (request.headers.file_offset !== '0') return graphError(400, 100, 'Invalid parameter', 'file_offset must be 0 for a new upload');
    if (request.bytes?.length !== session.fileLength) return graphError(400, 100, 'Invalid parameter', 'The file is not file_length bytes long');
    session.bytes = request.bytes;
    session.handle = `4::${Buffer.from(`${id}:${randomBytes(4).toString('hex')}`).toString('base64')}`;
    return { status: 200, body: { h: session.handle } };
  }

  /** Meta's rules for the components beyond text: media and location headers, buttons, named parameters. */
  #richTemplateProblem(body: any): string | undefined {
    const components: any[] = body.components;
    const named = body.parameter_format === 'NAMED';
    for (const component of components) {
      if (component.type === 'HEADER' && MEDIA_FORMATS.includes(component.format)) {
        const handle = component.example?.header_handle;
        if (!Array.isArray(handle) || handle.length !== 1 || typeof handle[0] !== 'string' || handle[0] === '') {
          return `A ${component.format} header needs example.header_handle with one handle.`;
        }
        if (component.text !== undefined) return 'A media header has no text.';
      }
      if (component.type === 'HEADER' && component.format === 'LOCATION' && (component.text !== undefined || component.example !== undefined)) {
        return 'A location header has no text or example.';
      }
      if (named && (component.type === 'BODY' || (component.type === 'HEADER' && component.format === 'TEXT'))) {
        const names = namedPlaceholders(component.text);
        const key = component.type === 'BODY' ? 'body_text_named_params' : 'header_text_named_params';
        const given = (component.example?.[key] ?? []).map((param: any) => param.param_name);
        if (names.length > 0 && sorted(names) !== sorted(given)) return `The ${component.type.toLowerCase()} needs ${key} for ${names.join(', ')}.`;
      }
      if (component.type === 'BUTTONS') {
        const buttons: any[] = component.buttons ?? [];
        const count = (type: string) => buttons.filter((button) => button.type === type).length;
        if (buttons.length > 10 || count('URL') > 2 || count('PHONE_NUMBER') > 1 || count('COPY_CODE') > 1) return 'Too many buttons.';
        for (const button of buttons) {
          if (button.type === 'URL' && /\{\{1\}\}$/.test(button.url) && !(Array.isArray(button.example) && button.example.length === 1)) {
            return 'A URL button with a variable needs an example.';
          }
          if (button.type === 'COPY_CODE' && typeof button.example !== 'string') return 'A copy code button needs an example.';
          if (button.type === 'PHONE_NUMBER' && typeof button.phone_number !== 'string') return 'A phone number button needs phone_number.';
        }
      }
    }
    return undefined;
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
    const rich = this.#richTemplateProblem(body);
    if (rich) return rich;
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
      ...(body.parameter_format !== undefined && { parameter_format: body.parameter_format }),
    });
    return { status: 200, body: { id, status: 'PENDING', category: body.category } };
  }

  /** A rich template's send, checked as Meta does: the header's kind, named parameters, button parameters. */
  #richSendProblem(template: FakeTemplate, components: any[]): FakeAnswer | undefined {
    const given = (type: string) => components.find((component: any) => component.type === type);
    const header = template.components.find((component) => component.type === 'HEADER');
    const format = header?.format ?? 'TEXT';
    if (format !== 'TEXT') {
      const parameter = given('header')?.parameters?.[0];
      const kind = format.toLowerCase();
      const ok =
        format === 'LOCATION'
          ? typeof parameter?.location?.latitude === 'number' && typeof parameter?.location?.longitude === 'number'
          : parameter?.type === kind && typeof parameter?.[kind]?.link === 'string';
      if (!ok || given('header').parameters.length !== 1) {
        return graphError(400, 132012, 'Parameter format does not match format in the created template', `header: Format mismatch, expected ${format}, received ${String(parameter?.type ?? 'UNKNOWN').toUpperCase()}`);
      }
    }
    if ((template as any).parameter_format === 'NAMED') {
      for (const type of ['HEADER', 'BODY']) {
        const names = namedPlaceholders(template.components.find((component) => component.type === type && (component.format ?? 'TEXT') === 'TEXT')?.text);
        const sent = (given(type.toLowerCase())?.parameters ?? []).map((parameter: any) => parameter.parameter_name);
        if (sorted(names) !== sorted(sent)) {
          return graphError(400, 132000, 'Number of parameters does not match the expected number of params', `${type.toLowerCase()}: named parameters ${names.join(', ')} expected`);
        }
      }
    }
    if (template.category === 'AUTHENTICATION') return undefined;
    const buttons: any[] = template.components.find((component) => component.type === 'BUTTONS')?.buttons ?? [];
    const sentButtons = components.filter((component: any) => component.type === 'button');
    for (const sent of sentButtons) {
      const button = buttons[Number(sent.index)];
      const subType = button?.type === 'URL' ? 'url' : button?.type === 'QUICK_REPLY' ? 'quick_reply' : button?.type === 'COPY_CODE' ? 'copy_code' : undefined;
      if (typeof sent.index !== 'string' || subType === undefined || sent.sub_type !== subType) {
        return graphError(400, 131009, 'Parameter value is not valid', `button at index ${sent.index}: no ${sent.sub_type} button there`);
      }
    }
    for (const [index, button] of buttons.entries()) {
      const sent = sentButtons.find((component: any) => component.index === String(index));
      const parameter = sent?.parameters?.[0];
      if (button.type === 'URL' && /\{\{1\}\}$/.test(button.url) && !(parameter?.type === 'text' && typeof parameter.text === 'string')) {
        return graphError(400, 131008, 'Required parameter is missing', `button at index ${index} of type Url requires a parameter`);
      }
      if (button.type === 'COPY_CODE' && !(parameter?.type === 'coupon_code' && typeof parameter.coupon_code === 'string')) {
        return graphError(400, 131008, 'Required parameter is missing', `button at index ${index} of type Copy code requires a coupon_code parameter`);
      }
      if (button.type === 'QUICK_REPLY' && sent && parameter?.type !== 'payload') {
        return graphError(400, 131009, 'Parameter value is not valid', `button at index ${index}: a quick reply takes a payload`);
      }
    }
    return undefined;
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
