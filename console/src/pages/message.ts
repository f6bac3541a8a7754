import type { MessageEvent, WebhookDelivery } from '#sdk';
import { isMissingEndpoint, seg, SvcError } from '../api.ts';
import { badge, h, replace, time } from '../dom.ts';
import { CONSOLE, type Page, type PageContext } from '../page.ts';
import { alertBox, busy, changed, errorText, notAvailable } from '../ui.ts';
import type { ListedMessage } from './messages.ts';

// One message: its fields, what the recipient reads, and its timeline (GET …/events): each status
// change with its webhook deliveries and their attempts. Polled until nothing can change.

const REFRESH_MS = 2000;
const FINAL = new Set(['READ', 'FAILED', 'CANCELED']);

type DetailedMessage = ListedMessage & { canceledAt?: string | null };

function row(label: string, value: Node | string | null | undefined) {
  return [h('dt', null, label), h('dd', null, value ?? '—')];
}

function details(message: DetailedMessage): HTMLElement {
  return h(
    'dl',
    { class: 'facts' },
    row('Status', badge(message.status)),
    row('To', message.to),
    row('Template', `${message.template} (${message.language})`),
    row('Queued', time(message.queuedAt) as Node),
    message.scheduledFor ? row('Scheduled for', time(message.scheduledFor) as Node) : null,
    row('Sent', time(message.sentAt) as Node),
    row('Delivered', time(message.deliveredAt) as Node),
    row('Read', time(message.readAt) as Node),
    message.failedAt ? row('Failed', time(message.failedAt) as Node) : null,
    message.canceledAt ? row('Canceled', time(message.canceledAt) as Node) : null,
    message.batchId ? row('Batch', h('a', { href: `${CONSOLE}/messages?batchId=${message.batchId}` }, message.batchId)) : null,
    row('Provider message id', message.providerMessageId),
    message.error ? row('Error', `${message.error.code} ${message.error.title}: ${message.error.message}`) : null,
  );
}

/** A TEXT header as written; a rich template's media or location header named (CONTRACT §9). */
function headerText(header: NonNullable<DetailedMessage['content']['header']>): string {
  if (typeof header === 'string') return header;
  if (header.type === 'LOCATION') return `📍 ${header.name ?? `${header.latitude}, ${header.longitude}`}`;
  return `${header.type}: ${header.link}`;
}

function content(message: DetailedMessage): HTMLElement {
  const rendered = message.content;
  return h(
    'section',
    { 'aria-labelledby': 'content-heading' },
    h('h2', { id: 'content-heading' }, 'What the recipient reads'),
    h(
      'div',
      { class: 'bubble' },
      rendered.header ? h('p', { class: 'bubble-header' }, headerText(rendered.header)) : null,
      h('p', { class: 'bubble-body' }, rendered.body),
      rendered.footer ? h('p', { class: 'bubble-footer' }, rendered.footer) : null,
    ),
  );
}

function deliveryItem(ctx: PageContext, delivery: WebhookDelivery, reload: () => Promise<void>): HTMLElement {
  const retry = h('button', { type: 'button', class: 'secondary small', 'data-delivery': delivery.id }, 'Retry delivery');
  retry.addEventListener('click', () => {
    void busy(retry, async () => {
      try {
        await ctx.api.post(`/v1/webhook-deliveries/${seg(delivery.id)}/retry`);
        ctx.announce('Delivery queued again.');
        await reload();
      } catch (error) {
        ctx.announce(errorText(error));
      }
    });
  });
  return h(
    'li',
    { class: 'delivery' },
    h('p', null, 'Webhook to ', h('code', null, delivery.url), ': ', badge(delivery.status), ' ', retry),
    delivery.attempts.length === 0
      ? h('p', { class: 'muted' }, delivery.nextAttemptAt ? ['First attempt due ', time(delivery.nextAttemptAt)] : 'No attempt yet.')
      : h(
          'ol',
          { class: 'attempts' },
          delivery.attempts.map((attempt) =>
            h(
              'li',
              null,
              `Attempt ${attempt.attempt}, `,
              time(attempt.at),
              ': ',
              attempt.statusCode !== undefined ? `HTTP ${attempt.statusCode}` : 'no answer',
              ` in ${attempt.durationMs} ms`,
              attempt.error ? ` (${attempt.error})` : '',
            ),
          ),
        ),
    delivery.status === 'pending' && delivery.nextAttemptAt && delivery.attempts.length > 0
      ? h('p', { class: 'muted' }, 'Next attempt ', time(delivery.nextAttemptAt))
      : null,
  );
}

function timeline(ctx: PageContext, events: MessageEvent[], reload: () => Promise<void>): HTMLElement {
  return h(
    'section',
    { 'aria-labelledby': 'timeline-heading' },
    h('h2', { id: 'timeline-heading' }, 'Timeline'),
    h(
      'ol',
      { class: 'timeline' },
      events.map((event) =>
        h(
          'li',
          { 'data-status': event.status },
          h('p', null, badge(event.status), ' ', time(event.occurredAt), event.event ? h('span', { class: 'muted' }, ` ${event.event}`) : null),
          event.error ? h('p', null, `${event.error.code} ${event.error.title}: ${event.error.message}`) : null,
          event.deliveries.length > 0 ? h('ul', { class: 'deliveries' }, event.deliveries.map((delivery) => deliveryItem(ctx, delivery, reload))) : null,
        ),
      ),
    ),
  );
}

export const messagePage: Page = {
  title: 'Message',
  async render(ctx) {
    const id = ctx.params[0]!;
    const path = `/v1/messages/${seg(id)}`;
    const heading = h('h1', { tabindex: -1 }, `Message ${id}`);
    const actions = h('div', { class: 'actions' });
    const body = h('div');
    replace(ctx.main, h('p', null, h('a', { href: `${CONSOLE}/messages` }, '← Messages')), heading, actions, body);
    const last = { value: '' };
    let message: DetailedMessage | undefined;

    const load = async () => {
      const [fresh, events] = await Promise.all([ctx.api.get<DetailedMessage>(path), ctx.api.get<MessageEvent[]>(`${path}/events`)]);
      message = fresh;
      if (ctx.signal.aborted || !changed(last, [fresh, events])) return;
      replace(body, details(fresh), content(fresh), timeline(ctx, events, load));
      replace(actions, fresh.status === 'QUEUED' ? cancelButton() : null);
    };

    const cancelButton = () => {
      const button = h('button', { type: 'button', class: 'danger' }, 'Cancel message');
      button.addEventListener('click', () => {
        void busy(button, async () => {
          try {
            await ctx.api.post(`${path}/cancel`);
            ctx.announce('Message canceled.');
            await load();
          } catch (error) {
            replace(actions, button, isMissingEndpoint(error) ? notAvailable('Canceling') : alertBox(error));
          }
        });
      });
      return button;
    };

    try {
      await load();
    } catch (error) {
      replace(body, alertBox(error instanceof SvcError && error.status === 404 ? new Error(`No message ${id} in this project.`) : error));
      return;
    }
    ctx.poll(REFRESH_MS, async () => {
      // A final message changes no more, but its webhook deliveries may still be retried.
      if (message && FINAL.has(message.status) && !last.value.includes('"pending"')) return;
      await load();
    });
  },
};
