import type { WebhookDelivery } from '#sdk';
import { seg } from '../api.ts';
import { badge, field, h, replace, table, time } from '../dom.ts';
import { CONSOLE, type Page, type PageContext } from '../page.ts';
import { busy, changed, errorText, loading, showError } from '../ui.ts';

// Webhook deliveries, newest first (polled): retry one now, or re-queue every failed one since a
// time (POST /v1/webhook-deliveries/recover, issue 12).

const REFRESH_MS = 3000;
const STATUSES = ['pending', 'succeeded', 'failed'];

function lastAttempt(delivery: WebhookDelivery): string {
  const attempt = delivery.attempts.at(-1);
  if (!attempt) return 'none yet';
  const outcome = attempt.statusCode !== undefined ? `HTTP ${attempt.statusCode}` : (attempt.error ?? 'no answer');
  return `#${attempt.attempt}: ${outcome}${attempt.statusCode !== undefined && attempt.error ? ` (${attempt.error})` : ''}`;
}

function deliveryRow(ctx: PageContext, delivery: WebhookDelivery, reload: () => Promise<void>): HTMLTableRowElement {
  const retry = h('button', { type: 'button', class: 'secondary small' }, 'Retry');
  retry.addEventListener('click', () => {
    void busy(retry, async () => {
      try {
        await ctx.api.post(`/v1/webhook-deliveries/${seg(delivery.id)}/retry`);
        ctx.announce(`Delivery ${delivery.id} queued again.`);
        await reload();
      } catch (error) {
        ctx.announce(errorText(error));
      }
    });
  });
  const messageId = (delivery as { messageId?: string | null }).messageId;
  return h(
    'tr',
    { 'data-delivery': delivery.id },
    h('td', null, h('a', { href: `${CONSOLE}/deliveries/${delivery.id}`, title: 'Request and response' }, time(delivery.createdAt))),
    h('td', null, delivery.event),
    h('td', null, messageId ? h('a', { href: `${CONSOLE}/messages/${messageId}` }, messageId) : '—'),
    // One line, cut with an ellipsis (the whole URL in its title and on the delivery's page).
    h('td', { class: 'url-cell' }, h('code', { title: delivery.url }, delivery.url)),
    h('td', { 'data-status': delivery.status }, badge(delivery.status)),
    h('td', null, lastAttempt(delivery)),
    h('td', null, delivery.status === 'pending' ? time(delivery.nextAttemptAt) : '—'),
    h('td', null, retry),
  );
}

function recoverForm(ctx: PageContext, reload: () => Promise<void>): HTMLFormElement {
  // datetime-local speaks the reader's local time; the API gets UTC.
  const dayAgo = new Date(Date.now() - 86_400_000);
  const local = new Date(dayAgo.getTime() - dayAgo.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
  const since = h('input', { name: 'since', type: 'datetime-local', required: true, value: local });
  const status = h('div');
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'recover-heading' },
    h('h2', { id: 'recover-heading' }, 'Recover failed deliveries'),
    h('p', { class: 'muted' }, 'After an outage of your receiver: every failed delivery whose last attempt is at or after this time is queued again.'),
    field('Since (your local time)', since),
    status,
    h('button', { type: 'submit' }, 'Recover'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void busy(form, async () => {
      try {
        const { requeued } = await ctx.api.post<{ requeued: number }>('/v1/webhook-deliveries/recover', { since: new Date(since.value).toISOString() });
        replace(status, h('p', { class: 'notice', role: 'status' }, `${requeued} ${requeued === 1 ? 'delivery' : 'deliveries'} queued again.`));
        await reload();
      } catch (error) {
        showError(status, error, 'Recovering deliveries');
      }
    });
  });
  return form;
}

export const deliveriesPage: Page = {
  title: 'Deliveries',
  async render(ctx) {
    const cursor = ctx.query.get('cursor') ?? undefined;
    const filter = { status: ctx.query.get('status') ?? undefined, messageId: ctx.query.get('messageId') ?? undefined };
    const results = h('div', null, loading('deliveries'));
    const body = h('tbody');
    const pager = h('nav', { class: 'pager', 'aria-label': 'Pages' });
    const statusSelect = h(
      'select',
      { name: 'status' },
      h('option', { value: '' }, 'Any'),
      STATUSES.map((status) => h('option', { value: status, selected: filter.status === status }, status)),
    );
    const filters = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter deliveries' }, field('Status', statusSelect), h('button', { type: 'submit' }, 'Filter'));
    filters.addEventListener('submit', (event) => {
      event.preventDefault();
      ctx.navigate(`${CONSOLE}/deliveries${statusSelect.value ? `?status=${statusSelect.value}` : ''}`);
    });
    const last = { value: '' };
    const load = async () => {
      const page = await ctx.api.page<WebhookDelivery>('/v1/webhook-deliveries', { ...filter, cursor, limit: 50 });
      if (ctx.signal.aborted || !changed(last, page)) return;
      if (page.items.length === 0) replace(results, h('p', { class: 'empty' }, 'No delivery yet. Deliveries appear once the project has a callback URL or an endpoint, and a message changes status.'));
      else {
        replace(body, page.items.map((delivery) => deliveryRow(ctx, delivery, load)));
        if (!results.contains(body)) {
          replace(results, table('Webhook deliveries, newest first (refreshed every 3 seconds)', ['Created', 'Event', 'Message', 'URL', 'Status', 'Last attempt', 'Next attempt', 'Action'], body));
        }
      }
      const next = new URLSearchParams(ctx.query);
      if (page.nextCursor) next.set('cursor', page.nextCursor);
      replace(
        pager,
        cursor ? h('a', { href: `${CONSOLE}/deliveries${filter.status ? `?status=${filter.status}` : ''}` }, 'First page') : null,
        page.nextCursor ? h('a', { href: `${CONSOLE}/deliveries?${next}`, rel: 'next' }, 'Next page') : null,
      );
    };
    replace(ctx.main, h('h1', { tabindex: -1 }, 'Deliveries'), filters, results, pager, recoverForm(ctx, load));
    try {
      await load();
    } catch (error) {
      showError(results, error, 'Webhook deliveries');
      return;
    }
    ctx.poll(REFRESH_MS, load);
  },
};
