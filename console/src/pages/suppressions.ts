import { seg } from '../api.ts';
import { field, h, replace, table, time } from '../dom.ts';
import { CONSOLE, type Page, type PageContext } from '../page.ts';
import { alertBox, busy, changed, confirmDialog, errorText, loading, markFields, showError } from '../ui.ts';

// The numbers svc refuses to send to (opt-outs): added by hand, by the provider, by an opt-out
// keyword the recipient sent, or by their marketing opt-out (CONTRACT §9). Add one, remove one.

interface Suppression {
  phoneNumber: string;
  reason: string | null;
  source: string;
  scope: 'all' | 'marketing';
  createdAt: string;
}

const SOURCES: Record<string, string> = {
  api: 'added here or with the API',
  provider: 'the provider (opted out, or not on WhatsApp)',
  opt_out_keyword: 'the recipient sent an opt-out keyword',
  marketing_opt_out: 'the recipient stopped marketing messages',
};

function suppressionRow(ctx: PageContext, suppression: Suppression, reload: () => Promise<void>): HTMLTableRowElement {
  const remove = h('button', { type: 'button', class: 'danger small', 'aria-label': `Remove ${suppression.phoneNumber}` }, 'Remove');
  remove.addEventListener('click', () => {
    void (async () => {
      if (!(await confirmDialog(`Remove ${suppression.phoneNumber}? Sends to it are accepted again.`, 'Remove'))) return;
      await busy(remove, async () => {
        try {
          await ctx.api.del(`/v1/suppressions/${seg(suppression.phoneNumber)}`);
          ctx.announce(`${suppression.phoneNumber} removed: sends to it are accepted again.`);
          await reload();
        } catch (error) {
          ctx.announce(errorText(error));
        }
      });
    })();
  });
  return h(
    'tr',
    { 'data-number': suppression.phoneNumber },
    h('th', { scope: 'row' }, suppression.phoneNumber),
    h('td', null, suppression.scope === 'marketing' ? 'MARKETING templates only' : 'every send'),
    h('td', null, SOURCES[suppression.source] ?? suppression.source),
    h('td', null, suppression.reason ?? '—'),
    h('td', null, time(suppression.createdAt)),
    h('td', null, remove),
  );
}

function addForm(ctx: PageContext, reload: () => Promise<void>): HTMLFormElement {
  const phone = h('input', { name: 'phoneNumber', required: true, inputmode: 'tel', autocomplete: 'off', placeholder: '+5511987654321' });
  const reason = h('input', { name: 'reason', maxlength: 500, autocomplete: 'off', placeholder: 'Asked by phone' });
  const status = h('div');
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'add-suppression-heading' },
    h('h2', { id: 'add-suppression-heading' }, 'Stop sending to a number'),
    h('div', { class: 'row' }, field('Phone number', phone, 'E.164, with the leading +.'), field('Reason (optional)', reason, 'For your records.')),
    status,
    h('button', { type: 'submit' }, 'Add to the list'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    replace(status);
    void busy(form, async () => {
      try {
        const added = await ctx.api.post<Suppression>('/v1/suppressions', { phoneNumber: phone.value.trim(), ...(reason.value.trim() && { reason: reason.value.trim() }) });
        replace(status, h('p', { class: 'notice', role: 'status' }, `${added.phoneNumber} is on the list: sends to it are refused.`));
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

export const suppressionsPage: Page = {
  title: 'Suppressions',
  async render(ctx) {
    const cursor = ctx.query.get('cursor') ?? undefined;
    const results = h('div', null, loading('suppressions'));
    const body = h('tbody');
    const pager = h('nav', { class: 'pager', 'aria-label': 'Pages' });
    const last = { value: '' };
    const load = async () => {
      const page = await ctx.api.page<Suppression>('/v1/suppressions', { cursor, limit: 100 });
      if (ctx.signal.aborted || !changed(last, page)) return;
      if (page.items.length === 0) replace(results, h('p', { class: 'empty' }, 'No number is suppressed: every send is accepted.'));
      else {
        replace(body, page.items.map((item) => suppressionRow(ctx, item, load)));
        if (!results.contains(body)) replace(results, table('Suppressed numbers, newest first', ['Number', 'Refuses', 'Source', 'Reason', 'Added', 'Action'], body));
      }
      replace(
        pager,
        cursor ? h('a', { href: `${CONSOLE}/suppressions` }, 'First page') : null,
        page.nextCursor ? h('a', { href: `${CONSOLE}/suppressions?cursor=${encodeURIComponent(page.nextCursor)}`, rel: 'next' }, 'Next page') : null,
      );
    };
    replace(
      ctx.main,
      h('h1', { tabindex: -1 }, 'Suppressions'),
      h('p', { class: 'muted' }, 'Sends to these numbers are refused (422 recipient_suppressed). Opt-out keywords and the provider add numbers by themselves.'),
      addForm(ctx, load),
      results,
      pager,
    );
    try {
      await load();
    } catch (error) {
      showError(results, error, 'Suppressions');
    }
  },
};
