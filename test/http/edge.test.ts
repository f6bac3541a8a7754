import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { databaseKinds } from '../support/databases.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { until } from '../support/until.ts';

// What the HTTP layer answers before a route runs — the parser, the router, slow clients, a full
// server, a server shutting down — follows CONTRACT §2 like every other answer.

interface RawAnswer {
  status: number;
  headers: Map<string, string>;
  body: any;
  closedAfterMs: number;
}

/** Writes bytes on a fresh connection (optionally more, slowly) and reads the first answer. */
function raw(port: number, payload: string, options: { trickle?: string; everyMs?: number } = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    const timer = options.trickle
      ? setInterval(() => socket.writable && socket.write(options.trickle!), options.everyMs ?? 200)
      : undefined;
    socket.on('data', (chunk) => (text += chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const status = Number(statusLine.split(' ')[1]);
      if (!status) return reject(new Error(`no HTTP answer: ${JSON.stringify(text)}`));
      const headers = new Map(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      const bodyText = rest.join('\r\n\r\n');
      resolve({ status, headers, body: bodyText && headers.get('content-type')?.includes('json') ? JSON.parse(bodyText) : bodyText || undefined, closedAfterMs: Date.now() - started });
    });
    socket.write(payload);
  });
}

function assertProblem(answer: RawAnswer, status: number, code: string): void {
  assert.equal(answer.status, status);
  assert.equal(answer.headers.get('content-type'), 'application/problem+json');
  assert.equal(answer.body.status, status);
  assert.equal(answer.body.code, code);
  assert.match(answer.body.requestId, /^req_/);
  assert.equal(answer.headers.get('x-request-id'), answer.body.requestId);
}

