import type { Project } from '#sdk';
import { field, h, replace, time } from '../dom.ts';
import type { Page, PageContext } from '../page.ts';
import { alertBox, busy, loading, markFields, showError } from '../ui.ts';

// The project, its provider credentials (the token is write-only: never shown, never prefilled),
// what the provider says of the sending number, and the callback URL.

const PATH = '/v1/projects/me/provider-credentials';

function facts(project: Project): HTMLElement {
  const provider = project.provider;
  const pair = (label: string, value: unknown) => [h('dt', null, label), h('dd', null, value === null || value === undefined || value === '' ? '—' : (value as string))];
  return h(
    'dl',
    { class: 'facts' },
    pair('Project', `${project.name} (${project.projectId})`),
    pair('Provider', (project as { providerName?: string }).providerName === 'sandbox' ? 'sandbox: messages are simulated, nothing reaches WhatsApp' : (project as { providerName?: string }).providerName),
    pair('Owner e-mail', project.ownerEmail),
    pair('Created', time(project.createdAt)),
    pair('Phone number id', project.providerPhoneNumberId ?? 'not configured: messages cannot be sent yet'),
    pair('Access token', project.providerPhoneNumberId ? 'saved (never shown)' : 'not saved'),
    pair('Callback URL', project.callbackUrl),
    provider
      ? [
          pair('Number status', provider.status + (provider.problem ? `: ${provider.problem.code}, ${provider.problem.message}` : '')),
          pair('Display number', provider.displayPhoneNumber),
          pair('Verified name', provider.verifiedName),
          pair('Quality rating', provider.qualityRating),
          pair('Business account', provider.businessAccountId),
          pair('Send pace', `${provider.messagesPerSecond} messages/s`),
          pair('Provider webhooks', provider.webhooksSubscribed ? 'subscribed' : 'not subscribed'),
          pair('Checked', time(provider.checkedAt)),
        ]
      : null,
  );
}

function credentialsForm(ctx: PageContext, project: Project, reload: () => Promise<void>): HTMLFormElement {
  const phone = h('input', { name: 'providerPhoneNumberId', required: true, autocomplete: 'off', value: project.providerPhoneNumberId ?? '', placeholder: '106540352242922' });
  const token = h('input', { name: 'providerAccessToken', type: 'password', required: true, autocomplete: 'new-password', placeholder: project.providerPhoneNumberId ? 'a new token (the saved one is never shown)' : '' });
  const account = h('input', { name: 'providerBusinessAccountId', autocomplete: 'off', inputmode: 'numeric', placeholder: 'optional' });
  const status = h('div');
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'credentials-heading' },
    h('h2', { id: 'credentials-heading' }, project.providerPhoneNumberId ? 'Replace the credentials' : 'Save the credentials'),
    field('Phone number id', phone),
    field('Access token', token, 'Stored encrypted; svc never returns it. Saving a new one rotates it.'),
    field('Business account id', account, 'WhatsApp only, for system-user tokens.'),
    status,
    h('button', { type: 'submit' }, 'Save credentials'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const body = {
      providerPhoneNumberId: phone.value.trim(),
      providerAccessToken: token.value.trim(),
      ...(account.value.trim() && { providerBusinessAccountId: account.value.trim() }),
    };
    void busy(form, async () => {
      try {
        await ctx.api.put(PATH, body);
        ctx.announce('Credentials saved.');
        await reload();
      } catch (error) {
        markFields(form, error);
        replace(status, alertBox(error));
      } finally {
        token.value = '';
      }
    });
  });
  return form;
}

