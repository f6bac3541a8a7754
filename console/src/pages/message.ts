import type { MessageEvent, WebhookDelivery } from '#sdk';
import { isMissingEndpoint, seg, SvcError } from '../api.ts';
import { badge, h, replace, time } from '../dom.ts';
import { CONSOLE, type Page, type PageContext } from '../page.ts';
import { bubble, type BubbleContent, type BubbleHeader } from '../bubble.ts';
import { alertBox, busy, changed, errorText, loading, notAvailable } from '../ui.ts';
import type { ListedMessage } from './messages.ts';

// One message: its fields, what the recipient reads, and its timeline (GET …/events): each status
// change and each reply of the recipient (a tapped button, a text), with their webhook deliveries
// and attempts. Polled until nothing can change but replies, then more slowly.

const REFRESH_MS = 2000;
const FINAL = new Set(['READ', 'FAILED', 'CANCELED']);
const ROUTES: Record<string, string> = { cloud_api: 'Cloud API', marketing_messages: 'Marketing Messages API' };

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
    // Which WhatsApp API took it (issue 23): set once the provider took the message.
    message.route ? row('Route', ROUTES[message.route] ?? message.route) : null,
    message.error ? row('Error', `${message.error.code} ${message.error.title}: ${message.error.message}`) : null,
  );
}

function content(message: DetailedMessage): HTMLElement {
  const rendered = message.content as BubbleContent & { header?: BubbleHeader };
  return h('section', { 'aria-labelledby': 'content-heading' }, h('h2', { id: 'content-heading' }, 'What the recipient reads'), h('div', { class: 'phone' }, bubble(rendered)));
}

/** A recipient's answer (CONTRACT §9): a tapped button, or a text written in reply. */
function replyText(reply: NonNullable<MessageEvent['reply']>): Node {
  return h(
    'p',
    { class: 'reply', 'data-reply': reply.type },
    h('span', { class: 'reply-label' }, reply.type === 'button' ? 'Tapped the button ' : 'Replied '),
    h('q', null, reply.text),
    reply.payload !== undefined && reply.payload !== reply.text ? h('span', { class: 'muted' }, ` (payload ${reply.payload})`) : null,
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
    h('p', null, 'Webhook to ', h('code', null, delivery.url), ': ', badge(delivery.status), ' ', h('a', { href: `${CONSOLE}/deliveries/${delivery.id}` }, 'Details'), ' ', retry),
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
          { 'data-status': event.reply ? null : event.status, 'data-event': event.event ?? 'message.queued' },
          event.reply
            ? h('p', null, h('span', { class: 'badge badge-replied' }, 'REPLY'), ' ', time(event.occurredAt), h('span', { class: 'muted' }, ` ${event.event}`))
            : h('p', null, badge(event.status), ' ', time(event.occurredAt), event.event ? h('span', { class: 'muted' }, ` ${event.event}`) : null),
          event.reply ? replyText(event.reply) : null,
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
    const body = h('div', null, loading('the message'));
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
    let ticks = 0;
    ctx.poll(REFRESH_MS, async () => {
      // A final message's status changes no more, but the recipient may still reply: looked at
      // less often then, unless a webhook delivery is still pending.
      ticks += 1;
      if (message && FINAL.has(message.status) && !last.value.includes('"pending"') && ticks % 5 !== 0) return;
      await load();
    });
  },
};
