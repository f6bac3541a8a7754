import { OPERATION_EXAMPLES } from '../examples.ts';
import { pathValue } from '../codeSamples.ts';
import { escapeHtml, inline, json, markdown, slug } from './html.ts';
import { fieldList, isObject, type Json, refName, schemaAnchor, typeOf } from './schema.ts';

// The API reference (/docs) as one HTML page, rendered on the server from the served OpenAPI
// document: the introduction and authentication, every operation by tag (titled with its
// summary, a verb), its parameters and request body, every answer with its example, curl / SDK /
// CLI samples side by side and a "Try it" form; then the webhook events and the named schemas.
// Every operation's section has its operationId as id, for deep links (/docs/#sendMessage).
// The page works without its script; the script (reference/client.js) adds the tabs, the API
// key preset and "Try it".

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
/** Stands for the reader's own origin in samples; the page's script puts location.origin there. */
const BASE_URL = 'http://127.0.0.1:8080';
/** Stands for the reader's API key in samples until they type theirs (never a real one). */
export const PLACEHOLDER_API_KEY = 'svc_live_YOUR_API_KEY';

interface Operation {
  method: string;
  path: string;
  operation: Json;
  id: string;
}

export interface Assets {
  css: string;
  js: string;
  favicon: string;
}

const asArray = <T>(value: unknown): T[] => (Array.isArray(value) ? (value as T[]) : []);

/** A `$ref` within the document, followed (components/responses, components/parameters). */
function resolve(document: Json, node: unknown): Json {
  if (!isObject(node) || typeof node.$ref !== 'string' || !node.$ref.startsWith('#/')) return isObject(node) ? node : {};
  let target: unknown = document;
  for (const part of node.$ref.slice(2).split('/')) target = isObject(target) ? target[part] : undefined;
  return isObject(target) ? target : {};
}

/** Sample text with the base URL and the key placeholder marked for the script to fill in. */
function sampleHtml(source: string): string {
  return escapeHtml(source)
    .replaceAll(BASE_URL, `<span data-base>${BASE_URL}</span>`)
    .replaceAll(PLACEHOLDER_API_KEY, `<span data-key>${PLACEHOLDER_API_KEY}</span>`);
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The curl command of an operation, with its example path values, query and body. */
function curlSample(document: Json, { method, path, operation, id }: Operation): string {
  const examples = OPERATION_EXAMPLES[id] ?? {};
  const filled = path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(pathValue(path, name)));
  const query = examples.query ? `?${new URLSearchParams(examples.query)}` : '';
  const url = `${BASE_URL}${filled}${query}`;
  const lines = [`curl${method === 'get' ? '' : ` -X ${method.toUpperCase()}`} ${query ? shellQuote(url) : url}`];
  if (asArray(operation.security).length > 0) lines.push(`-H "Authorization: Bearer ${PLACEHOLDER_API_KEY}"`);
  const parameters = asArray<unknown>(operation.parameters).map((parameter) => resolve(document, parameter));
  if (parameters.some((parameter) => parameter.in === 'header' && String(parameter.name).toLowerCase() === 'idempotency-key')) {
    lines.push('-H "Idempotency-Key: order-1001-confirmation"');
  }
  const body = requestExample(operation);
  if (body !== undefined) lines.push('-H "Content-Type: application/json"', `-d ${shellQuote(JSON.stringify(body, null, 2))}`);
  return lines.join(' \\\n  ');
}

function requestExample(operation: Json): unknown {
  const body = isObject(operation.requestBody) && isObject(operation.requestBody.content) ? operation.requestBody.content['application/json'] : undefined;
  return isObject(body) ? body.example : undefined;
}

