import { connect } from 'node:net';

export interface RawReply {
  status: number;
  /** Header names lower-cased; a repeated header's values joined with ", ". */
  headers: Record<string, string>;
  body: string;
  json(): any;
}

function dechunk(body: string): string {
  let out = '';
  let rest = body;
  for (;;) {
    const end = rest.indexOf('\r\n');
    const size = parseInt(rest.slice(0, end), 16);
    if (!(size > 0)) return out;
    out += rest.slice(end + 2, end + 2 + size);
    rest = rest.slice(end + 2 + size + 2);
  }
}

/**
 * One HTTP/1.1 request written byte for byte on a fresh connection, for what fetch will not send:
 * a chosen Host, a header twice. `head` is the request line and header lines, without the blank
 * line; `Connection: close` and the body's Content-Length are added.
 */
export async function rawRequest(baseUrl: string, head: string[], body?: string): Promise<RawReply> {
  const { hostname, port } = new URL(baseUrl);
  const lines = [...head, 'Connection: close'];
  if (body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  const request = lines.join('\r\n') + '\r\n\r\n' + (body ?? '');
  const text = await new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(Number(port), hostname, () => socket.write(request));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    // A server that answers before reading the whole body (413) may reset the connection after
    // its answer: the answer counts.
    socket.on('error', (error) => (chunks.length > 0 ? resolve(Buffer.concat(chunks).toString('utf8')) : reject(error)));
  });
  const split = text.indexOf('\r\n\r\n');
  const [statusLine, ...headerLines] = text.slice(0, split).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  const rawBody = text.slice(split + 4);
  const replyBody = headers['transfer-encoding'] === 'chunked' ? dechunk(rawBody) : rawBody;
  return {
    status: Number(statusLine!.split(' ')[1]),
    headers,
    body: replyBody,
    json: () => JSON.parse(replyBody),
  };
}
