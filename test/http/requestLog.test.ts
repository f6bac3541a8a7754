import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../src/logger.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

// One line per request (README, Operating svc: logs), written without the redaction pass every
// other line gets (issue #11: most of a log call's cost), as it carries nothing a caller chose
// beyond the method: the same fields as before, secrets still redacted everywhere else.

describe('the request line', () => {
  const lines: Record<string, unknown>[] = [];
  let server: TestServer;
  before(async () => {
    const logger = createLogger('info', 'json', { write: (line: string) => void lines.push(JSON.parse(line)) });
    server = await startTestServer('sqlite', { logger });
  });
  after(() => server.close());

  it('is one line per request: its id, method, route, status and time, nothing else', async () => {
    const { key } = await server.createProject();
    const reply = await server.call('GET', '/v1/projects/me?secret=hunter2', { key });
    assert.equal(reply.status, 200);
    const requestId = reply.headers.get('x-request-id');
    const line = lines.find((entry) => entry.requestId === requestId);
    assert.ok(line, 'a line with the request id');
    const { time, ms, ...rest } = line;
    assert.equal(typeof time, 'number');
    assert.equal(typeof ms, 'number');
    assert.deepEqual(rest, {
      level: 30,
      service: 'svc',
      requestId,
      method: 'GET',
      url: '/v1/projects/me',
      status: 200,
      msg: 'request completed',
    });
    assert.deepEqual(Object.keys(line), ['level', 'time', 'service', 'requestId', 'method', 'url', 'status', 'ms', 'msg']);
    assert.ok(!JSON.stringify(lines).includes(key), 'the key is in no line');
  });

  it('leaves the redaction of every other line as it was', () => {
    server.app.logger.warn({ request: { authorization: `Bearer svc_live_${'x'.repeat(40)}` }, provider: { token: 'EAAG' } }, 'careless');
    const line = lines.find((entry) => entry.msg === 'careless')!;
    assert.deepEqual(line.request, { authorization: '[redacted]' });
    assert.deepEqual(line.provider, { token: '[redacted]' });
  });
});