/** Tabs (buttons) over panels; without the script every panel shows, each under its label. */
function tabs(kind: string, panels: { key: string; label: string; body: string }[]): string {
  if (panels.length === 0) return '';
  const buttons = panels
    .map((panel, index) => `<button type="button" role="tab" data-tab="${escapeHtml(panel.key)}" aria-selected="${index === 0}">${escapeHtml(panel.label)}</button>`)
    .join('');
  const bodies = panels
    .map((panel, index) => `<div role="tabpanel" data-panel="${escapeHtml(panel.key)}" aria-label="${escapeHtml(panel.label)}"${index === 0 ? '' : ' hidden'}>${panel.body}</div>`)
    .join('');
  return `<div class="tabs" data-tabs="${kind}"><div role="tablist">${buttons}</div>${bodies}</div>`;
}

function samples(document: Json, op: Operation): string {
  const panels = [{ key: 'curl', label: 'curl', body: `<pre><code>${sampleHtml(curlSample(document, op))}</code></pre>` }];
  for (const sample of asArray<{ label: string; source: string }>(op.operation['x-codeSamples'])) {
    const key = sample.label === 'CLI' ? 'cli' : 'sdk';
    panels.push({ key, label: sample.label === 'CLI' ? 'CLI' : 'TypeScript SDK', body: `<pre><code>${sampleHtml(sample.source)}</code></pre>` });
  }
  return `<div class="block"><h4>Request</h4>${tabs('lang', panels)}</div>`;
}

/** Each answer's example(s), by status: `example`, or every one of `examples` by name. */
function responseExamples(document: Json, responses: [string, Json][]): string {
  const panels = responses.flatMap(([status, response]) => {
    const content = isObject(response.content) ? response.content : {};
    const media = Object.values(content).find(isObject);
    if (!media) return [{ key: status, label: status, body: `<p class="muted">${escapeHtml(String(response.description ?? ''))} (no body)</p>` }];
    const named = isObject(media.examples)
      ? Object.entries(media.examples).map(([name, example]) => [name, resolve(document, example).value] as const)
      : media.example !== undefined
        ? [['', media.example] as const]
        : [];
    if (named.length === 0) return [];
    const body = named.map(([name, value]) => `${name ? `<p class="example-name"><code>${escapeHtml(name)}</code></p>` : ''}<pre><code>${json(value)}</code></pre>`).join('');
    return [{ key: status, label: status, body }];
  });
  return panels.length === 0 ? '' : `<div class="block"><h4>Response examples</h4>${tabs('status', panels)}</div>`;
}

function parametersTable(parameters: Json[]): string {
  if (parameters.length === 0) return '';
  const rows = parameters.map(
    (parameter) =>
      `<li class="field"><div class="field-head"><code class="name">${escapeHtml(String(parameter.name))}</code> <span class="type">${typeOf(parameter.schema)}</span> <span class="in">${escapeHtml(String(parameter.in))}</span>${parameter.required ? ' <span class="required">required</span>' : ''}</div>${typeof parameter.description === 'string' ? `<p>${inline(parameter.description)}</p>` : ''}${isObject(parameter.schema) && Array.isArray(parameter.schema.enum) ? `<p class="limits">One of ${parameter.schema.enum.map((value) => `<code>${escapeHtml(String(value))}</code>`).join(', ')}.</p>` : ''}</li>`,
  );
  return `<h4>Parameters</h4><ul class="fields">${rows.join('')}</ul>`;
}

function responsesList(responses: [string, Json][]): string {
  const items = responses.map(([status, response]) => {
    const content = isObject(response.content) ? response.content : {};
    const [type, media] = Object.entries(content).find(([, value]) => isObject(value)) ?? [];
    const schema = isObject(media) ? media.schema : undefined;
    const name = refName(schema) ?? (isObject(schema) && schema.type === 'array' ? refName(schema.items) : undefined);
    const fields = schema !== undefined && name === undefined ? fieldList(schema) : '';
    return [
      `<li><span class="status status-${status[0]}xx">${escapeHtml(status)}</span> ${inline(String(response.description ?? ''))}`,
      schema !== undefined ? ` <span class="type">${typeOf(schema)}</span>` : '',
      type && !type.includes('json') ? ` <code>${escapeHtml(type)}</code>` : '',
      fields ? `<details><summary>Fields</summary>${fields}</details>` : '',
      '</li>',
    ].join('');
  });
  return `<h4>Responses</h4><ul class="responses">${items.join('')}</ul>`;
}

