import { BATCH_ID, DELIVERY_ID, ENDPOINT_ID, MESSAGE_ID, OPERATION_EXAMPLES, TEMPLATE_ID } from './examples.ts';

// The `x-codeSamples` of each operation (shown by /docs beside the generated curl): the same call
// with the TypeScript SDK (@svc/sdk), and the CLI command that makes it where there is one. The
// SDK sample is made from the operation's method, path and request example; test/openapi/
// codeSamples.test.ts type-checks every SDK sample against the SDK and checks every CLI sample
// against the CLI's own options.

export interface CodeSample {
  lang: string;
  label: string;
  source: string;
}

const BASE_URL = 'http://127.0.0.1:8080';

/** The `svc` command that makes each operation's call (README "Use the CLI"). */
export const CLI_SAMPLES: Record<string, string> = {
  createProject: 'svc projects create --name "Acme Shop" --owner-email ops@acme.example --login',
  getProject: 'svc credentials show',
  saveProviderCredentials:
    'echo "$WHATSAPP_TOKEN" | svc credentials set --phone-number-id 106540352242922 \\\n  --business-account-id 102290129340398 --callback-url https://hooks.acme.example/svc --token-stdin',
  getWebhookSecret: 'svc webhooks secret show',
  rotateWebhookSecret: 'svc webhooks secret rotate --yes',
  createApiKey: 'svc keys create --name ci',
  listApiKeys: 'svc keys list',
  revokeApiKey: 'svc keys revoke key_01jd2k3m4n5p6q7r8s9t0v1w2x',
  createTemplate: 'svc templates create -f order_update.json --wait   # the request body below, in a file',
  listTemplates: 'svc templates list',
  getTemplate: `svc templates get ${TEMPLATE_ID}`,
  deleteTemplate: `svc templates delete ${TEMPLATE_ID} --yes`,
  sendMessage: 'svc send --to +5511987654321 --template order_update --language en_US \\\n  --var 1=Ana --var 2=#1001 --header-var 1=#1001 --follow',
  listMessages: 'svc messages list --status FAILED',
  getMessage: `svc messages get ${MESSAGE_ID}`,
  cancelMessage: `svc messages cancel ${MESSAGE_ID}`,
  listMessageEvents: `svc messages get ${MESSAGE_ID} --events`,
  sendMessageBatch: 'svc send --csv customers.csv --template order_update --language en_US   # to,1,2,header.1 columns',
  listBatches: 'svc batches list',
  getBatch: `svc batches get ${BATCH_ID}`,
  createSuppression: 'svc suppressions add +5521998765432 --reason "Asked by phone not to be contacted"',
  listSuppressions: 'svc suppressions list',
  deleteSuppression: 'svc suppressions remove +5521998765432',
  listWebhookDeliveries: 'svc deliveries list --status failed',
  getWebhookDelivery: `svc deliveries get ${DELIVERY_ID}`,
  retryWebhookDelivery: `svc deliveries retry ${DELIVERY_ID}`,
  createWebhookEndpoint:
    'svc webhooks endpoints create --url https://hooks.acme.example/svc/failures \\\n  --events message.failed,template.rejected --description "Ops pager"',
  listWebhookEndpoints: 'svc webhooks endpoints list',
  getWebhookEndpoint: `svc webhooks endpoints get ${ENDPOINT_ID}`,
  updateWebhookEndpoint: `svc webhooks endpoints update ${ENDPOINT_ID} --all-events`,
  deleteWebhookEndpoint: `svc webhooks endpoints delete ${ENDPOINT_ID} --yes`,
  testWebhookEndpoint: `svc webhooks endpoints test ${ENDPOINT_ID}`,
  getMarketingMessagesSetting: 'svc marketing-messages get',
  updateMarketingMessagesSetting: 'svc marketing-messages set fallback',
  getCostAnalytics: 'svc analytics cost --from 2026-11-01 --to 2026-12-01 --group-by market,category',
  listEvents: 'svc webhooks listen --forward-to http://localhost:3000/webhooks   # each event, signed, to a local URL',
};

/** An example value for each path parameter, by the path's first segment after /v1. */
export function pathValue(path: string, name: string): string {
  if (name === 'phoneNumber') return '+5521998765432';
  const resource = path.split('/')[2];
  const ids: Record<string, string> = {
    'api-keys': 'key_01jd2k3m4n5p6q7r8s9t0v1w2x',
    templates: TEMPLATE_ID,
    messages: MESSAGE_ID,
    batches: BATCH_ID,
    'webhook-deliveries': DELIVERY_ID,
    'webhook-endpoints': ENDPOINT_ID,
    'test-helpers': path.includes('/templates/') ? TEMPLATE_ID : MESSAGE_ID,
  };
  return ids[resource ?? ''] ?? 'id';
}

/** A JSON value as a TypeScript literal, indented to sit at `indent`. */
function literal(value: unknown, indent: string): string {
  return JSON.stringify(value, null, 2)
    .replace(/"([A-Za-z_$][A-Za-z0-9_$]*)":/g, '$1:')
    .replace(/"/g, "'")
    .split('\n')
    .join(`\n${indent}`);
}

/** The SDK call of an operation, with its example body and path parameters. */
export function sdkSample(method: string, path: string, operationId: string, options: { paged: boolean; authenticated: boolean }): string {
  const names = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!);
  const { request, query } = OPERATION_EXAMPLES[operationId] ?? {};
  const parts: string[] = [];
  const params: string[] = [];
  if (names.length > 0) params.push(`path: { ${names.map((name) => `${name}: '${pathValue(path, name)}'`).join(', ')} }`);
  if (query !== undefined) params.push(`query: ${literal(query, '  ')}`);
  if (params.length > 0) parts.push(`params: { ${params.join(', ')} }`);
  if (request !== undefined) parts.push(`body: ${literal(request, '  ')}`);
  const argument = parts.length === 0 ? '' : `, {\n  ${parts.join(',\n  ')},\n}`;
  const client = options.authenticated
    ? `const svc = createSvcClient({ baseUrl: '${BASE_URL}', apiKey: process.env.SVC_API_KEY });`
    : `const svc = createSvcClient({ baseUrl: '${BASE_URL}' });`;
  const call = options.paged
    ? `// Every item, page after page (Link: rel="next").\nfor await (const item of svc.paginate('${path}')) {\n  console.log(item);\n}`
    : `const result = await unwrap(svc.${method.toUpperCase()}('${path}'${argument}));\nconsole.log(result);`;
  const imports = options.paged ? 'createSvcClient' : 'createSvcClient, unwrap';
  return `import { ${imports} } from '@svc/sdk';\n\n${client}\n${call}\n`;
}

/** The samples of one operation: the SDK's, then the CLI's if a command makes the call. */
export function codeSamplesOf(method: string, path: string, operationId: string, options: { paged: boolean; authenticated: boolean }): CodeSample[] {
  const samples: CodeSample[] = [];
  // The operator's endpoints (health, metrics) are for probes and scrapers, not SDK users.
  if (path.startsWith('/v1/')) samples.push({ lang: 'TypeScript', label: 'SDK (TypeScript)', source: sdkSample(method, path, operationId, options) });
  const command = CLI_SAMPLES[operationId];
  if (command !== undefined) samples.push({ lang: 'Shell', label: 'CLI', source: command });
  return samples;
}
