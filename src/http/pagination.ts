import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ApiError } from './errors.ts';

// Keyset pagination over ids (which sort by creation time): newest first, a page costs one
// index range scan however deep it is. The cursor is the last id of the page, made opaque.

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

export const PageQuery = {
  limit: Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE, description: 'Page size.' }),
  cursor: Type.Optional(
    Type.String({ maxLength: 200, description: 'Opaque; from the previous page’s Link rel="next".' }),
  ),
};

const CURSOR_SHAPE = /^[a-z]+_[0-9a-z]{26}$|^[0-9a-f-]{36}$/;

/** The id to continue after, or undefined for the first page. */
export function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!CURSOR_SHAPE.test(id)) {
    throw new ApiError('validation_failed', 'The cursor is not one this API gave out.', {
      errors: [{ field: 'query:/cursor', code: 'invalid_cursor', message: 'Use the cursor from a Link header.' }],
    });
  }
  return id;
}

export function encodeCursor(id: string): string {
  return Buffer.from(id, 'utf8').toString('base64url');
}

/**
 * Given `limit + 1` rows fetched newest first, returns the page and, when there is more,
 * announces the next page in an RFC 8288 Link header that keeps the request's other parameters:
 * an absolute URL on the configured public base (server.publicUrl), never on the request's Host.
 */
export function paginate<T extends { id: string }>(
  request: FastifyRequest,
  reply: FastifyReply,
  rows: T[],
  limit: number,
): T[] {
  if (rows.length <= limit) return rows;
  const page = rows.slice(0, limit);
  const url = new URL(request.url, 'http://placeholder');
  url.searchParams.set('cursor', encodeCursor(page.at(-1)!.id));
  url.searchParams.set('limit', String(limit));
  reply.header('link', `<${request.server.publicUrl()}${url.pathname}${url.search}>; rel="next"`);
  return page;
}
