import type { WebhookDelivery } from '#sdk';
import { seg, SvcError } from '../api.ts';
import { badge, h, replace, time } from '../dom.ts';
import { CONSOLE, type Page } from '../page.ts';
import { alertBox, busy, changed, copyButton, errorText, loading } from '../ui.ts';

// One webhook delivery: the request svc sends (URL, the body, the same bytes on every attempt)
// and each attempt's response (status, time, error, the first 1 KiB of the body). Retry sends it
// again. Polled while pending.

const REFRESH_MS = 2000;

type DetailedDelivery = WebhookDelivery & { payload?: string };

/** The body as sent, indented when it is JSON (it always is; kept as is otherwise). */
function pretty(payload: string): string {
  try {
    return JSON.stringify(JSON.parse(payload), null, 2);
  } catch {
    return payload;
  }
}

function attemptItem(attempt: DetailedDelivery['attempts'][number]): HTMLElement {
  return h(
    'li',
    { class: 'card attempt', 'data-attempt': attempt.attempt },
    h(
      'p',
      null,
      h('strong', null, `Attempt ${attempt.attempt}`),
      ', ',
      time(attempt.at),
      ': ',
      attempt.statusCode !== undefined ? h('span', { class: 'response-status' }, `HTTP ${attempt.statusCode}`) : 'no answer',
      ` in ${attempt.durationMs} ms`,
    ),
    attempt.error ? h('p', { class: 'muted' }, attempt.error) : null,
    h('p', { class: 'muted' }, 'To ', h('code', null, attempt.url)),
    h('h4', null, 'Response body'),
    attempt.responseBody ? h('pre', { class: 'json response-body' }, attempt.responseBody) : h('p', { class: 'muted' }, 'Empty.'),
  );
}

export const deliveryPage: Page = {
  title: 'Delivery',
  async render(ctx) {
    const id = ctx.params[0]!;
    const path = `/v1/webhook-deliveries/${seg(id)}`;
    const heading = h('h1', { tabindex: -1 }, 'Webhook delivery');
    const actions = h('div', { class: 'actions' });
    const body = h('div', null, loading('the delivery'));
    replace(ctx.main, h('p', null, h('a', { href: `${CONSOLE}/deliveries` }, '← Deliveries')), heading, actions, body);
    const last = { value: '' };
    let pending = false;

    const load = async () => {
      const delivery = await ctx.api.get<DetailedDelivery>(path);
      pending = delivery.status === 'pending';
      if (ctx.signal.aborted || !changed(last, delivery)) return;
      heading.textContent = `Webhook delivery: ${delivery.event}`;
      const pair = (label: string, value: Node | string | null | undefined) => [h('dt', null, label), h('dd', null, value || '—')];
      replace(
        body,
        h(
          'dl',
          { class: 'facts' },
          pair('Status', h('span', { 'data-status': delivery.status }, badge(delivery.status))),
          pair('Event', delivery.event),
          pair('Delivery id', h('code', null, delivery.id)),
          pair('Message', delivery.messageId ? h('a', { href: `${CONSOLE}/messages/${delivery.messageId}` }, delivery.messageId) : null),
          pair('URL', h('code', null, delivery.url)),
          pair('Created', time(delivery.createdAt) as Node),
          delivery.nextAttemptAt ? pair('Next attempt', time(delivery.nextAttemptAt) as Node) : null,
          delivery.circuit ? pair('Waiting', `The receiver ${delivery.circuit.origin} keeps failing: no attempt before ${new Date(delivery.circuit.retryAt).toLocaleString()}.`) : null,
        ),
        h(
          'section',
          { 'aria-labelledby': 'request-heading' },
          h('h2', { id: 'request-heading' }, 'Request'),
          h('p', { class: 'muted' }, 'POST, signed (Standard Webhooks), the same body on every attempt.'),
          delivery.payload !== undefined
            ? [h('pre', { class: 'json request-body' }, pretty(delivery.payload)), copyButton(() => delivery.payload!, ctx.announce, 'Copy body')]
            : h('p', { class: 'muted' }, 'This server does not show request bodies.'),
        ),
        h(
          'section',
          { 'aria-labelledby': 'attempts-heading' },
          h('h2', { id: 'attempts-heading' }, 'Responses'),
          delivery.attempts.length === 0 ? h('p', { class: 'muted' }, 'No attempt yet.') : h('ol', { class: 'attempt-list' }, delivery.attempts.map(attemptItem)),
        ),
      );
      const retry = h('button', { type: 'button', class: 'secondary' }, 'Retry now');
      retry.addEventListener('click', () => {
        void busy(retry, async () => {
          try {
            await ctx.api.post(`${path}/retry`);
            ctx.announce('Delivery queued again.');
            await load();
          } catch (error) {
            ctx.announce(errorText(error));
          }
        });
      });
      replace(actions, retry);
    };
    try {
      await load();
    } catch (error) {
      replace(body, alertBox(error instanceof SvcError && error.status === 404 ? new Error(`No delivery ${id} in this project.`) : error));
      return;
    }
    ctx.poll(REFRESH_MS, async () => {
      if (pending) await load();
    });
  },
};
