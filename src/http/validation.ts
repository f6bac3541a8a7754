import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

function ajvWith(options: Options): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    removeAdditional: false,
    useDefaults: true,
    strict: false,
    ...options,
  });
  addFormats.default(ajv);
  return ajv;
}

/**
 * Request validation. Bodies are JSON, so their types are checked as sent (a number is not a
 * string); query strings and path parameters are text, so they are coerced to their schema's types.
 */
export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const strict = ajvWith({ coerceTypes: false });
  const coercing = ajvWith({ coerceTypes: 'array' });
  return ({ schema, httpPart }) => (httpPart === 'body' ? strict : coercing).compile(schema as object);
}
