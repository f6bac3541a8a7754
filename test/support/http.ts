export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface CallOptions {
  key?: string;
  body?: unknown;
  /** Sent as is, instead of JSON of `body`. */
  raw?: string;
  headers?: Record<string, string>;
}

/** One real HTTP request; JSON bodies are parsed, anything else is left as text. */
export async function call(
  baseUrl: string,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  let body: string | undefined;
  if (options.raw !== undefined) body = options.raw;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(baseUrl + path, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  if (/json/.test(response.headers.get('content-type') ?? '') && text !== '') parsed = JSON.parse(text);
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/** The path and query of a reply's Link rel="next" (an absolute URL), or undefined on the last page. */
export function nextPageOf(reply: Reply): string | undefined {
  const link = reply.headers.get('link');
  if (!link) return undefined;
  const match = /^<(https?:\/\/[^>]+)>; rel="next"$/.exec(link);
  if (!match) throw new Error(`not an absolute rel="next" Link: ${link}`);
  const url = new URL(match[1]!);
  return url.pathname + url.search;
}