function callbackForm(ctx: PageContext, project: Project, reload: () => Promise<void>): HTMLFormElement {
  const url = h('input', { name: 'callbackUrl', type: 'url', required: true, value: project.callbackUrl ?? '', placeholder: 'https://example.com/webhooks/svc' });
  const status = h('div');
  const save = (callbackUrl: string | null, form: HTMLFormElement) =>
    busy(form, async () => {
      try {
        await ctx.api.put(PATH, { callbackUrl });
        ctx.announce(callbackUrl ? 'Callback URL saved.' : 'Callback URL removed.');
        await reload();
      } catch (error) {
        markFields(form, error);
        replace(status, alertBox(error));
      }
    });
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'callback-heading' },
    h('h2', { id: 'callback-heading' }, 'Callback URL'),
    h('p', { class: 'muted' }, 'Receives every status event, signed (Standard Webhooks). Saved credentials are needed first.'),
    field('URL', url),
    status,
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'submit' }, 'Save URL'),
      project.callbackUrl ? h('button', { type: 'button', class: 'secondary', onclick: () => void save(null, form) }, 'Remove URL') : null,
    ),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void save(url.value.trim(), form);
  });
  return form;
}

const MARKETING_PATH = '/v1/projects/me/marketing-messages';
const MARKETING_MODES: [string, string, string][] = [
  ['off', 'Off', 'Every template goes through Cloud API.'],
  ['fallback', 'Fallback', 'MARKETING templates go through the Marketing Messages API; Meta falls back to Cloud API when the business is not onboarded.'],
  ['strict', 'Strict', 'MARKETING templates go through the Marketing Messages API only; Meta refuses them (the message FAILS) when the business is not onboarded.'],
];

/** The Marketing Messages setting (issue 23): off, fallback or strict, as radio buttons. */
function marketingForm(ctx: PageContext, mode: string): HTMLFormElement {
  const status = h('div');
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'marketing-heading', 'data-mode': mode },
    h('h2', { id: 'marketing-heading' }, 'Marketing Messages'),
    h('p', { class: 'muted' }, 'Which WhatsApp API sends MARKETING templates. Each message shows the route it took. Changes apply from the next dispatch.'),
    h(
      'fieldset',
      null,
      h('legend', null, 'Route for MARKETING templates'),
      MARKETING_MODES.map(([value, label, hint]) =>
        h('label', { class: 'choice' }, h('input', { type: 'radio', name: 'mode', value, checked: value === mode }), ' ', h('strong', null, label), h('span', { class: 'muted' }, ` — ${hint}`)),
      ),
    ),
    status,
    h('button', { type: 'submit' }, 'Save setting'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const chosen = (form.elements.namedItem('mode') as RadioNodeList).value;
    void busy(form, async () => {
      try {
        const saved = await ctx.api.put<{ mode: string }>(MARKETING_PATH, { mode: chosen });
        form.dataset.mode = saved.mode;
        replace(status);
        ctx.announce(`Marketing Messages: ${saved.mode}.`);
      } catch (error) {
        replace(status, alertBox(error));
      }
    });
  });
  return form;
}

export const providerPage: Page = {
  title: 'Provider',
  async render(ctx) {
    const body = h('div', null, loading('the project'));
    replace(ctx.main, h('h1', { tabindex: -1 }, 'Provider and project'), body);
    const load = async () => {
      const project = await ctx.api.get<Project>('/v1/projects/me');
      if (ctx.signal.aborted) return;
      replace(
        body,
        facts(project),
        credentialsForm(ctx, project, load),
        project.providerPhoneNumberId ? callbackForm(ctx, project, load) : null,
        marketing,
      );
    };
    // The setting loads on its own: a server without it (or failing) leaves the rest of the page.
    const marketing = h('div', null, loading('the Marketing Messages setting'));
    void ctx.api.get<{ mode: string }>(MARKETING_PATH).then(
      (setting) => !ctx.signal.aborted && replace(marketing, marketingForm(ctx, setting.mode)),
      (error) => !ctx.signal.aborted && showError(marketing, error, 'Marketing Messages'),
    );
    try {
      await load();
    } catch (error) {
      replace(body, alertBox(error));
    }
  },
};
