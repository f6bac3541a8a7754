import type { Template } from '#sdk';
import { seg, SvcError } from '../api.ts';
import { drawPhone } from '../bubble.ts';
import { badge, h, replace, time } from '../dom.ts';
import { CONSOLE, type Page } from '../page.ts';
import { exampleValues, templateBubble } from '../templateContent.ts';
import { alertBox, busy, changed, confirmDialog, loading } from '../ui.ts';

// One template: its review, its category history, what a recipient sees with its examples, its
// components as stored (Meta's JSON), and Delete (here and at the provider).

const REFRESH_MS = 2000;

type DetailedTemplate = Template & { parameterFormat?: string; categoryHistory?: { from: string; to: string; at: string }[] };

function facts(template: DetailedTemplate): HTMLElement {
  const pair = (label: string, value: Node | string | null | undefined) => [h('dt', null, label), h('dd', null, value || '—')];
  return h(
    'dl',
    { class: 'facts' },
    pair('Status', h('span', { 'data-status': template.status }, badge(template.status))),
    template.providerStatus !== template.status ? pair('Provider status', template.providerStatus) : null,
    template.rejectionReason ? pair('Rejection reason', template.rejectionReason) : null,
    pair('Language', template.language),
    pair('Category', template.category),
    pair('Parameters', template.parameterFormat === 'NAMED' ? 'named ({{first_name}}…)' : 'numbered ({{1}}…)'),
    pair('Id', h('code', null, template.id)),
    pair('Registered', time(template.createdAt) as Node),
    template.categoryHistory?.length
      ? pair('Category changes', template.categoryHistory.map((change) => `${change.from} → ${change.to} (${new Date(change.at).toLocaleString()})`).join('; '))
      : null,
  );
}

export const templatePage: Page = {
  title: 'Template',
  async render(ctx) {
    const id = ctx.params[0]!;
    const path = `/v1/templates/${seg(id)}`;
    const heading = h('h1', { tabindex: -1 }, 'Template');
    const actions = h('div', { class: 'actions' });
    const body = h('div', null, loading('the template'));
    replace(ctx.main, h('p', null, h('a', { href: `${CONSOLE}/templates` }, '← Templates')), heading, actions, body);
    const last = { value: '' };
    let pending = false;

    const remove = (template: DetailedTemplate) => {
      const button = h('button', { type: 'button', class: 'danger' }, 'Delete template');
      button.addEventListener('click', () => {
        void (async () => {
          const question = `Delete ${template.name} (${template.language})? It is deleted at the provider too, and messages can no longer use it.`;
          if (!(await confirmDialog(question, 'Delete'))) return;
          await busy(button, async () => {
            try {
              const deleted = await ctx.api.del<{ providerDeletion: string; providerError?: { message: string } }>(path);
              ctx.announce(
                deleted.providerDeletion === 'refused'
                  ? `Template ${template.name} deleted here; the provider kept it: ${deleted.providerError?.message ?? ''}`
                  : `Template ${template.name} deleted.`,
              );
              ctx.navigate(`${CONSOLE}/templates`);
            } catch (error) {
              replace(actions, button, alertBox(error));
            }
          });
        })();
      });
      return button;
    };

    const load = async () => {
      const template = await ctx.api.get<DetailedTemplate>(path);
      pending = template.status === 'PENDING';
      if (ctx.signal.aborted || !changed(last, template)) return;
      heading.textContent = `Template ${template.name} (${template.language})`;
      document.title = `${template.name} · svc console`;
      const phone = h('div', { 'aria-label': 'Preview' });
      drawPhone(phone, templateBubble(template, exampleValues(template)));
      replace(
        body,
        facts(template),
        h('section', { 'aria-labelledby': 'preview-heading' }, h('h2', { id: 'preview-heading' }, 'What a recipient sees (with the examples)'), phone),
        h(
          'section',
          { 'aria-labelledby': 'components-heading' },
          h('h2', { id: 'components-heading' }, 'Components as registered'),
          h('pre', { class: 'json' }, JSON.stringify(template.components, null, 2)),
        ),
      );
      replace(
        actions,
        template.status === 'APPROVED' ? h('a', { class: 'button-link', href: `${CONSOLE}/messages?send=${encodeURIComponent(template.id)}` }, 'Send a message with it') : null,
        remove(template),
      );
    };
    try {
      await load();
    } catch (error) {
      replace(body, alertBox(error instanceof SvcError && error.status === 404 ? new Error(`No template ${id} in this project.`) : error));
      return;
    }
    ctx.poll(REFRESH_MS, async () => {
      if (pending) await load();
    });
  },
};