for (const kind of databaseKinds()) {
  describe(`the HTTP edge (${kind})`, () => {
    let server: TestServer;
    let port: number;
    let releaseWrite: (() => void) | undefined;
    let parkNextWrite = false;
    /** How many 413 answers the server has finished writing (its request log). */
    let answered413 = 0;

    before(async () => {
      server = await startTestServer(kind, {
        logger: pino({ level: 'info' }, { write: (line: string) => void (line.includes('"status":413') && answered413++) }),
        env: { SVC_HTTP_REQUEST_TIMEOUT_MS: '2000', SVC_HTTP_HEADERS_TIMEOUT_MS: '1000', SVC_HTTP_MAX_CONNECTIONS: '40' },
        testHooks: {
          beforeAuthorizedWrite: async () => {
            if (!parkNextWrite) return;
            parkNextWrite = false;
            await new Promise<void>((resolve) => (releaseWrite = resolve));
          },
        },
      });
      port = Number(new URL(server.url).port);
    });

    after(async () => {
      await server.close().catch(() => {});
    });

    it('answers a request the parser refuses with problem+json', async () => {
      assertProblem(await raw(port, 'NOT HTTP AT ALL\r\n\r\n'), 400, 'bad_request');
      assertProblem(
        await raw(port, 'POST /v1/projects HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'),
        400,
        'bad_request',
      );
      assertProblem(
        await raw(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
        431,
        'request_header_fields_too_large',
      );
      assertProblem(
        await raw(port, `GET /healthz?${'q'.repeat(70_000)} HTTP/1.1\r\nHost: x\r\n\r\n`),
        431,
        'request_header_fields_too_large',
      );
    });

    it('answers in problem+json what Node alone would answer bare: no Host at all, an unknown Expect, CONNECT', async () => {
      for (const path of ['/docs/', '/v1/projects/me', '/healthz']) {
        assertProblem(await raw(port, `GET ${path} HTTP/1.1\r\nConnection: close\r\n\r\n`), 400, 'bad_request');
      }
      assertProblem(
        await raw(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nConnection: close\r\n\r\n'),
        417,
        'expectation_failed',
      );
      assertProblem(await raw(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'), 405, 'method_not_allowed');
    });

    it('answers a request the parser refuses after the answer of the request before it on the connection', async () => {
      const text = await new Promise<string>((resolve) => {
        const socket = net.connect(port, '127.0.0.1');
        let received = '';
        socket.on('data', (chunk) => (received += chunk));
        socket.on('error', () => {});
        socket.on('close', () => resolve(received));
        socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n');
      });
      const answers = text.split(/(?=HTTP\/1\.1 )/);
      assert.equal(answers.length, 2, text);
      assert.match(answers[0]!, /^HTTP\/1\.1 200 /);
      assert.match(answers[0]!, /\{"status":"ok"\}$/);
      assert.match(answers[1]!, /^HTTP\/1\.1 400 /);
      assert.match(answers[1]!, /content-type: application\/problem\+json/i);
      assert.match(answers[1]!, /x-request-id: req_/i);
      assert.match(answers[1]!, /"code":"bad_request"/);
    });

    it('answers an unknown page of the documentation with its problem+json 404', async () => {
      for (const path of ['/docs/nope', '/docs/js/nope.js', '/docs/../v1']) {
        assertProblem(await raw(port, `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`), 404, 'not_found');
      }
      const head = await raw(port, 'HEAD /docs/nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      assert.equal(head.status, 404);
      assert.equal(head.headers.get('content-type'), 'application/problem+json');
      assert.match(head.headers.get('x-request-id') ?? '', /^req_/);
      const page = await raw(port, 'GET /docs/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      assert.equal(page.status, 200);
    });

    it('lets a client that streams a 5 MiB body finish it and read its 413 (Node fetch)', async () => {
      const fiveMiB = new Uint8Array(5 * 1024 * 1024).fill(0x20);
      for (let i = 0; i < 5; i++) {
        // A whole buffer (Content-Length: refused before a byte is read) and a stream (chunked:
        // refused once past the limit), both written to the end before the answer is read.
        const sized = await fetch(`${server.url}/v1/projects`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: fiveMiB });
        // The second stream goes on writing only once its 413 has been written: what a slow
        // writer meets, made certain.
        let left = 80; // 80 chunks of 64 KiB: 5 MiB
        const before413 = answered413;
        const streamed = await fetch(`${server.url}/v1/projects`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: new ReadableStream<Uint8Array>({
            async pull(controller) {
              if (left === 40) await until('the 413 to be written', () => answered413 > before413);
              controller.enqueue(fiveMiB.subarray(0, 64 * 1024));
              if (--left === 0) controller.close();
            },
          }),
          duplex: 'half',
        } as RequestInit);
        for (const reply of [sized, streamed]) {
          assert.equal(reply.status, 413);
          assert.equal(reply.headers.get('content-type'), 'application/problem+json');
          const problem = (await reply.json()) as { code: string; requestId: string };
          assert.equal(problem.code, 'payload_too_large');
          assert.equal(problem.requestId, reply.headers.get('x-request-id'));
        }
      }
    });

    it('cuts off a refused body beyond what it drains', async () => {
      const socket = net.connect(port, '127.0.0.1');
      socket.on('error', () => {});
      const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
      socket.write('POST /v1/projects HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 104857600\r\n\r\n');
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      let written = 0;
      let open = true;
      void closed.then(() => (open = false));
      while (open && written < 100) {
        if (!socket.write(chunk)) await new Promise((resolve) => { socket.once('drain', resolve); socket.once('close', resolve); });
        written++;
      }
      await closed;
      assert.ok(written < 100, `the connection was cut after ${written} MiB of a 100 MiB body`);
    });

    it('refuses an HTTP/1.1 request without a Host, the documentation page included', async () => {
      for (const path of ['/docs/', '/v1/projects/me', '/healthz']) {
        assertProblem(await raw(port, `GET ${path} HTTP/1.1\r\nHost: \r\nConnection: close\r\n\r\n`), 400, 'bad_request');
      }
      const old = await raw(port, 'GET /healthz HTTP/1.0\r\n\r\n');
      assert.equal(old.status, 200, 'HTTP/1.0 has no Host to require');
    });

    it('answers a URL the router cannot read with problem+json', async () => {
      assertProblem(await raw(port, 'GET /v1/messages/%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'), 400, 'bad_request');
      assertProblem(
        await raw(port, `GET /v1/messages/${'m'.repeat(600)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`),
        414,
        'uri_too_long',
      );
    });

    it('cuts off a client that trickles its headers or its body, with 408', async () => {
      const headers = await raw(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n', { trickle: 'X-Slow: yes\r\n' });
      assertProblem(headers, 408, 'request_timeout');
      const body = await raw(
        port,
        'POST /v1/projects HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{',
        { trickle: ' ', everyMs: 100 },
      );
      assertProblem(body, 408, 'request_timeout');
    });

    it('refuses connections beyond its maximum', async () => {
      const sockets = Array.from({ length: 60 }, () => net.connect(port, '127.0.0.1').on('error', () => {}));
      // The 20 beyond the cap are closed without a byte; the 40 it took are answered 408 once
      // their headers time out (1 s here), which on a loaded machine may come first.
      let refused = 0;
      let closed = 0;
      for (const socket of sockets) {
        let answered = false;
        socket.on('data', () => (answered = true));
        socket.on('close', () => {
          closed++;
          if (!answered) refused++;
        });
      }
      try {
        await until('every connection closed', async () => closed === 60, 60_000);
        assert.equal(refused, 20, `${refused} of 60 connections were refused by a server capped at 40`);
      } finally {
        for (const socket of sockets) socket.destroy();
      }
      await until('serving again once they are gone', async () => (await server.call('GET', '/healthz')).status === 200);
    });

    it('answers requests that arrive while it shuts down with 503 problem+json', async () => {
      const { key } = await server.createProject();
      parkNextWrite = true;
      // One keep-alive connection: its first request is held inside its write while the server
      // starts shutting down; then a second request arrives on it.
      const socket = net.connect(port, '127.0.0.1');
      let text = '';
      socket.on('data', (chunk) => (text += chunk));
      const closed = new Promise((resolve) => socket.on('close', resolve));
      const body = JSON.stringify({ name: 'ci' });
      socket.write(
        `POST /v1/api-keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      );
      while (!releaseWrite) await new Promise((resolve) => setTimeout(resolve, 10));
      const closing = server.app.http!.close();
      await new Promise((resolve) => setTimeout(resolve, 50));
      socket.write(`GET /v1/projects/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      releaseWrite();
      await closed;
      await closing;
      const second = text.slice(text.indexOf('HTTP/1.1', 10));
      assert.match(text, /^HTTP\/1\.1 200 /, 'the request in flight finishes');
      assert.match(second, /^HTTP\/1\.1 503 /);
      assert.match(second, /content-type: application\/problem\+json/i);
      assert.match(second, /x-request-id: req_/i);
      assert.match(second, /"code":"unavailable"/);
    });
  });
}
