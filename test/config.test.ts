import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.ts';

describe('config', () => {
  it('has working defaults', () => {
    const config = loadConfig({});
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.port, 8080);
    assert.equal(config.databaseUrl, 'sqlite:./data/svc.db');
    assert.equal(config.provider, 'sandbox');
    assert.equal(config.bodyLimitBytes, 65536);
    assert.deepEqual(config.sendRetryScheduleMs.slice(0, 3), [1000, 5000, 30_000]);
    assert.equal(config.sendRetryScheduleMs.length, 10);
    assert.deepEqual(
      config.webhookRetryScheduleMs,
      [5000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
    );
    assert.equal(config.providerMaxMps, 80);
    assert.equal(config.webhookTimeoutMs, 10_000);
    assert.equal(config.allowPrivateCallbacks, false);
    assert.equal(config.signup, 'open');
    assert.equal(config.signupRateLimitPerMinute, 1000);
    assert.ok(Object.isFrozen(config) && Object.isFrozen(config.sandbox));
  });

  it('reads every setting', () => {
    const config = loadConfig({
      PORT: '9000',
      SVC_SEND_RETRY_SCHEDULE: '100ms, 5s,2m,1h',
      SVC_ALLOW_PRIVATE_CALLBACKS: 'true',
      SVC_PROVIDER: 'whatsapp',
      SVC_WHATSAPP_APP_SECRET: 'app-secret',
      SVC_WHATSAPP_VERIFY_TOKEN: 'verify',
      SVC_DATABASE_URL: 'postgres://u@h/db',
      SVC_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
    });
    assert.equal(config.port, 9000);
    assert.deepEqual(config.sendRetryScheduleMs, [100, 5000, 120_000, 3_600_000]);
    assert.equal(config.allowPrivateCallbacks, true);
    assert.equal(config.provider, 'whatsapp');
  });

  it('reads retention periods as durations, with documented defaults', () => {
    const DAY = 86_400_000;
    assert.deepEqual(loadConfig({}).retention, {
      messagesMs: 400 * DAY,
      webhookDeliveriesMs: 30 * DAY,
      sandboxMs: 7 * DAY,
      analyticsMs: 730 * DAY,
      analyticsHourlyMs: 35 * DAY,
      intervalMs: 3_600_000,
      batchSize: 100,
    });
    const short = loadConfig({
      SVC_RETENTION_MESSAGES: '90s',
      SVC_RETENTION_WEBHOOK_DELIVERIES: '2m',
      SVC_RETENTION_SANDBOX: '1h',
      SVC_RETENTION_ANALYTICS: '1.5d',
      SVC_RETENTION_ANALYTICS_HOURLY: '12h',
      SVC_RETENTION_INTERVAL: '5s',
      SVC_RETENTION_BATCH_SIZE: '100',
    }).retention;
    assert.deepEqual(short, {
      messagesMs: 90_000,
      webhookDeliveriesMs: 120_000,
      sandboxMs: 3_600_000,
      analyticsMs: 1.5 * DAY,
      analyticsHourlyMs: 12 * 3_600_000,
      intervalMs: 5000,
      batchSize: 100,
    });
  });

  it('names the variable of an invalid value', () => {
    const bad: Record<string, string>[] = [
      { PORT: 'eighty' },
      { PORT: '70000' },
      { SVC_PROVIDER: 'carrier-pigeon' },
      { SVC_SEND_RETRY_SCHEDULE: '1s,soon' },
      { SVC_DATABASE_URL: 'mysql://x' },
      { SVC_ENCRYPTION_KEY: 'c2hvcnQ=' },
      { SVC_ALLOW_PRIVATE_CALLBACKS: 'yes' },
      { SVC_SIGNUP: 'closed' },
      { SVC_PROVIDER_MAX_MPS: '0' },
      { SVC_SIGNUP_RATE_LIMIT: '0' },
      { SVC_HTTP_REQUEST_TIMEOUT_MS: '5' },
      { SVC_HTTP_MAX_CONNECTIONS: '0' },
      { SVC_OPS_PORT: 'admin' },
      { SVC_LOG_FORMAT: 'xml' },
      { SVC_WORKER_STALL_MS: 'soon' },
      { SVC_DISPATCH_CONCURRENCY: '0' },
      { SVC_RETENTION_MESSAGES: 'a year' },
      { SVC_RETENTION_WEBHOOK_DELIVERIES: '100ms' },
      { SVC_RETENTION_SANDBOX: '7' },
      { SVC_RETENTION_ANALYTICS: '1d' },
      { SVC_RETENTION_ANALYTICS_HOURLY: 'soon' },
      { SVC_RETENTION_INTERVAL: '0s' },
      { SVC_RETENTION_BATCH_SIZE: '0' },
    ];
    for (const env of bad) {
      const name = Object.keys(env)[0]!;
      assert.throws(
        () => loadConfig(env),
        (error: Error) => error instanceof ConfigError && error.message.includes(name),
        name,
      );
    }
  });

  it('refuses settings that are wrong only together, naming them', () => {
    const together: [Record<string, string>, string][] = [
      [{ SVC_DATABASE_URL: 'postgres://u@h/db' }, 'SVC_ENCRYPTION_KEY'],
      [{ SVC_PROVIDER: 'whatsapp', SVC_WHATSAPP_VERIFY_TOKEN: 'v' }, 'SVC_WHATSAPP_APP_SECRET'],
      [{ SVC_PROVIDER: 'whatsapp', SVC_WHATSAPP_APP_SECRET: 's' }, 'SVC_WHATSAPP_VERIFY_TOKEN'],
      [{ SVC_HTTP_REQUEST_TIMEOUT_MS: '5000', SVC_HTTP_HEADERS_TIMEOUT_MS: '9000' }, 'SVC_HTTP_HEADERS_TIMEOUT_MS'],
    ];
    for (const [env, name] of together) {
      assert.throws(
        () => loadConfig(env),
        (error: Error) => error instanceof ConfigError && error.message.includes(name),
        name,
      );
    }
    assert.equal(loadConfig({ PORT: '9000' }).opsPort, 9001, 'the operator port sits next to the API port');
    assert.equal(loadConfig({ PORT: '0' }).opsPort, 0);
    // One environment, two roles on one host: api and worker get operator ports of their own.
    assert.equal(loadConfig({ PORT: '9000' }, 'api').opsPort, 9001);
    assert.equal(loadConfig({ PORT: '9000' }, 'worker').opsPort, 9002);
    assert.equal(loadConfig({ PORT: '0' }, 'worker').opsPort, 0);
    assert.equal(loadConfig({ PORT: '9000', SVC_OPS_PORT: '9100' }, 'worker').opsPort, 9100);
    assert.equal(loadConfig({ SVC_OPS_PORT: 'off' }).opsPort, undefined);
  });

  it('closes sign-up with any non-empty admin token, and refuses to start without one', () => {
    for (const token of ['x', 'short', 'a-much-longer-admin-token-0123456789']) {
      const config = loadConfig({ SVC_SIGNUP: 'closed', SVC_ADMIN_TOKEN: token });
      assert.equal(config.signup, 'closed');
      assert.equal(config.adminToken, token);
    }
    for (const token of [undefined, '', '   ']) {
      assert.throws(
        () => loadConfig({ SVC_SIGNUP: 'closed', SVC_ADMIN_TOKEN: token }),
        (error: Error) => error instanceof ConfigError && error.message.includes('SVC_ADMIN_TOKEN'),
        JSON.stringify(token),
      );
    }
    assert.equal(loadConfig({ SVC_SIGNUP_RATE_LIMIT: '5' }).signupRateLimitPerMinute, 5);
  });
});
