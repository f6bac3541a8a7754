import type { ApiKey, CreatedApiKey } from '#sdk';
import { seg } from '../api.ts';
import { field, h, replace, table, time } from '../dom.ts';
import type { Page, PageContext } from '../page.ts';
import { alertBox, busy, confirmDialog, copyButton, errorText, loading, markFields, showError } from '../ui.ts';

// API keys: create one (its value shown once), list them, revoke one. Revoking the key this tab
// signed in with signs it out.

function keyRow(ctx: PageContext, key: ApiKey, reload: () => Promise<void>): HTMLTableRowElement {
  const current = key.prefix === ctx.keyPrefix;
  const revoke = h('button', { type: 'button', class: 'danger small', 'aria-label': `Revoke ${key.name}` }, 'Revoke');
  revoke.addEventListener('click', () => {
    void (async () => {
      const question = current
        ? `Revoke ${key.name}? It is the key this console signed in with: you will be signed out.`
        : `Revoke ${key.name} (${key.prefix}…)? Every request with it fails from now on.`;
      if (!(await confirmDialog(question, 'Revoke'))) return;
      try {
        await ctx.api.del(`/v1/api-keys/${seg(key.id)}`);
        if (current) return ctx.signOut('You revoked the key you signed in with.');
        ctx.announce(`Key ${key.name} revoked.`);
        await reload();
      } catch (error) {
        ctx.announce(errorText(error));
      }
    })();
  });
  return h(
    'tr',
    { 'data-key': key.name },
    h('th', { scope: 'row' }, key.name, current ? h('span', { class: 'muted' }, ' (this session)') : null),
    h('td', null, h('code', null, `${key.prefix}…`)),
    h('td', null, time(key.createdAt)),
    h('td', null, time(key.lastUsedAt)),
    h('td', null, revoke),
  );
}

function createForm(ctx: PageContext, reload: () => Promise<void>): HTMLFormElement {
  const name = h('input', { name: 'name', required: true, maxlength: 100, placeholder: 'production', autocomplete: 'off' });
  const status = h('div');
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'create-key-heading' },
    h('h2', { id: 'create-key-heading' }, 'Create a key'),
    field('Name', name, 'A label, e.g. the environment that uses it.'),
    status,
    h('button', { type: 'submit' }, 'Create key'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    replace(status);
    void busy(form, async () => {
      try {
        const created = await ctx.api.post<CreatedApiKey>('/v1/api-keys', { name: name.value });
        const value = h('code', { class: 'key-value', id: 'new-key' }, created.key);
        const copy = copyButton(() => created.key, ctx.announce);
        replace(
          status,
          h(
            'div',
            { class: 'secret', role: 'status' },
            h('p', null, h('strong', null, `Key ${created.name} created.`), ' This is the only time its value is shown: copy it now.'),
            value,
            copy,
          ),
        );
        form.reset();
        await reload();
      } catch (error) {
        markFields(form, error);
        replace(status, alertBox(error));
      }
    });
  });
  return form;
}

export const keysPage: Page = {
  title: 'API keys',
  async render(ctx) {
    const results = h('div', null, loading('API keys'));
    const body = h('tbody');
    const load = async () => {
      const page = await ctx.api.page<ApiKey>('/v1/api-keys', { limit: 200 });
      if (ctx.signal.aborted) return;
      replace(body, page.items.map((key) => keyRow(ctx, key, load)));
      if (!results.contains(body)) replace(results, table('Active API keys, newest first', ['Name', 'Prefix', 'Created', 'Last used', 'Action'], body));
    };
    replace(ctx.main, h('h1', { tabindex: -1 }, 'API keys'), createForm(ctx, load), results);
    try {
      await load();
    } catch (error) {
      showError(results, error, 'API keys');
    }
  },
};
