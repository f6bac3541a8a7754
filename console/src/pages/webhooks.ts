import { seg } from '../api.ts';
import { field, h, replace, table, time } from '../dom.ts';
import { CONSOLE, type Page, type PageContext } from '../page.ts';
import { alertBox, busy, confirmDialog, errorText, markFields, showError } from '../ui.ts';

// Webhook endpoints (issue 12): list, create, edit, delete, send a test event. The project's
// callbackUrl keeps working beside them; it is set on the Provider page.

export interface WebhookEndpoint {
  id: string;
  url: string;
  events: string[];
  enabled: boolean;
  description: string | null;
  createdAt: string;
  updatedAt: string;
}

const EVENTS = ['message.sent', 'message.delivered', 'message.read', 'message.failed', 'message.canceled', 'template.approved', 'template.rejected'];

/** The form for a new endpoint, or for editing `endpoint`. */
function endpointForm(ctx: PageContext, endpoint: WebhookEndpoint | undefined, done: () => Promise<void>): HTMLFormElement {
  const url = h('input', { name: 'url', type: 'url', required: true, value: endpoint?.url ?? '', placeholder: 'https://example.com/webhooks/svc' });
  const description = h('input', { name: 'description', value: endpoint?.description ?? '', maxlength: 500 });
  const enabled = h('input', { name: 'enabled', type: 'checkbox', checked: endpoint?.enabled ?? true });
  // An endpoint for every event lists them all (or none): every box is checked then.
  const every = !endpoint || endpoint.events.length === 0;
  const events = EVENTS.map((event) => h('input', { type: 'checkbox', name: 'events', value: event, checked: every || endpoint.events.includes(event) }));
  const status = h('div');
  const form = h(
    'form',
    { class: 'card', 'aria-label': endpoint ? `Edit endpoint ${endpoint.url}` : 'Add an endpoint' },
    endpoint ? h('h3', null, 'Edit endpoint') : h('h2', null, 'Add an endpoint'),
    field('URL', url, 'https; a private address only when svc runs with SVC_ALLOW_PRIVATE_CALLBACKS=true.'),
    field('Description', description),
    h(
      'fieldset',
      { class: 'checks' },
      h('legend', null, 'Events it receives'),
      events.map((box) => h('label', null, box, ` ${box.value}`)),
    ),
    h('label', { class: 'check' }, enabled, ' Enabled'),
    status,
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, endpoint ? 'Save' : 'Add endpoint'), endpoint ? h('button', { type: 'button', class: 'secondary', onclick: () => void done() }, 'Cancel') : null),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const chosen = events.filter((box) => box.checked).map((box) => box.value);
    if (chosen.length === 0) {
      replace(status, h('p', { class: 'alert', role: 'alert' }, 'Choose at least one event.'));
      return;
    }
    const body = {
      url: url.value.trim(),
      ...((endpoint || description.value.trim()) && { description: description.value.trim() }),
      enabled: enabled.checked,
      // A new endpoint for every event leaves the list out: it then gets events added later too.
      ...((endpoint || chosen.length < EVENTS.length) && { events: chosen }),
    };
    void busy(form, async () => {
      try {
        if (endpoint) await ctx.api.patch(`/v1/webhook-endpoints/${seg(endpoint.id)}`, body);
        else await ctx.api.post('/v1/webhook-endpoints', body);
        ctx.announce(endpoint ? 'Endpoint saved.' : 'Endpoint added.');
        if (!endpoint) form.reset();
        await done();
      } catch (error) {
        markFields(form, error);
        replace(status, alertBox(error));
      }
    });
  });
  return form;
}

function endpointRow(ctx: PageContext, endpoint: WebhookEndpoint, reload: () => Promise<void>): HTMLTableRowElement {
  const row = h('tr');
  const edit = h('button', { type: 'button', class: 'secondary small' }, 'Edit');
  const test = h('button', { type: 'button', class: 'secondary small' }, 'Send test event');
  const remove = h('button', { type: 'button', class: 'danger small' }, 'Delete');
  edit.addEventListener('click', () => {
    const cell = h('td', { colspan: 5 });
    replace(row, cell);
    replace(cell, endpointForm(ctx, endpoint, reload));
    cell.querySelector('input')?.focus();
  });
  test.addEventListener('click', () => {
    void busy(test, async () => {
      try {
        const { deliveryId } = await ctx.api.post<{ deliveryId: string }>(`/v1/webhook-endpoints/${seg(endpoint.id)}/test`);
        ctx.announce(`Test event sent: delivery ${deliveryId}.`);
      } catch (error) {
        ctx.announce(errorText(error));
      }
    });
  });
  remove.addEventListener('click', () => {
    void (async () => {
      if (!(await confirmDialog(`Delete the endpoint ${endpoint.url}? It receives no more events.`, 'Delete'))) return;
      try {
        await ctx.api.del(`/v1/webhook-endpoints/${seg(endpoint.id)}`);
        ctx.announce('Endpoint deleted.');
        await reload();
      } catch (error) {
        ctx.announce(errorText(error));
      }
    })();
  });
  replace(
    row,
    h('td', null, h('code', null, endpoint.url), endpoint.description ? h('div', { class: 'muted' }, endpoint.description) : null),
    h('td', null, endpoint.events.length === 0 || endpoint.events.length === EVENTS.length ? 'all' : endpoint.events.join(', ')),
    h('td', null, endpoint.enabled ? 'enabled' : 'disabled'),
    h('td', null, time(endpoint.createdAt)),
    h('td', { class: 'actions' }, edit, test, remove),
  );
  return row;
}

export const webhooksPage: Page = {
  title: 'Webhooks',
  async render(ctx) {
    const callback = h('p', { class: 'muted' });
    const results = h('div');
    const body = h('tbody');
    const formSlot = h('div');
    replace(
      ctx.main,
      h('h1', { tabindex: -1 }, 'Webhooks'),
      callback,
      h('p', null, 'Every attempt of every delivery is on the ', h('a', { href: `${CONSOLE}/deliveries` }, 'Deliveries'), ' page.'),
      h('h2', null, 'Endpoints'),
      results,
      formSlot,
    );
    void ctx.api
      .get<{ callbackUrl?: string }>('/v1/projects/me')
      .then((project) =>
        replace(
          callback,
          project.callbackUrl ? ['The project’s callback URL ', h('code', null, project.callbackUrl), ' gets every event. '] : 'The project has no callback URL. ',
          h('a', { href: `${CONSOLE}/provider` }, 'Change it on the Provider page.'),
        ),
      )
      .catch(() => {});

    const load = async () => {
      const page = await ctx.api.page<WebhookEndpoint>('/v1/webhook-endpoints', { limit: 200 });
      if (ctx.signal.aborted) return;
      if (page.items.length === 0) replace(results, h('p', { class: 'empty' }, 'No endpoint yet.'));
      else {
        replace(body, page.items.map((endpoint) => endpointRow(ctx, endpoint, load)));
        replace(results, table('Webhook endpoints', ['URL', 'Events', 'State', 'Created', 'Actions'], body));
      }
    };
    try {
      await load();
    } catch (error) {
      showError(results, error, 'Webhook endpoints');
      return;
    }
    replace(formSlot, endpointForm(ctx, undefined, load));
  },
};
