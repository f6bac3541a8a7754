import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { isCalendarDateTime } from '../domain/dateTime.ts';

function ajvWith(options: Options): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    removeAdditional: false,
    useDefaults: true,
    strict: false,
    ...options,
  });
  addFormats.default(ajv);
  // RFC 3339 as ajv-formats reads it admits times Date.parse cannot read (23:59:60): every date
  // input is one that names a real instant, so the handler's Date.parse never yields NaN.
  ajv.addFormat('date-time', isCalendarDateTime);
  return ajv;
}

interface Visit {
  value: unknown;
  key: string;
  parent: Visit | undefined;
}

// The JSON Pointer (RFC 6901) of a visited value, built only for the few that are reported.
function pointerOf(visit: Visit): string {
  const tokens: string[] = [];
  for (let at: Visit | undefined = visit; at?.parent !== undefined; at = at.parent) {
    tokens.push(at.key.replaceAll('~', '~0').replaceAll('/', '~1'));
  }
  return tokens.reverse().map((token) => '/' + token).join('');
}

/**
 * Every string in `data` (object keys too) that holds a NUL character, as Ajv-shaped errors.
 * PostgreSQL cannot store or compare one, and no field of the API has a use for it: one rule for
 * every string a request carries in its body, query, path or headers. Walked without recursion,
 * as a body may nest thousands deep.
 */
function nulCharacterErrors(data: unknown): ErrorObject[] {
  const found: ErrorObject[] = [];
  const refuse = (visit: Visit) =>
    found.push({
      instancePath: pointerOf(visit),
      schemaPath: '#/invalid_character',
      keyword: 'invalid_character',
      params: {},
      message: 'must not contain the NUL character (U+0000)',
    });
  const pending: Visit[] = [{ value: data, key: '', parent: undefined }];
  while (pending.length > 0) {
    const visit = pending.pop()!;
    const { value, key } = visit;
    if (key.includes('\u0000') || (typeof value === 'string' && value.includes('\u0000'))) {
      refuse(visit);
    } else if (value !== null && typeof value === 'object') {
      // Pushed last to first, so the errors come out in document order.
      for (const [childKey, item] of Object.entries(value).reverse()) {
        pending.push({ value: item, key: childKey, parent: visit });
      }
    }
  }
  return found;
}

/**
 * The schema's validator, refusing NUL characters first (see nulCharacterErrors); compiled on its
 * first use (lazyCompilers.ts).
 */
function refusingNul(compile: () => ValidateFunction): ValidateFunction {
  let validate: ValidateFunction | undefined;
  const wrapped = ((data: unknown) => {
    validate ??= compile();
    const nul = nulCharacterErrors(data);
    const valid = validate(data);
    wrapped.errors = nul.length > 0 || !valid ? [...nul, ...(validate.errors ?? [])] : null;
    return wrapped.errors === null;
  }) as ValidateFunction;
  return wrapped;
}

/**
 * Request validation. Bodies are JSON, so their types are checked as sent (a number is not a
 * string); query strings and path parameters are text, so they are coerced to their schema's types.
 */
export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const strict = ajvWith({ coerceTypes: false });
  const coercing = ajvWith({ coerceTypes: 'array' });
  return ({ schema, httpPart }) => refusingNul(() => (httpPart === 'body' ? strict : coercing).compile(schema as object));
}
