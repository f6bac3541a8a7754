import type { Message } from '#sdk';
import type { Api } from '../api.ts';
import { badge, field, h, replace, table, time } from '../dom.ts';
import { onboarding } from '../onboarding.ts';
import { CONSOLE, type Page, type PageContext } from '../page.ts';
import { sendForm } from '../sendForm.ts';
import { busy, changed, errorText, loading, showError } from '../ui.ts';

// The messages, newest first, with filters (status, a message id or phone number, template,
// batch, queued dates), paging (the API's Link header), live status (polled) and a CSV export of
// the filtered list; the onboarding checklist while the project is new; and the send form.

const STATUSES = ['QUEUED', 'SENT', 'DELIVERED', 'READ', 'FAILED', 'CANCELED'];
const FILTERS = ['status', 'q', 'template', 'batchId', 'from', 'until'] as const;
const REFRESH_MS = 3000;
/** A CSV export reads at most this many messages (its note says so when there were more). */
const EXPORT_LIMIT = 10_000;

export type ListedMessage = Message & { batchId?: string | null; scheduledFor?: string | null };

function messageRow(message: ListedMessage): HTMLTableRowElement {
  return h(
    'tr',
    null,
    h('td', null, h('a', { href: `${CONSOLE}/messages/${message.id}` }, message.id)),
    h('td', null, message.to),
    h('td', null, `${message.template} (${message.language})`),
    h('td', { 'data-status': message.status }, badge(message.status)),
    h('td', null, time(message.queuedAt)),
    h('td', null, time(message.updatedAt)),
  );
}

/** A yyyy-mm-dd day (the reader's local calendar) as the UTC instant it starts, plus `days`. */
function dayStart(day: string, days = 0): string | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!match) return undefined;
  return new Date(Number(match[1]), Number(match[2]) - 1, Number(match[3]) + days).toISOString();
}

/** The API's list query from the page's: the search box is a phone number here (an id opens the message). */
function apiQuery(query: URLSearchParams): Record<string, string | undefined> {
  const q = query.get('q')?.trim();
  return {
    status: query.get('status') ?? undefined,
    to: q && !q.startsWith('msg_') ? q : undefined,
    template: query.get('template') ?? undefined,
    batchId: query.get('batchId') ?? undefined,
    since: dayStart(query.get('from') ?? ''),
    until: dayStart(query.get('until') ?? '', 1),
  };
}

function filterForm(ctx: PageContext): HTMLFormElement {
  const value = (name: string) => ctx.query.get(name) ?? '';
  const form = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Filter messages' },
    field('Search', h('input', { name: 'q', type: 'search', value: value('q'), placeholder: 'msg_… or +5511…', autocomplete: 'off' }), 'A message id, or a phone number.'),
    field(
      'Status',
      h('select', { name: 'status' }, h('option', { value: '' }, 'Any'), STATUSES.map((status) => h('option', { value: status, selected: value('status') === status }, status))),
    ),
    field('Template', h('input', { name: 'template', value: value('template') })),
    field('Batch', h('input', { name: 'batchId', value: value('batchId'), placeholder: 'bat_…' })),
    field('Queued from', h('input', { name: 'from', type: 'date', value: value('from') })),
    field('Queued until', h('input', { name: 'until', type: 'date', value: value('until') }), 'That day included.'),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Filter'), h('a', { href: `${CONSOLE}/messages` }, 'Clear')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const search = (form.elements.namedItem('q') as HTMLInputElement).value.trim();
    // An id is one message: its own page, not a list of one.
    if (/^msg_\S+$/.test(search)) return ctx.navigate(`${CONSOLE}/messages/${encodeURIComponent(search)}`);
    const query = new URLSearchParams();
    for (const name of FILTERS) {
      const control = form.elements.namedItem(name) as HTMLInputElement;
      if (control.value.trim()) query.set(name, control.value.trim());
    }
    ctx.navigate(`${CONSOLE}/messages${query.size ? `?${query}` : ''}`);
  });
  return form;
}

const CSV_COLUMNS = ['id', 'to', 'template', 'language', 'status', 'queuedAt', 'sentAt', 'deliveredAt', 'readAt', 'failedAt', 'errorCode', 'errorTitle', 'batchId'] as const;

