// Named component schemas without touching the routes: each name is recognised by the
// properties its object has, wherever the object appears (response, request, nested), and every
// occurrence is replaced by a `$ref` to `#/components/schemas/<Name>`. Routes keep their inline
// TypeBox schemas (which validate and serialise); only the document changes. A route added with
// the same shape is named the same way, with no registration.

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

interface NamedSchema {
  name: string;
  /** Has every one of these properties… */
  has: string[];
  /** …and none of these. */
  lacks?: string[];
}

// Order matters: the first match names an object.
const NAMED_SCHEMAS: NamedSchema[] = [
  { name: 'Problem', has: ['type', 'title', 'status', 'code', 'detail', 'requestId'] },
  { name: 'Message', has: ['id', 'status', 'to', 'template', 'queuedAt'] },
  { name: 'MessageContent', has: ['body'], lacks: ['id', 'status', 'variables'] },
  { name: 'MessageEvent', has: ['id', 'status', 'event', 'occurredAt', 'deliveries'] },
  { name: 'ProviderError', has: ['code', 'title', 'message'], lacks: ['id', 'status', 'type'] },
  { name: 'WebhookDelivery', has: ['id', 'eventId', 'event', 'url', 'status', 'attempts'] },
  { name: 'WebhookAttempt', has: ['attempt', 'at', 'durationMs'] },
  { name: 'Template', has: ['id', 'name', 'language', 'category', 'status', 'components'] },
  { name: 'TemplateComponent', has: ['type', 'text'], lacks: ['id', 'title'] },
  { name: 'CreatedProject', has: ['projectId', 'name', 'apiKey'] },
  { name: 'Project', has: ['projectId', 'name', 'ownerEmail', 'createdAt'], lacks: ['apiKey', 'erasedAt'] },
  { name: 'CreatedApiKey', has: ['id', 'name', 'key'] },
  { name: 'RevokedApiKey', has: ['id', 'name', 'prefix', 'revokedAt'] },
  { name: 'ApiKey', has: ['id', 'name', 'prefix', 'createdAt'], lacks: ['key', 'revokedAt'] },
  { name: 'ProviderCredentials', has: ['projectId', 'providerPhoneNumberId', 'updatedAt'], lacks: ['ownerEmail'] },
  { name: 'WebhookSecret', has: ['secret', 'secrets'] },
  { name: 'Batch', has: ['id', 'template', 'language', 'total', 'counts'] },
  { name: 'Suppression', has: ['phoneNumber', 'reason', 'source', 'createdAt'] },
  { name: 'WebhookEndpoint', has: ['id', 'url', 'events', 'enabled', 'createdAt'] },
];

function nameOf(node: Json): string | undefined {
  if (node.type !== 'object' || !isObject(node.properties)) return undefined;
  const properties = Object.keys(node.properties);
  const match = NAMED_SCHEMAS.find(
    (named) => named.has.every((name) => properties.includes(name)) && !named.lacks?.some((name) => properties.includes(name)),
  );
  return match?.name;
}

/** A stable text of a schema, its keys sorted, to tell equal shapes apart from different ones. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (!isObject(value)) return JSON.stringify(value);
  return `{${Object.keys(value)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`)
    .join(',')}}`;
}

interface Candidate {
  schema: Json;
  key: string;
  count: number;
}

/**
 * Replaces the named objects of `document` by `$ref`s and adds them to components.schemas. When
 * one name matches objects of different shapes, the most used shape takes the name and the
 * others stay inline (a test lists them).
 */
export function nameSchemas(document: Json): { unnamed: string[] } {
  const candidates = new Map<string, Map<string, Candidate>>();

  // Innermost first, so a Message inside a batch item is a $ref inside the item's shape too.
  function collect(node: unknown): void {
    if (Array.isArray(node)) return node.forEach(collect);
    if (!isObject(node)) return;
    for (const value of Object.values(node)) collect(value);
    const name = nameOf(node);
    if (name === undefined) return;
    const key = canonical(node);
    const shapes = candidates.get(name) ?? new Map<string, Candidate>();
    const seen = shapes.get(key);
    if (seen) seen.count++;
    else shapes.set(key, { schema: structuredClone(node), key, count: 1 });
    candidates.set(name, shapes);
  }

  const chosen = new Map<string, string>(); // canonical shape → name
  const unnamed: string[] = [];
  function replace(node: unknown): unknown {
    if (Array.isArray(node)) return node.map(replace);
    if (!isObject(node)) return node;
    for (const [key, value] of Object.entries(node)) node[key] = replace(value);
    const name = chosen.get(canonical(node));
    return name === undefined ? node : { $ref: `#/components/schemas/${name}` };
  }

  const components = (document.components ??= {}) as Json;
  const schemas = (components.schemas ??= {}) as Json;
  const sections = ['paths', 'webhooks'] as const;
  // Several rounds: naming inner objects changes the canonical shape of the outer ones.
  for (let round = 0; round < 4; round++) {
    candidates.clear();
    for (const section of sections) collect(document[section]);
    for (const schema of Object.values(schemas)) if (isObject(schema)) for (const value of Object.values(schema)) collect(value);
    if (candidates.size === 0) break;
    chosen.clear();
    for (const [name, shapes] of candidates) {
      const ranked = [...shapes.values()].sort((a, b) => b.count - a.count || b.key.length - a.key.length);
      const existing = schemas[name];
      const winner = existing === undefined ? ranked[0]! : ranked.find((shape) => shape.key === canonical(existing));
      if (winner === undefined) continue;
      chosen.set(winner.key, name);
      schemas[name] = winner.schema;
    }
    for (const section of sections) document[section] = replace(document[section]);
    for (const [name, schema] of Object.entries(schemas)) {
      if (!isObject(schema)) continue;
      for (const [key, value] of Object.entries(schema)) schema[key] = replace(value);
      schemas[name] = schema;
    }
  }
  for (const [name, shapes] of candidates) {
    const named = schemas[name];
    for (const shape of shapes.values()) if (named === undefined || shape.key !== canonical(named)) unnamed.push(name);
  }
  return { unnamed };
}
