import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import type { MessageRow } from '../../src/db/messages.ts';
import type { SendOutcome } from '../../src/providers/provider.ts';
import { DeferredOutcomes } from '../../src/workers/deferredOutcomes.ts';

// The outcomes kept while the database cannot take them: bounded, committed once it can, and
// remembered after their commit (a claim read before it must not send the message again).

const unavailable = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
const accepted: SendOutcome = { kind: 'accepted', providerMessageId: 'wamid.1' };
const messageRow = (id: string) => ({ id }) as MessageRow;

function store(record: (message: MessageRow) => Promise<void>, limit = 3) {
  const settled: string[] = [];
  const lines: string[] = [];
  const deferred = new DeferredOutcomes({
    limit,
    record: (message) => record(message),
    settled: (id) => settled.push(id),
    logger: pino({ level: 'warn' }, { write: (line: string) => lines.push(line) }),
    rememberMs: 60_000,
  });
  return { deferred, settled, lines };
}

describe('deferred send outcomes', () => {
  it('keeps outcomes up to its limit, and commits them once the database is back', async () => {
    let up = false;
    const committed: string[] = [];
    const { deferred, settled } = store(async (message) => {
      if (!up) throw unavailable();
      committed.push(message.id);
    });
    try {
      for (const id of ['m1', 'm2', 'm3']) assert.equal(deferred.keep(messageRow(id), accepted), true);
      assert.equal(deferred.keep(messageRow('m4'), accepted), false, 'no room beyond the limit');
      assert.equal(deferred.givenUpFull, 1);
      await deferred.flush();
      assert.equal(deferred.size, 3, 'still kept while the database is away');
      assert.deepEqual(settled, []);
      assert.ok(deferred.holds('m1'));
      up = true;
      await deferred.flush();
      assert.deepEqual(committed.sort(), ['m1', 'm2', 'm3']);
      assert.deepEqual(settled.sort(), ['m1', 'm2', 'm3']);
      assert.equal(deferred.size, 0);
      assert.equal(deferred.kept, 3);
      assert.ok(deferred.holds('m2'), 'remembered after its commit');
      assert.ok(!deferred.holds('m2', Date.now() + 120_000), 'for a while');
      assert.ok(!deferred.holds('m4'));
    } finally {
      deferred.stop();
    }
  });

  it('gives up an outcome that keeps failing for another reason, and logs it', async () => {
    const { deferred, settled, lines } = store(async () => {
      throw new Error('a bug');
    });
    try {
      deferred.keep(messageRow('m1'), accepted);
      for (let i = 0; i < 5; i++) await deferred.flush();
      assert.equal(deferred.size, 0);
      assert.equal(deferred.givenUpFailing, 1);
      assert.deepEqual(settled, ['m1']);
      assert.ok(lines.some((line) => line.includes('recording a send outcome failed')), lines.join('\n'));
    } finally {
      deferred.stop();
    }
  });
});
