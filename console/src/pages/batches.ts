import { h, replace, table, time } from '../dom.ts';
import { CONSOLE, type Page } from '../page.ts';
import { changed, loading, showError } from '../ui.ts';

// The batches (GET /v1/batches, issue 12) and how far each has gone, polled.

const REFRESH_MS = 3000;
const COUNTED = ['QUEUED', 'SENT', 'DELIVERED', 'READ', 'FAILED', 'CANCELED'] as const;

export interface Batch {
  id: string;
  template: string;
  language: string;
  createdAt: string;
  total: number;
  counts: Partial<Record<(typeof COUNTED)[number], number>>;
}

function batchRow(batch: Batch): HTMLTableRowElement {
  const count = (status: (typeof COUNTED)[number]) => batch.counts[status] ?? 0;
  // Done: every message past QUEUED (sent on, or stopped).
  const done = batch.total - count('QUEUED');
  return h(
    'tr',
    null,
    h('td', null, h('a', { href: `${CONSOLE}/messages?batchId=${encodeURIComponent(batch.id)}` }, batch.id)),
    h('td', null, `${batch.template} (${batch.language})`),
    h('td', null, time(batch.createdAt)),
    h(
      'td',
      null,
      h('progress', { max: batch.total || 1, value: done, 'aria-label': `${batch.id}: ${done} of ${batch.total} past QUEUED` }),
      ` ${done} / ${batch.total}`,
    ),
    h('td', null, COUNTED.filter((status) => count(status) > 0).map((status) => `${status} ${count(status)}`).join(', ') || '—'),
  );
}

export const batchesPage: Page = {
  title: 'Batches',
  async render(ctx) {
    const cursor = ctx.query.get('cursor') ?? undefined;
    const results = h('div', null, loading('batches'));
    const pager = h('nav', { class: 'pager', 'aria-label': 'Pages' });
    const body = h('tbody');
    replace(
      ctx.main,
      h('h1', { tabindex: -1 }, 'Batches'),
      h('p', { class: 'muted' }, 'Batches are sent with POST /v1/messages/batch (or the CLI: svc send --csv). Each links to its messages.'),
      results,
      pager,
    );
    const last = { value: '' };
    const load = async () => {
      const page = await ctx.api.page<Batch>('/v1/batches', { cursor, limit: 50 });
      if (ctx.signal.aborted || !changed(last, page)) return;
      if (page.items.length === 0) replace(results, h('p', { class: 'empty' }, 'No batch yet.'));
      else {
        replace(body, page.items.map(batchRow));
        if (!results.contains(body)) replace(results, table('Batches, newest first', ['Batch', 'Template', 'Created', 'Progress', 'Statuses'], body));
      }
      replace(
        pager,
        cursor ? h('a', { href: `${CONSOLE}/batches` }, 'First page') : null,
        page.nextCursor ? h('a', { href: `${CONSOLE}/batches?cursor=${encodeURIComponent(page.nextCursor)}`, rel: 'next' }, 'Next page') : null,
      );
    };
    try {
      await load();
    } catch (error) {
      showError(results, error, 'Batches');
      return;
    }
    ctx.poll(REFRESH_MS, load);
  },
};