/** The "Try it" form: the path and query parameters, the body (its example), sent by the script. */
function tryIt(op: Operation, parameters: Json[]): string {
  if (!op.path.startsWith('/v1/') && !op.path.startsWith('/health')) return '';
  const examples = OPERATION_EXAMPLES[op.id] ?? {};
  const inputs = parameters
    .filter((parameter) => parameter.in === 'path' || parameter.in === 'query' || (parameter.in === 'header' && String(parameter.name).toLowerCase() === 'idempotency-key'))
    .map((parameter) => {
      const name = String(parameter.name);
      const value = parameter.in === 'path' ? pathValue(op.path, name) : (examples.query?.[name] ?? '');
      return `<label><span>${escapeHtml(name)} <small>${escapeHtml(String(parameter.in))}</small></span><input name="${escapeHtml(name)}" data-in="${escapeHtml(String(parameter.in))}" value="${escapeHtml(value)}"${parameter.required ? ' required' : ''} autocomplete="off"></label>`;
    });
  const body = requestExample(op.operation);
  const bodyInput = isObject(op.operation.requestBody)
    ? `<label><span>Body <small>JSON</small></span><textarea name="body" rows="8" spellcheck="false">${body === undefined ? '' : json(body)}</textarea></label>`
    : '';
  return [
    `<details class="try"><summary>Try it</summary><form class="try-form" data-method="${op.method.toUpperCase()}" data-path="${escapeHtml(op.path)}" data-auth="${asArray(op.operation.security).length > 0}">`,
    ...inputs,
    bodyInput,
    `<p class="muted">Sent from this page to this server${asArray(op.operation.security).length > 0 ? ' with the API key above' : ''}: it really happens.</p>`,
    `<button type="submit">Send ${op.method.toUpperCase()} request</button><output class="try-result" aria-live="polite"></output></form></details>`,
  ].join('');
}

function operationSection(document: Json, op: Operation): string {
  const { operation } = op;
  const parameters = asArray<unknown>(operation.parameters).map((parameter) => resolve(document, parameter));
  const responses = Object.entries(isObject(operation.responses) ? operation.responses : {}).map(([status, response]) => [status, resolve(document, response)] as [string, Json]);
  const requestBody = isObject(operation.requestBody) ? resolve(document, operation.requestBody) : undefined;
  const bodySchema = requestBody && isObject(requestBody.content) && isObject(requestBody.content['application/json']) ? requestBody.content['application/json'].schema : undefined;
  const open = asArray(operation.security).length === 0 && op.path.startsWith('/v1/');
  return [
    `<section class="operation" id="${escapeHtml(op.id)}" aria-labelledby="${escapeHtml(op.id)}-title">`,
    `<div class="describe"><h3 id="${escapeHtml(op.id)}-title"><a href="#${escapeHtml(op.id)}">${escapeHtml(String(operation.summary ?? op.id))}</a></h3>`,
    `<p class="endpoint"><span class="method method-${op.method}">${op.method.toUpperCase()}</span> <code>${escapeHtml(op.path)}</code>${open ? ' <span class="badge">no API key</span>' : ''}</p>`,
    markdown(typeof operation.description === 'string' ? operation.description : ''),
    parametersTable(parameters),
    bodySchema !== undefined ? `<h4>Request body</h4>${fieldList(bodySchema)}` : '',
    responsesList(responses),
    '</div><div class="examples">',
    samples(document, op),
    responseExamples(document, responses),
    tryIt(op, parameters),
    '</div></section>',
  ].join('');
}

