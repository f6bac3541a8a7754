import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../support/server.ts';
import { cliUser, type CliUser, closedUrl } from './cli.ts';

describe('svc login, projects, keys, credentials (the CLI against a running svc)', () => {
  let server: TestServer;
  const users: CliUser[] = [];

  before(async () => {
    server = await startTestServer('sqlite');
  });
  after(async () => {
    for (const user of users) user.remove();
    await server.close();
  });

  function newUser(): CliUser {
    const user = cliUser(server.url);
    users.push(user);
    return user;
  }

  describe('happy path', () => {
    it('logs in with SVC_API_KEY, storing the key and base URL in a 0600 file in a 0700 folder', async () => {
      const user = newUser();
      const { key, projectId } = await server.createProject('Acme');
      const login = await user.run(['login', '--json'], { env: { SVC_API_KEY: key } });
      assert.equal(login.code, 0, login.stderr);
      const shown = JSON.parse(login.stdout);
      assert.equal(shown.projectId, projectId);
      assert.equal(shown.configPath, user.configFile);
      assert.equal(login.stdout.includes(key), false, 'the key is never printed');

      assert.equal(statSync(user.configFile).mode & 0o777, 0o600);
      assert.equal(statSync(`${user.home}/.config/svc`).mode & 0o777, 0o700);
      const saved = JSON.parse(readFileSync(user.configFile, 'utf8'));
      assert.equal(saved.apiKey, key);
      assert.equal(saved.baseUrl, server.url);

      // Later commands use the saved key without the environment.
      const keys = await user.run(['keys', 'list', '--json']);
      assert.equal(keys.code, 0, keys.stderr);
      assert.deepEqual(JSON.parse(keys.stdout).map((k: { name: string }) => k.name), ['default']);
    });

    it('logs in with a key read from stdin, then logs out', async () => {
      const user = newUser();
      const { key } = await server.createProject();
      const login = await user.run(['login', '--api-key-stdin'], { input: `${key}\n` });
      assert.equal(login.code, 0, login.stderr);
      assert.match(login.stdout, /Signed in to project Acme \(proj_/);
      const logout = await user.run(['logout']);
      assert.equal(logout.code, 0, logout.stderr);
      assert.equal(JSON.parse(readFileSync(user.configFile, 'utf8')).apiKey, undefined);
      const after = await user.run(['keys', 'list']);
      assert.equal(after.code, 3);
      assert.match(after.stderr, /not signed in: run `svc login`/);
    });

    it('creates a project, prints its first key once and signs in with it on --login', async () => {
      const user = newUser();
      const created = await user.run(['projects', 'create', '--name', 'Shop', '--owner-email', 'ops@shop.example', '--login', '--json']);
      assert.equal(created.code, 0, created.stderr);
      const project = JSON.parse(created.stdout);
      assert.match(project.apiKey, /^svc_live_/);
      assert.equal(JSON.parse(readFileSync(user.configFile, 'utf8')).apiKey, project.apiKey);
      const me = await server.call('GET', '/v1/projects/me', { key: project.apiKey });
      assert.equal(me.body.name, 'Shop');
    });

    it('creates, lists and revokes keys', async () => {
      const user = newUser();
      const { key } = await server.createProject();
      user.env.SVC_API_KEY = key;
      const created = await user.run(['keys', 'create', '--name', 'ci', '--json']);
      assert.equal(created.code, 0, created.stderr);
      const newKey = JSON.parse(created.stdout);
      assert.match(newKey.key, /^svc_live_/);
      const listed = JSON.parse((await user.run(['keys', 'list', '--json'])).stdout);
      assert.deepEqual(listed.map((k: { id: string }) => k.id).sort(), [newKey.id, listed.find((k: { name: string }) => k.name === 'default').id].sort());
      const human = await user.run(['keys', 'list']);
      assert.match(human.stdout, /^ID\s+NAME\s+PREFIX\s+CREATED\s+LAST USED\n/);
      const revoked = await user.run(['keys', 'revoke', newKey.id, '--json']);
      assert.equal(revoked.code, 0, revoked.stderr);
      assert.ok(JSON.parse(revoked.stdout).revokedAt);
      assert.equal((await server.call('GET', '/v1/projects/me', { key: newKey.key })).status, 401);
    });

    it('saves provider credentials with the token from stdin, never echoing it, then the callback URL alone', async () => {
      const user = newUser();
      const { key } = await server.createProject();
      user.env.SVC_API_KEY = key;
      const token = 'EAAG-secret-token-value';
      const saved = await user.run(['credentials', 'set', '--phone-number-id', '1065550001', '--token-stdin'], { input: token });
      assert.equal(saved.code, 0, saved.stderr);
      assert.equal((saved.stdout + saved.stderr).includes(token), false);
      assert.match(saved.stdout, /phone number id: 1065550001/);
      const url = await user.run(['credentials', 'set', '--callback-url', 'http://127.0.0.1:9/hook', '--json']);
      assert.equal(url.code, 0, url.stderr);
      assert.equal(JSON.parse(url.stdout).callbackUrl, 'http://127.0.0.1:9/hook');
      const me = await server.call('GET', '/v1/projects/me', { key });
      assert.equal(me.body.providerPhoneNumberId, '1065550001');
    });

    it('answers --help for every command with exit 0', async () => {
      const user = newUser();
      for (const args of [['--help'], ['login', '--help'], ['keys', '--help'], ['send', '--help'], ['webhooks', 'listen', '--help'], ['messages', 'tail', '--help']]) {
        const help = await user.run(args);
        assert.equal(help.code, 0, args.join(' '));
        assert.match(help.stdout, /Usage: svc/, args.join(' '));
      }
      assert.match((await user.run(['send', '--help'])).stdout, /Exit codes/);
    });
  });

  describe('errors and exit codes', () => {
    it('exits 3 for a refused key at login, and saves nothing', async () => {
      const user = newUser();
      const login = await user.run(['login'], { env: { SVC_API_KEY: 'svc_live_notarealkeynotarealkeynotarealkey12' } });
      assert.equal(login.code, 3);
      assert.match(login.stderr, /API key was refused \(401\)/);
      assert.throws(() => statSync(user.configFile));
    });

    it('exits 3 once the saved key is revoked', async () => {
      const user = newUser();
      const { key, keyId } = await server.createProject();
      assert.equal((await user.run(['login'], { env: { SVC_API_KEY: key } })).code, 0);
      const other = await server.call('POST', '/v1/api-keys', { key, body: { name: 'other' } });
      const revoked = await server.call('DELETE', `/v1/api-keys/${keyId}`, { key: other.body.key });
      assert.equal(revoked.status, 200, revoked.text);
      const listed = await user.run(['keys', 'list']);
      assert.equal(listed.code, 3, listed.stderr);
      assert.match(listed.stderr, /refused \(401\).*svc login/);
    });

    it('exits 2 when it would have to prompt without a terminal, and on bad options', async () => {
      const user = newUser();
      const login = await user.run(['login']);
      assert.equal(login.code, 2);
      assert.match(login.stderr, /SVC_API_KEY|--api-key-stdin/);
      assert.equal((await user.run(['keys', 'create'])).code, 2, 'a required option is missing');
      assert.equal((await user.run(['keys', 'list', '--bogus'])).code, 2);
      assert.equal((await user.run(['keys', 'bogus'])).code, 2);
      assert.equal((await user.run(['credentials', 'set'], { env: { SVC_API_KEY: 'svc_live_x' } })).code, 2);
    });

    it('exits 1 with the API’s words for a refused request, with --json a problem on stderr', async () => {
      const user = newUser();
      const created = await user.run(['projects', 'create', '--name', 'x', '--owner-email', 'not-an-email', '--json']);
      assert.equal(created.code, 1);
      assert.equal(created.stdout, '');
      const error = JSON.parse(created.stderr).error;
      assert.equal(error.exitCode, 1);
      assert.equal(error.problem.status, 400);
      assert.equal(error.problem.code, 'validation_failed');
    });

    it('exits 1 when svc cannot be reached', async () => {
      const user = newUser();
      const url = await closedUrl();
      const listed = await user.run(['keys', 'list'], { env: { SVC_API_KEY: 'svc_live_x', SVC_BASE_URL: url } });
      assert.equal(listed.code, 1);
      assert.equal(listed.stderr, `svc: cannot reach svc at ${url}: ECONNREFUSED\n`);
    });
  });
});
