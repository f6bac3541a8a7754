// TypeBox writes a union of literals (Type.Union([Type.Literal('A'), …])) as `anyOf` of one-value
// enums or consts. Generators and validators read a plain `enum` better (its error lists the
// allowed values), so every such union becomes one `enum`, wherever it is in the document.

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The single value a branch allows, when it is a bare one-value enum or const of a scalar type. */
function literalOf(branch: unknown): { type: string | undefined; value: unknown } | undefined {
  if (!isObject(branch)) return undefined;
  const keys = Object.keys(branch).filter((key) => key !== 'type');
  if (keys.length !== 1) return undefined;
  const type = typeof branch.type === 'string' ? branch.type : undefined;
  if (keys[0] === 'const') return { type, value: branch.const };
  if (keys[0] === 'enum' && Array.isArray(branch.enum) && branch.enum.length === 1) return { type, value: branch.enum[0] };
  return undefined;
}

function collapsed(node: Json): Json | undefined {
  const branches = node.anyOf;
  if (!Array.isArray(branches) || branches.length === 0) return undefined;
  const literals = branches.map(literalOf);
  if (literals.some((literal) => literal === undefined)) return undefined;
  const types = new Set(literals.map((literal) => literal!.type ?? typeof literal!.value));
  if (types.size !== 1) return undefined;
  const [type] = types;
  const { anyOf: _anyOf, ...rest } = node;
  return { type: type === 'number' ? 'number' : type, enum: literals.map((literal) => literal!.value), ...rest };
}

/** Rewrites the unions in place, depth first. */
export function collapseLiteralUnions(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(collapseLiteralUnions);
  if (!isObject(node)) return node;
  for (const [key, value] of Object.entries(node)) node[key] = collapseLiteralUnions(value);
  return collapsed(node) ?? node;
}