function webhookSection(document: Json, name: string, item: Json): string {
  const operation = isObject(item.post) ? item.post : {};
  const id = String(operation.operationId ?? `webhook-${slug(name)}`);
  const parameters = asArray<unknown>(operation.parameters).map((parameter) => resolve(document, parameter));
  const body = isObject(operation.requestBody) && isObject(operation.requestBody.content) ? operation.requestBody.content['application/json'] : undefined;
  const schema = isObject(body) ? body.schema : undefined;
  const schemaName = refName(schema);
  const schemaNode = schemaName ? resolve(document, schema) : schema;
  return [
    `<section class="operation" id="${escapeHtml(id)}" aria-labelledby="${escapeHtml(id)}-title">`,
    `<div class="describe"><h3 id="${escapeHtml(id)}-title"><a href="#${escapeHtml(id)}">${escapeHtml(String(operation.summary ?? name))}</a></h3>`,
    `<p class="endpoint"><span class="method method-post">POST</span> <code>your callback URL</code> <code>${escapeHtml(name)}</code></p>`,
    markdown(typeof operation.description === 'string' ? operation.description : ''),
    parametersTable(parameters),
    schema !== undefined ? `<h4>Payload${schemaName ? ` (<a href="#${schemaAnchor(schemaName)}">${escapeHtml(schemaName)}</a>)` : ''}</h4>${fieldList(schemaNode)}` : '',
    '</div><div class="examples">',
    isObject(body) && body.example !== undefined ? `<div class="block"><h4>Payload example</h4><pre><code>${json(body.example)}</code></pre></div>` : '',
    '</div></section>',
  ].join('');
}

function operationsOf(document: Json): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(isObject(document.paths) ? document.paths : {})) {
    if (!isObject(item)) continue;
    for (const method of METHODS) {
      const operation = item[method];
      if (isObject(operation)) operations.push({ method, path, operation, id: String(operation.operationId ?? slug(`${method} ${path}`)) });
    }
  }
  return operations;
}

function authenticationSection(): string {
  return [
    '<section id="authentication" class="prose auth"><h2>Authentication</h2>',
    '<p>Send your API key as a bearer token: <code>Authorization: Bearer svc_live_…</code>. Every operation but “Create a project” needs one.</p>',
    '<form class="key-form" autocomplete="off"><label><span>API key</span>',
    `<input type="password" name="apiKey" id="api-key" placeholder="${PLACEHOLDER_API_KEY}" spellcheck="false" autocomplete="off"></label>`,
    '<button type="submit">Use this key</button> <button type="button" class="secondary" data-forget>Forget</button></form>',
    '<p class="muted key-state" aria-live="polite">Kept in this tab only (sessionStorage), never sent anywhere but this server. It fills the curl samples and “Try it”.</p>',
    '</section>',
  ].join('');
}

