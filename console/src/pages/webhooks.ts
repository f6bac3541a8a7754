import { seg } from '../api.ts';
import { field, h, replace, table, time } from '../dom.ts';
import { CONSOLE, type Page, type PageContext } from '../page.ts';
import { alertBox, busy, confirmDialog, copyButton, errorText, loading, markFields, showError } from '../ui.ts';

// Webhooks: the project's signing secret (reveal, copy, rotate), and the endpoints (issue 12):
// list, create, edit, delete, send a test event. The project's callbackUrl keeps working beside
// them; it is set on the Provider page.

export interface WebhookEndpoint {
  id: string;
  url: string;
  events: string[];
  /** Every event, including ones added later (absent from servers older than the field). */
  allEvents?: boolean;
  enabled: boolean;
  description: string | null;
  createdAt: string;
  updatedAt: string;
}

const MESSAGE_EVENTS = ['message.sent', 'message.delivered', 'message.read', 'message.failed', 'message.canceled'];
const TEMPLATE_EVENTS = [
  'template.approved', 'template.rejected', 'template.paused', 'template.flagged', 'template.locked', 'template.disabled',
  'template.deleted', 'template.pending_deletion', 'template.archived', 'template.limit_exceeded', 'template.in_appeal',
];
const EVENTS = [...MESSAGE_EVENTS, ...TEMPLATE_EVENTS];

function receivesAll(endpoint: WebhookEndpoint): boolean {
  return endpoint.allEvents ?? endpoint.events.length === 0;
}

/** The form for a new endpoint, or for editing `endpoint`. */
function endpointForm(ctx: PageContext, endpoint: WebhookEndpoint | undefined, done: () => Promise<void>): HTMLFormElement {
  const url = h('input', { name: 'url', type: 'url', required: true, value: endpoint?.url ?? '', placeholder: 'https://example.com/webhooks/svc' });
  const description = h('input', { name: 'description', value: endpoint?.description ?? '', maxlength: 500 });
  const enabled = h('input', { name: 'enabled', type: 'checkbox', checked: endpoint?.enabled ?? true });
  // "All events" is its own choice, kept as such: an endpoint that takes every event also gets
  // the ones svc adds later, which a list of today's events would not.
  const every = !endpoint || receivesAll(endpoint);
  const all = h('input', { type: 'checkbox', name: 'allEvents', checked: every });
  const events = EVENTS.map((event) => h('input', { type: 'checkbox', name: 'events', value: event, checked: every || endpoint.events.includes(event), disabled: every }));
  all.addEventListener('change', () => {
    for (const box of events) {
      box.disabled = all.checked;
      if (all.checked) box.checked = true;
    }
  });
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
      h('label', { class: 'check' }, all, ' All events, including ones added later'),
      events.map((box) => h('label', null, box, ` ${box.value}`)),
    ),
    h('label', { class: 'check' }, enabled, ' Enabled'),
    status,
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, endpoint ? 'Save' : 'Add endpoint'), endpoint ? h('button', { type: 'button', class: 'secondary', onclick: () => void done() }, 'Cancel') : null),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    replace(status);
    const chosen = events.filter((box) => box.checked).map((box) => box.value);
    if (!all.checked && chosen.length === 0) {
      replace(status, h('p', { class: 'alert', role: 'alert' }, 'Choose at least one event, or all of them.'));
      return;
    }
    const body = {
      url: url.value.trim(),
      ...((endpoint || description.value.trim()) && { description: description.value.trim() }),
      enabled: enabled.checked,
      // Every event: no list when adding one, `null` when editing (both mean "all, and later ones").
      ...(all.checked ? (endpoint ? { events: null } : {}) : { events: chosen }),
    };
    void busy(form, async () => {
      try {
        if (endpoint) await ctx.api.patch(`/v1/webhook-endpoints/${seg(endpoint.id)}`, body);
        else await ctx.api.post('/v1/webhook-endpoints', body);
        ctx.announce(endpoint ? 'Endpoint saved.' : 'Endpoint added.');
        if (!endpoint) {
          form.reset();
          for (const box of events) box.disabled = true;
        }
        await done();
      } catch (error) {
        markFields(form, error);
        replace(status, alertBox(error));
      }
    });
  });
  return form;
}

interface WebhookSecret {
  secret: string;
  secrets: string[];
  previousSecretExpiresAt?: string | null;
}

/** The project's signing secret: hidden until revealed, copied, rotated (the old one kept a while). */
function signingSecret(ctx: PageContext): HTMLElement {
  const value = h('code', { class: 'key-value', id: 'signing-secret' }, 'whsec_••••••••••••••••');
  const note = h('p', { class: 'muted' });
  const status = h('div');
  let secret: string | undefined;
  const reveal = h('button', { type: 'button', class: 'secondary small' }, 'Reveal');
  const rotate = h('button', { type: 'button', class: 'danger small' }, 'Rotate');
  const copy = copyButton(() => secret ?? '', ctx.announce);
  copy.disabled = true;
  const show = (answer: WebhookSecret) => {
    secret = answer.secret;
    value.textContent = answer.secret;
    reveal.textContent = 'Hide';
    copy.disabled = false;
    replace(
      note,
      answer.previousSecretExpiresAt
        ? ['The previous secret still signs too, until ', time(answer.previousSecretExpiresAt), ': move your receivers to this one before then.']
        : [],
    );
  };
  reveal.addEventListener('click', () => {
    replace(status);
    if (secret !== undefined) {
      secret = undefined;
      value.textContent = 'whsec_••••••••••••••••';
      reveal.textContent = 'Reveal';
      copy.disabled = true;
      return;
    }
    void busy(reveal, async () => {
      try {
        show(await ctx.api.get<WebhookSecret>('/v1/projects/me/webhook-secret'));
      } catch (error) {
        showError(status, error, 'The signing secret');
      }
    });
  });
  rotate.addEventListener('click', () => {
    void (async () => {
      replace(status);
      const question = 'Rotate the signing secret? Webhooks are signed with both the new and the old secret for a while, then with the new one only.';
      if (!(await confirmDialog(question, 'Rotate'))) return;
      try {
        show(await ctx.api.post<WebhookSecret>('/v1/projects/me/webhook-secret/rotate'));
        ctx.announce('Signing secret rotated.');
      } catch (error) {
        showError(status, error, 'Rotating the signing secret');
      }
    })();
  });
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'signing-secret-heading' },
    h('h2', { id: 'signing-secret-heading' }, 'Signing secret'),
    h('p', null, 'Every webhook is signed with it (Standard Webhooks: the ', h('code', null, 'webhook-signature'), ' header). Verify with it in your receiver.'),
    value,
    h('div', { class: 'actions' }, reveal, copy, rotate),
    note,
    status,
  );
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
    h('td', { class: 'wrap' }, receivesAll(endpoint) ? 'all events' : endpoint.events.join(', ')),
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
    const results = h('div', null, loading('webhook endpoints'));
    const body = h('tbody');
    const formSlot = h('div');
    replace(
      ctx.main,
      h('h1', { tabindex: -1 }, 'Webhooks'),
      callback,
      h('p', null, 'Every attempt of every delivery is on the ', h('a', { href: `${CONSOLE}/deliveries` }, 'Deliveries'), ' page.'),
      signingSecret(ctx),
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
