import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

// A local HTTP server serving template media samples (example.header_url), reached because the
// test service runs with SVC_ALLOW_PRIVATE_CALLBACKS=true, as the other SSRF tests do.

export const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(200, 1)]);
export const PDF = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(300, 32)]);
const MB = 1024 * 1024;

export interface SampleServer {
  url: string;
  /** Paths requested, in order. */
  requested: string[];
  close(): Promise<void>;
}

export async function startSampleServer(): Promise<SampleServer> {
  const requested: string[] = [];
  const server = createServer((request, response) => {
    requested.push(request.url ?? '');
    switch (request.url) {
      case '/photo.png':
        response.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
        return;
      case '/untyped.png':
        // No usable Content-Type: the bytes say what it is.
        response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(PNG);
        return;
      case '/invoice.pdf':
        response.writeHead(200, { 'content-type': 'application/pdf' }).end(PDF);
        return;
      case '/huge.jpg':
        // Over the image limit (5 MB), announced.
        response.writeHead(200, { 'content-type': 'image/jpeg' }).end(Buffer.alloc(5 * MB + 1, 0xff));
        return;
      case '/chunked-huge.png':
        // Over the limit without a Content-Length: counted as it arrives.
        response.writeHead(200, { 'content-type': 'image/png', 'transfer-encoding': 'chunked' });
        for (let i = 0; i < 6; i++) response.write(Buffer.alloc(MB, 1));
        response.end();
        return;
      case '/page.html':
        response.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>');
        return;
      case '/moved.png':
        response.writeHead(302, { location: '/photo.png' }).end();
        return;
      default:
        response.writeHead(404).end('not found');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requested,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
