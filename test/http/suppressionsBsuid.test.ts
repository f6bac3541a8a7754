import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { RECIPIENT_MAX_LENGTH } from '../../src/domain/messageRequest.ts';
import { databaseKinds } from '../support/databases.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

// A suppression is addressed by its recipient in the path, a phone number or a business-scoped
// user id: Meta's BSUIDs run to a country code, `ENT.` for a parent id and 128 letters and digits
// (business-scoped-user-ids), far past the 32 characters of a phone number.

const LONGEST = `US.ENT.${'a1B2'.repeat(32)}`;

for (const kind of databaseKinds()) {
  describe(`suppressions of a long BSUID (${kind})`, () => {
    let server: TestServer;
    let key: string;
    before(async () => {
      server = await startTestServer(kind);
      ({ key } = await server.createProject());
    });
    after(() => server.close());

    it('are added, read and lifted by the BSUID in the path', async () => {
      assert.equal(LONGEST.length, RECIPIENT_MAX_LENGTH);
      const added = await server.call('POST', '/v1/suppressions', { key, body: { phoneNumber: LONGEST, reason: 'asked by chat' } });
      assert.ok(added.status === 200 || added.status === 201, added.text);
      const path = `/v1/suppressions/${encodeURIComponent(LONGEST)}`;
      const read = await server.call('GET', path, { key });
      assert.equal(read.status, 200, read.text);
      assert.equal(read.body.phoneNumber, LONGEST);
      const lifted = await server.call('DELETE', path, { key });
      assert.ok(lifted.status === 200 || lifted.status === 204, lifted.text);
      assert.equal((await server.call('GET', path, { key })).status, 404);
    });

    it('refuse an id longer than Meta’s as invalid', async () => {
      for (const id of [`US.ENT.${'a'.repeat(129)}`, `US.${'a'.repeat(300)}`]) {
        const reply = await server.call('GET', `/v1/suppressions/${encodeURIComponent(id)}`, { key });
        assert.equal(reply.status, 400, reply.text);
        assert.equal(reply.body.code, 'validation_failed');
      }
    });
  });
}