/** The whole page. */
export function renderReference(document: Json, assets: Assets): string {
  const info = isObject(document.info) ? document.info : {};
  const title = `${String(info.title ?? 'API')} API reference`;
  const operations = operationsOf(document);
  const declared = asArray<Json>(document.tags).map((tag) => String(tag.name));
  const used = [...new Set(operations.flatMap((op) => asArray<string>(op.operation.tags)))];
  const tags = [...declared.filter((tag) => used.includes(tag)), ...used.filter((tag) => !declared.includes(tag))];
  const untagged = operations.filter((op) => asArray(op.operation.tags).length === 0);
  const groups: [string, Operation[]][] = [
    ...tags.map((tag) => [tag, operations.filter((op) => asArray<string>(op.operation.tags)[0] === tag)] as [string, Operation[]]),
    ...(untagged.length > 0 ? [['Other', untagged] as [string, Operation[]]] : []),
  ].filter(([, ops]) => ops.length > 0);
  const tagDescription = (name: string) => asArray<Json>(document.tags).find((tag) => tag.name === name)?.description;
  const webhooks = Object.entries(isObject(document.webhooks) ? document.webhooks : {}).filter((entry): entry is [string, Json] => isObject(entry[1]));
  const schemas = Object.entries(isObject(document.components) && isObject(document.components.schemas) ? document.components.schemas : {});

  const nav = [
    '<ul><li><a href="#introduction">Introduction</a></li><li><a href="#authentication">Authentication</a></li></ul>',
    ...groups.map(
      ([tag, ops]) =>
        `<h2><a href="#tag-${slug(tag)}">${escapeHtml(tag)}</a></h2><ul>${ops.map((op) => `<li><a href="#${escapeHtml(op.id)}"><span class="method method-${op.method}">${op.method === 'delete' ? 'DEL' : op.method.toUpperCase()}</span> ${escapeHtml(String(op.operation.summary ?? op.id))}</a></li>`).join('')}</ul>`,
    ),
    webhooks.length > 0
      ? `<h2><a href="#webhook-events">Webhook events</a></h2><ul>${webhooks.map(([name, item]) => `<li><a href="#${escapeHtml(String((item.post as Json | undefined)?.operationId ?? `webhook-${slug(name)}`))}">${escapeHtml(name)}</a></li>`).join('')}</ul>`
      : '',
    schemas.length > 0 ? '<h2><a href="#schemas">Schemas</a></h2>' : '',
  ].join('');

  const main = [
    `<section id="introduction" class="prose"><h1>${escapeHtml(title)}</h1>`,
    typeof info.summary === 'string' ? `<p class="lead">${inline(info.summary)}</p>` : '',
    markdown(typeof info.description === 'string' ? info.description : ''),
    '<p>The same calls in code: the TypeScript SDK (<code>@svc/sdk</code>) and the <code>svc</code> CLI, shown beside each curl sample. The machine-readable document is <a href="/openapi.json">/openapi.json</a>.</p>',
    '</section>',
    authenticationSection(),
    ...groups.map(
      ([tag, ops]) =>
        `<section class="tag" id="tag-${slug(tag)}"><h2>${escapeHtml(tag)}</h2>${markdown(typeof tagDescription(tag) === 'string' ? (tagDescription(tag) as string) : '')}${ops.map((op) => operationSection(document, op)).join('')}</section>`,
    ),
    webhooks.length > 0
      ? `<section class="tag" id="webhook-events"><h2>Webhook events</h2><p>What svc POSTs to your callback URL and webhook endpoints, signed as Standard Webhooks describe.</p>${webhooks.map(([name, item]) => webhookSection(document, name, item)).join('')}</section>`
      : '',
    schemas.length > 0
      ? `<section class="tag" id="schemas"><h2>Schemas</h2>${schemas.map(([name, schema]) => `<section class="schema" id="${schemaAnchor(escapeHtml(name))}"><h3>${escapeHtml(name)}</h3>${isObject(schema) && typeof schema.description === 'string' ? `<p>${inline(schema.description)}</p>` : ''}${fieldList(schema) || `<p><span class="type">${typeOf(schema)}</span></p>`}</section>`).join('')}</section>`
      : '',
  ].join('\n');

  return [
    '<!doctype html><html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title)}</title>`,
    `<link rel="icon" href="${escapeHtml(assets.favicon)}" type="image/svg+xml">`,
    `<link rel="stylesheet" href="${escapeHtml(assets.css)}">`,
    `<script src="${escapeHtml(assets.js)}" defer></script>`,
    '</head><body>',
    `<header class="top"><a class="brand" href="#introduction">${escapeHtml(String(info.title ?? 'API'))} <span>API reference</span></a><a href="/console">Console</a></header>`,
    `<div class="layout"><nav class="sidebar" aria-label="API reference"><details class="menu" open><summary>Contents</summary>${nav}</details></nav>`,
    `<main id="main">${main}</main></div>`,
    '</body></html>',
  ].join('\n');
}
