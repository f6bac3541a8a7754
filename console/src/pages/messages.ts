import type { Message, Template } from '#sdk';
import { badge, field, h, replace, table, time } from '../dom.ts';
import { CONSOLE, type Page, type PageContext } from '../page.ts';
import { fillPlaceholders, placeholderCount } from '../templateText.ts';
import { alertBox, busy, changed, markFields, showError } from '../ui.ts';

// The messages, newest first, with filters, paging (the API's Link header) and live status
// (polled); and a form to send one.

const STATUSES = ['QUEUED', 'SENT', 'DELIVERED', 'READ', 'FAILED', 'CANCELED'];
const FILTERS = ['status', 'to', 'template', 'batchId'] as const;
const REFRESH_MS = 3000;

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

function filterForm(ctx: PageContext): HTMLFormElement {
  const value = (name: string) => ctx.query.get(name) ?? '';
  const form = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Filter messages' },
    field(
      'Status',
      h('select', { name: 'status' }, h('option', { value: '' }, 'Any'), STATUSES.map((status) => h('option', { value: status, selected: value('status') === status }, status))),
    ),
    field('To', h('input', { name: 'to', value: value('to'), placeholder: '+5511…', inputmode: 'tel' })),
    field('Template', h('input', { name: 'template', value: value('template') })),
    field('Batch', h('input', { name: 'batchId', value: value('batchId'), placeholder: 'bat_…' })),
    h('button', { type: 'submit' }, 'Filter'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const query = new URLSearchParams();
    for (const name of FILTERS) {
      const control = form.elements.namedItem(name) as HTMLInputElement;
      if (control.value.trim()) query.set(name, control.value.trim());
    }
    ctx.navigate(`${CONSOLE}/messages${query.size ? `?${query}` : ''}`);
  });
  return form;
}

/** The send form: an approved template, a recipient, and a field for each of its placeholders. */
function sendForm(ctx: PageContext): HTMLElement {
  const status = h('div');
  const templateSelect = h('select', { name: 'template', required: true }, h('option', { value: '' }, 'Loading templates…'));
  const toInput = h('input', { name: 'to', required: true, placeholder: '+5511987654321', inputmode: 'tel', autocomplete: 'off' });
  const variables = h('div', { class: 'variables' });
  const preview = h('div', { class: 'bubble', 'aria-live': 'polite' });
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'send-heading' },
    h('h2', { id: 'send-heading' }, 'Send a message'),
    field('Template', templateSelect, 'Only APPROVED templates can send.'),
    field('To', toInput, 'E.164, with the leading +.'),
    variables,
    h('h3', null, 'Preview'),
    preview,
    status,
    h('button', { type: 'submit' }, 'Send'),
  );
  let templates: Template[] = [];
  const chosen = () => templates.find((template) => template.id === templateSelect.value);
  const textOf = (template: Template, type: string) => template.components.find((component) => component.type === type)?.text ?? '';
  const inputsOf = (group: string) => [...variables.querySelectorAll<HTMLInputElement>(`input[data-group="${group}"]`)];

  function drawPreview() {
    const template = chosen();
    if (!template) return replace(preview, h('p', { class: 'muted' }, 'Choose a template.'));
    const header = textOf(template, 'HEADER');
    const footer = textOf(template, 'FOOTER');
    replace(
      preview,
      header ? h('p', { class: 'bubble-header' }, fillPlaceholders(header, inputsOf('header').map((input) => input.value))) : null,
      h('p', { class: 'bubble-body' }, fillPlaceholders(textOf(template, 'BODY'), inputsOf('body').map((input) => input.value))),
      footer ? h('p', { class: 'bubble-footer' }, footer) : null,
    );
  }

  function drawVariables() {
    const template = chosen();
    const inputs = (group: string, label: string, count: number) =>
      Array.from({ length: count }, (_, i) =>
        field(`${label} {{${i + 1}}}`, h('input', { name: `${group}${i + 1}`, 'data-group': group, required: true, oninput: drawPreview })),
      );
    replace(
      variables,
      template ? inputs('header', 'Header', placeholderCount(textOf(template, 'HEADER'))) : null,
      template ? inputs('body', 'Body', placeholderCount(textOf(template, 'BODY'))) : null,
    );
    drawPreview();
  }
  templateSelect.addEventListener('change', drawVariables);

  void ctx.api
    .get<Template[]>('/v1/templates', { limit: 200 })
    .then((all) => {
      templates = all.filter((template) => template.status === 'APPROVED');
      replace(
        templateSelect,
        h('option', { value: '' }, templates.length ? 'Choose…' : 'No approved template yet'),
        templates.map((template) => h('option', { value: template.id }, `${template.name} (${template.language})`)),
      );
      drawVariables();
    })
    .catch((error: unknown) => replace(status, alertBox(error)));

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const template = chosen();
    if (!template) return;
    const values = (group: string) => Object.fromEntries(inputsOf(group).map((input, i) => [String(i + 1), input.value]));
    const body = {
      to: toInput.value.trim(),
      template: template.name,
      language: template.language,
      ...(inputsOf('body').length > 0 && { variables: values('body') }),
      ...(inputsOf('header').length > 0 && { headerVariables: values('header') }),
    };
    void busy(form, async () => {
      try {
        const message = await ctx.api.post<Message>('/v1/messages', body);
        ctx.announce(`Message ${message.id} queued.`);
        ctx.navigate(`${CONSOLE}/messages/${message.id}`);
      } catch (error) {
        markFields(form, error);
        replace(status, alertBox(error));
      }
    });
  });
  drawPreview();
  return h('details', { class: 'send' }, h('summary', null, 'Send a message'), form);
}

export const messagesPage: Page = {
  title: 'Messages',
  async render(ctx) {
    const cursor = ctx.query.get('cursor') ?? undefined;
    const query = Object.fromEntries(FILTERS.map((name) => [name, ctx.query.get(name) ?? undefined]));
    const body = h('tbody');
    const results = h('div');
    const pager = h('nav', { class: 'pager', 'aria-label': 'Pages' });
    replace(
      ctx.main,
      h('h1', { tabindex: -1 }, 'Messages'),
      sendForm(ctx),
      filterForm(ctx),
      results,
      pager,
    );
    const last = { value: '' };
    const load = async () => {
      const page = await ctx.api.page<ListedMessage>('/v1/messages', { ...query, cursor, limit: 50 });
      if (ctx.signal.aborted || !changed(last, page)) return;
      if (page.items.length === 0) {
        replace(results, h('p', { class: 'empty' }, cursor || Object.values(query).some(Boolean) ? 'No message matches.' : 'No message yet: send one above, or with POST /v1/messages.'));
      } else {
        replace(body, page.items.map(messageRow));
        if (!results.contains(body)) replace(results, table('Messages, newest first (refreshed every 3 seconds)', ['Id', 'To', 'Template', 'Status', 'Queued', 'Updated'], body));
      }
      const here = new URLSearchParams(ctx.query);
      here.delete('cursor');
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
