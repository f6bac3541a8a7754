import { escapeHtml, inline, json } from './html.ts';

// A JSON Schema as a reader takes it in: each field with its type, whether it is required, its
// description and allowed values; nested objects folded under their field. A named component
// schema ($ref) is a link to its one rendering in the Schemas section, so a response that
// returns a Message does not repeat the Message's forty fields.

export type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

const MAX_DEPTH = 4;

/** The component name of a `#/components/schemas/X` reference. */
export function refName(schema: unknown): string | undefined {
  return isObject(schema) && typeof schema.$ref === 'string' ? schema.$ref.split('/').pop() : undefined;
}

export const schemaAnchor = (name: string): string => `schema-${name}`;

/** The schema's type in a few words (HTML): `string (date-time)`, `array of Message`, `Problem`. */
export function typeOf(schema: unknown): string {
  if (!isObject(schema)) return 'any';
  const ref = refName(schema);
  if (ref) return `<a href="#${schemaAnchor(ref)}">${escapeHtml(ref)}</a>`;
  const branches = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined;
  if (Array.isArray(branches)) {
    const types = [...new Set(branches.map(typeOf))];
    return types.join(' or ');
  }
  if (Array.isArray(schema.enum)) {
    return schema.enum.length === 1 ? `<code>${escapeHtml(JSON.stringify(schema.enum[0]))}</code>` : escapeHtml(String(schema.type ?? 'enum'));
  }
  const type = Array.isArray(schema.type) ? schema.type.join(' or ') : (schema.type as string | undefined);
  if (type === 'array') return `array of ${typeOf(schema.items)}`;
  if (type === 'object' && isObject(schema.additionalProperties) && !isObject(schema.properties)) {
    return `map of ${typeOf(schema.additionalProperties)}`;
  }
  return escapeHtml(type ?? 'any') + (typeof schema.format === 'string' ? ` <span class="format">(${escapeHtml(schema.format)})</span>` : '');
}

/** The limits and allowed values of a field, in words. */
function constraints(schema: Json): string {
  const words: string[] = [];
  const enumOf = (node: Json) => (Array.isArray(node.enum) && node.enum.length > 1 ? node.enum : undefined);
  const values = enumOf(schema) ?? (isObject(schema.items) ? enumOf(schema.items) : undefined);
  if (values) words.push(`One of ${values.map((value) => `<code>${escapeHtml(String(value))}</code>`).join(', ')}.`);
  if (schema.default !== undefined) words.push(`Default <code>${escapeHtml(JSON.stringify(schema.default))}</code>.`);
  const range = (low: unknown, high: unknown, unit: string) => {
    if (low !== undefined && high !== undefined) words.push(`${low}–${high} ${unit}.`);
    else if (low !== undefined) words.push(`At least ${low} ${unit}.`);
    else if (high !== undefined) words.push(`At most ${high} ${unit}.`);
  };
  range(schema.minLength, schema.maxLength, 'characters');
  range(schema.minItems, schema.maxItems, 'items');
  range(schema.minimum, schema.maximum, '(inclusive)');
  return words.length === 0 ? '' : `<p class="limits">${words.join(' ')}</p>`;
}

/** The object schema inside a field, if it has fields of its own to list (arrays of objects too). */
function nestedObject(schema: Json): Json | undefined {
  if (isObject(schema.properties)) return schema;
  if (isObject(schema.items) && isObject(schema.items.properties)) return schema.items;
  if (isObject(schema.additionalProperties) && isObject(schema.additionalProperties.properties)) return schema.additionalProperties;
  const branches = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined;
  return Array.isArray(branches) ? (branches.find((branch) => isObject(branch) && isObject(branch.properties)) as Json | undefined) : undefined;
}

/** The fields of an object schema as a list (empty string when it has none to list). */
export function fieldList(schema: unknown, depth = 0): string {
  if (!isObject(schema)) return '';
  const ref = refName(schema);
  if (ref) return `<p class="fields-ref">A <a href="#${schemaAnchor(ref)}">${escapeHtml(ref)}</a> object.</p>`;
  if (schema.type === 'array' && isObject(schema.items)) {
    const items = refName(schema.items);
    return items
      ? `<p class="fields-ref">An array of <a href="#${schemaAnchor(items)}">${escapeHtml(items)}</a> objects.</p>`
      : `<p class="fields-ref">An array of:</p>${fieldList(schema.items, depth)}`;
  }
  const properties = isObject(schema.properties) ? schema.properties : undefined;
  if (!properties) {
    const branches = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined;
    if (Array.isArray(branches)) return `<p class="fields-ref">One of: ${branches.map(typeOf).join(', ')}.</p>`;
    return '';
  }
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const items = Object.entries(properties).map(([name, property]) => {
    const field = isObject(property) ? property : {};
    const nested = depth < MAX_DEPTH ? nestedObject(field) : undefined;
    const example = Array.isArray(field.examples) && field.examples.length > 0 ? field.examples[0] : undefined;
    return [
      `<li class="field"><div class="field-head"><code class="name">${escapeHtml(name)}</code> <span class="type">${typeOf(field)}</span>`,
      required.has(name) ? ' <span class="required">required</span>' : '',
      '</div>',
      typeof field.description === 'string' ? `<p>${inline(field.description)}</p>` : '',
      constraints(field),
      example !== undefined && !isObject(example) && nested === undefined ? `<p class="limits">Example <code>${json(example)}</code>.</p>` : '',
      nested ? `<details><summary>Fields of <code>${escapeHtml(name)}</code></summary>${fieldList(nested, depth + 1)}</details>` : '',
      '</li>',
    ].join('');
  });
  return `<ul class="fields">${items.join('')}</ul>`;
}