/** One CSV cell: quoted when needed, and never read as a formula by a spreadsheet. */
function cell(value: unknown): string {
  let text = value === null || value === undefined ? '' : String(value);
  // A phone number (+5511…) stays as it is; "=…", "@…", "+A…" could run as a formula.
  if (/^[=@\t\r]/.test(text) || /^[+-](?!\d+$)/.test(text)) text = `'${text}`;
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

async function exportCsv(api: Api, query: Record<string, string | undefined>): Promise<{ csv: string; count: number; truncated: boolean }> {
  const rows: string[] = [CSV_COLUMNS.join(',')];
  let cursor: string | undefined;
  let count = 0;
  do {
    const page = await api.page<ListedMessage>('/v1/messages', { ...query, cursor, limit: 100 });
    for (const message of page.items) {
      const values: Record<(typeof CSV_COLUMNS)[number], unknown> = {
        id: message.id,
        to: message.to,
        template: message.template,
        language: message.language,
        status: message.status,
        queuedAt: message.queuedAt,
        sentAt: message.sentAt,
        deliveredAt: message.deliveredAt,
        readAt: message.readAt,
        failedAt: message.failedAt,
        errorCode: message.error?.code,
        errorTitle: message.error?.title,
        batchId: message.batchId,
      };
      rows.push(CSV_COLUMNS.map((column) => cell(values[column])).join(','));
      count += 1;
    }
    cursor = page.nextCursor;
  } while (cursor && count < EXPORT_LIMIT);
  return { csv: `${rows.join('\r\n')}\r\n`, count, truncated: cursor !== undefined };
}

function exportButton(ctx: PageContext, query: Record<string, string | undefined>): HTMLElement {
  const status = h('span', { class: 'muted', role: 'status' });
  const button = h('button', { type: 'button', class: 'secondary' }, 'Export CSV');
  button.addEventListener('click', () => {
    replace(status, 'Reading the messages…');
    void busy(button, async () => {
      try {
        const { csv, count, truncated } = await exportCsv(ctx.api, query);
        const link = h('a', { href: URL.createObjectURL(new Blob([csv], { type: 'text/csv' })), download: `messages-${new Date().toISOString().slice(0, 10)}.csv` });
        document.body.append(link);
        link.click();
        link.remove();
        setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
        replace(status, `${count} ${count === 1 ? 'message' : 'messages'} exported${truncated ? ` (the first ${EXPORT_LIMIT}: narrow the filters for the rest)` : ''}.`);
      } catch (error) {
        replace(status, errorText(error));
      }
    });
  });
  return h('div', { class: 'actions export' }, button, status);
}

export const messagesPage: Page = {
  title: 'Messages',
  async render(ctx) {
    const cursor = ctx.query.get('cursor') ?? undefined;
    const query = apiQuery(ctx.query);
    const filtered = FILTERS.some((name) => ctx.query.get(name));
    const body = h('tbody');
    const results = h('div', null, loading('messages'));
    const pager = h('nav', { class: 'pager', 'aria-label': 'Pages' });
    const checklist = h('div');
    replace(
      ctx.main,
      h('h1', { tabindex: -1 }, 'Messages'),
      checklist,
      sendForm(ctx, ctx.query.get('send') ?? undefined),
      filterForm(ctx),
      exportButton(ctx, query),
      results,
      pager,
    );
    void onboarding(ctx).then((list) => !ctx.signal.aborted && replace(checklist, list));
    const last = { value: '' };
    const load = async () => {
      const page = await ctx.api.page<ListedMessage>('/v1/messages', { ...query, cursor, limit: 50 });
      if (ctx.signal.aborted || !changed(last, page)) return;
      if (page.items.length === 0) {
        replace(results, h('p', { class: 'empty' }, cursor || filtered ? 'No message matches.' : 'No message yet: send one above, or with POST /v1/messages.'));
      } else {
        replace(body, page.items.map(messageRow));
        if (!results.contains(body)) replace(results, table('Messages, newest first (refreshed every 3 seconds)', ['Id', 'To', 'Template', 'Status', 'Queued', 'Updated'], body));
      }
      const here = new URLSearchParams(ctx.query);
      here.delete('cursor');
      here.delete('send');
      const first = here.size ? `?${here}` : '';
      if (page.nextCursor) here.set('cursor', page.nextCursor);
      replace(
        pager,
        cursor ? h('a', { href: `${CONSOLE}/messages${first}` }, 'First page') : null,
        page.nextCursor ? h('a', { href: `${CONSOLE}/messages?${here}`, rel: 'next' }, 'Next page') : null,
      );
    };
    try {
      await load();
    } catch (error) {
      showError(results, error, 'Messages');
      return;
    }
    ctx.poll(REFRESH_MS, load);
  },
};
