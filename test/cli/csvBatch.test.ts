import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseCsv } from '../../src/cli/csv.ts';
import { rowsOf } from '../../src/cli/csvBatch.ts';
import { databaseKinds } from '../support/databases.ts';
import { approvedTemplate, createSender, type Sender } from '../support/sending.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { cliUser, type CliUser, FAST_SANDBOX } from './cli.ts';

describe('CSV parsing', () => {
  it('reads quoted fields with commas, doubled quotes and line breaks, CRLF and a BOM', () => {
    assert.deepEqual(parseCsv('\uFEFFto,1\r\n+5511987654321,"Ana, ""A"" Souza"\r\n\r\n+5511987654322,"two\nlines"\n'), [
      ['to', '1'],
      ['+5511987654321', 'Ana, "A" Souza'],
      ['+5511987654322', 'two\nlines'],
    ]);
  });

  it('refuses an unclosed quote and a quote inside a bare field', () => {
    assert.throws(() => parseCsv('to,1\n+5511987654321,"Ana\n'), /not closed/);
    assert.throws(() => parseCsv('to,1\n+5511987654321,An"a\n'), /quote inside/);
  });
});

describe('CSV columns of rich templates', () => {
  it('fill headerMedia, headerLocation, named variables and buttons by index', () => {
    const fields = new Map([[0, 'text' as const], [2, 'couponCode' as const]]);
    const rows = rowsOf(
      'to,first_name,header.media,header.filename,button.0,button.2,button.1.payload\n+5511900000001,Ana,https://cdn.example.com/a.pdf,a.pdf,A-1,SAVE,STOP\n',
      fields,
    );
    assert.deepEqual(rows[0]!.item, {
      to: '+5511900000001',
      variables: { first_name: 'Ana' },
      headerMedia: { link: 'https://cdn.example.com/a.pdf', filename: 'a.pdf' },
      buttons: { '0': { text: 'A-1' }, '2': { couponCode: 'SAVE' }, '1': { payload: 'STOP' } },
    });
    const located = rowsOf('to,header.latitude,header.longitude,header.name\n+5511900000001,37.48,-122.14,HQ\n');
    assert.deepEqual(located[0]!.item.headerLocation, { latitude: 37.48, longitude: -122.14, name: 'HQ' });
    assert.throws(() => rowsOf('to,header.latitude\n+5511900000001,north\n'), /header.latitude must be a number/);
    assert.throws(() => rowsOf('to,button.3\n+5511900000001,x\n', fields), /no button 3 that takes a value/);
    assert.throws(() => rowsOf('to,button.x\n+5511900000001,x\n'), /unknown CSV columns: button.x/);
  });
});

for (const kind of databaseKinds()) {
  describe(`svc send --csv (${kind})`, () => {
    let server: TestServer;
    let sender: Sender;
    let user: CliUser;

    before(async () => {
      server = await startTestServer(kind, { env: FAST_SANDBOX });
      sender = await createSender(server);
      user = cliUser(server.url);
      user.env.SVC_API_KEY = sender.key;
    });
    after(async () => {
      user.remove();
      await server.close();
    });

    const ROWS = [
      ['+5511900000001', 'Ana', 'A-1'],
      ['+5511900000002', 'Bia, Jr.', 'A-2'],
      ['+5511', 'Caio', 'A-3'], // not a phone number: rejected by the API
      ['+5511900000004', 'Duda', 'A-4'],
      ['+5511900000005', 'Edu', 'A-5'],
    ];

    function csvFile(name: string, rows = ROWS): string {
      const file = join(user.home, name);
      const quote = (cell: string) => (cell.includes(',') ? `"${cell}"` : cell);
      writeFileSync(file, ['to,1,2', ...rows.map((row) => row.map(quote).join(','))].join('\n') + '\n');
      return file;
    }

    const sendCsv = (file: string, ...extra: string[]) =>
      user.run(['send', '--csv', file, '--template', sender.templateName, '--language', sender.language, '--chunk-size', '2', '--json', ...extra]);

    async function messagesTo(numbers: string[]): Promise<number> {
      let count = 0;
      for (const to of numbers) {
        const listed = await server.call('GET', `/v1/messages?to=${encodeURIComponent(to)}`, { key: sender.key });
        count += listed.body.length;
      }
      return count;
    }

    it('sends each row in chunks, reports the rejected rows with their row numbers, exit 4', async () => {
      const file = csvFile('customers.csv');
      const sent = await sendCsv(file);
      assert.equal(sent.code, 4, sent.stderr);
      const summary = JSON.parse(sent.stdout);
      assert.equal(summary.total, 5);
      assert.equal(summary.acceptedCount, 4);
      assert.equal(summary.rejectedCount, 1);
      assert.equal(summary.batches.length, 3);
      assert.deepEqual(
        summary.rejected.map((row: { row: number; to: string; status: number; code: string }) => [row.row, row.to, row.status, row.code]),
        [[4, '+5511', 400, 'validation_failed']],
      );
      assert.equal(summary.statePath, `${file}.svc-batch.json`);
      const batch = await server.call('GET', `/v1/messages?batchId=${summary.batches[0].batchId}`, { key: sender.key });
      assert.deepEqual(batch.body.map((message: { to: string }) => message.to).sort(), ['+5511900000001', '+5511900000002']);
      const bia = batch.body.find((message: { to: string }) => message.to === '+5511900000002');
      assert.equal(bia.content.body, 'Hello Bia, Jr., your order A-2 has shipped today.');
    });

    it('resumes without duplicates: from its state file, and from the API when the state is lost', async () => {
      const file = csvFile('resume.csv', ROWS.filter((row) => row[0] !== '+5511').map(([to, ...rest]) => [to!.replace('5511900', '5511910'), ...rest]));
      const numbers = ROWS.filter((row) => row[0] !== '+5511').map(([to]) => to!.replace('5511900', '5511910'));
      const first = await sendCsv(file);
      assert.equal(first.code, 0, first.stderr);
      const summary = JSON.parse(first.stdout);
      assert.equal(summary.acceptedCount, 4);
      assert.equal(await messagesTo(numbers), 4);

      // A run that died after its first chunk: the state holds chunk 0 only; chunk 1 is in svc.
      const statePath = `${file}.svc-batch.json`;
      const state = JSON.parse(readFileSync(statePath, 'utf8'));
      state.chunks = { 0: state.chunks[0] };
      writeFileSync(statePath, JSON.stringify(state));
      const resumed = await sendCsv(file);
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.match(resumed.stderr, /Resuming: 1 of 2 chunks/);
      assert.deepEqual(JSON.parse(resumed.stdout).batches, summary.batches);
      assert.equal(await messagesTo(numbers), 4);

      // No state at all: every chunk's key is answered from svc's idempotency record.
      rmSync(statePath);
      const again = await sendCsv(file);
      assert.equal(again.code, 0, again.stderr);
      assert.deepEqual(JSON.parse(again.stdout).batches, summary.batches);
      assert.equal(await messagesTo(numbers), 4);
    });

    it('after an edit (its rejected rows fixed), sends only the rows not accepted before, and says so', async () => {
      const numbers = ['+5511920000001', '+5511920000002', '+5511920000003', '+5511920000004', '+5511920000005'];
      // 3 accepted, 2 rejected (not phone numbers).
      const file = csvFile('edited.csv', [
        [numbers[0]!, 'Ana', 'A-1'],
        ['+55119', 'Bia', 'A-2'],
        [numbers[2]!, 'Caio', 'A-3'],
        ['+55', 'Duda', 'A-4'],
        [numbers[4]!, 'Edu', 'A-5'],
      ]);
      const first = await sendCsv(file);
      assert.equal(first.code, 4, first.stderr);
      assert.deepEqual([JSON.parse(first.stdout).acceptedCount, JSON.parse(first.stdout).rejectedCount], [3, 2]);

      // The two rejected rows fixed; a spelling fixed in an accepted row too (same recipient).
      csvFile('edited.csv', [
        [numbers[0]!, 'Ana Maria', 'A-1'],
        [numbers[1]!, 'Bia', 'A-2'],
        [numbers[2]!, 'Caio', 'A-3'],
        [numbers[3]!, 'Duda', 'A-4'],
        [numbers[4]!, 'Edu', 'A-5'],
      ]);
      const fixed = await sendCsv(file);
      assert.equal(fixed.code, 0, fixed.stderr);
      const summary = JSON.parse(fixed.stdout);
      assert.deepEqual([summary.total, summary.acceptedCount, summary.rejectedCount, summary.skippedCount], [5, 2, 0, 3]);
      assert.deepEqual(summary.skipped.map((row: { row: number }) => row.row), [2, 4, 6]);
      assert.match(fixed.stderr, /3 of 5 rows were accepted by an earlier run over this file .*not sent again/);
      for (const to of numbers) assert.equal(await messagesTo([to]), 1, `one message to ${to}`);

      // Run again unchanged (the same content: resumed from the state), as text: it says so too.
      const text = await user.run(['send', '--csv', file, '--template', sender.templateName, '--language', sender.language, '--chunk-size', '2']);
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, /2 sent in 1 batch:\n {2}accepted 2, rejected 0, skipped 3 accepted by an earlier run \(not sent again\)/);
      assert.equal(await messagesTo(numbers), 5, 'still one message per recipient');

      // A state file deleted: a fresh start, which sends to everyone again (as the summary warns).
      rmSync(`${file}.svc-batch.json`);
      assert.equal((await sendCsv(file)).code, 0);
      assert.equal(await messagesTo(numbers), 10);
    });

    it('exits 2 for a CSV it cannot use, sending nothing', async () => {
      const noTo = join(user.home, 'no-to.csv');
      writeFileSync(noTo, 'phone,1,2\n+5511930000001,Ana,A-1\n');
      const refused = await sendCsv(noTo);
      assert.equal(refused.code, 2);
      // "phone" could be a named variable's column: the missing "to" is what is wrong.
      assert.match(refused.stderr, /needs a \\"to\\" column \(it has phone, 1, 2\)/);
      const unknown = join(user.home, 'unknown.csv');
      writeFileSync(unknown, 'to,First Name\n+5511930000001,Ana\n');
      assert.match((await sendCsv(unknown)).stderr, /unknown CSV columns: First Name/);
      const ragged = join(user.home, 'ragged.csv');
      writeFileSync(ragged, 'to,1,2\n+5511930000001,Ana\n');
      assert.equal((await sendCsv(ragged)).code, 2);
      assert.equal((await sendCsv(csvFile('x.csv'), '--to', '+5511930000001')).code, 2, '--csv with --to');
      assert.equal(await messagesTo(['+5511930000001']), 0);
    });

    it('sends a rich template’s media and buttons from header.media and button.N columns', async () => {
      await approvedTemplate(server, sender.key, 'promo_csv', 'en_US', [
        { type: 'HEADER', format: 'IMAGE', example: { header_handle: ['4::aW1n'] } },
        { type: 'BODY', text: 'Hi {{1}}, see our offer.' },
        { type: 'BUTTONS', buttons: [{ type: 'URL', text: 'Open', url: 'https://shop.example.com/o/{{1}}', example: ['x'] }, { type: 'COPY_CODE', example: 'SAVE' }] },
      ]);
      const file = join(user.home, 'promo.csv');
      writeFileSync(file, 'to,1,header.media,button.0,button.1\n+5511920000001,Ana,https://cdn.example.com/1.jpg,o-1,CODE1\n+5511920000002,Bia,https://cdn.example.com/2.jpg,o-2,CODE2\n');
      const sent = await user.run(['send', '--csv', file, '--template', 'promo_csv', '--language', 'en_US', '--json']);
      assert.equal(sent.code, 0, sent.stderr);
      assert.equal(JSON.parse(sent.stdout).acceptedCount, 2);
      const listed = await server.call('GET', '/v1/messages?template=promo_csv', { key: sender.key });
      const bia = listed.body.find((message: { to: string }) => message.to === '+5511920000002');
      assert.deepEqual(bia.content, {
        header: { type: 'IMAGE', link: 'https://cdn.example.com/2.jpg' },
        body: 'Hi Bia, see our offer.',
        buttons: [
          { type: 'URL', text: 'Open', url: 'https://shop.example.com/o/o-2' },
          { type: 'COPY_CODE', text: 'Copy offer code', couponCode: 'CODE2' },
        ],
      });
    });

    it('exits 1 for a template the API refuses, creating no batch', async () => {
      const file = csvFile('unknown-template.csv', [['+5511940000001', 'Ana', 'A-1']]);
      const refused = await user.run(['send', '--csv', file, '--template', 'nope', '--language', 'en_US']);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /template_not_found/);
      assert.match(refused.stderr, /run the same command again to resume/);
      assert.equal(await messagesTo(['+5511940000001']), 0);
    });
  });
}
