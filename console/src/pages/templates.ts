import type { Template } from '#sdk';
import { badge, h, replace, table, time } from '../dom.ts';
import { CONSOLE, type Page } from '../page.ts';
import { registerForm } from '../templateForm.ts';
import { changed, loading, showError } from '../ui.ts';

// The templates with their review status (polled while one is PENDING), each linking to its own
// page, and the form to register one (templateForm.ts).

const REFRESH_MS = 2000;

function reasonOf(template: Template): string {
  if (template.rejectionReason) return template.rejectionReason;
  if (template.providerStatus !== template.status) return `${template.providerStatus}${template.providerStatusReason ? `: ${template.providerStatusReason}` : ''}`;
  return '';
}

function templateRow(template: Template): HTMLTableRowElement {
  const text = (type: string) => template.components.find((component) => component.type === type)?.text;
  return h(
    'tr',
    { 'data-template': template.name },
    h('th', { scope: 'row' }, h('a', { href: `${CONSOLE}/templates/${template.id}` }, template.name)),
    h('td', null, template.language),
    h('td', null, template.category),
    h('td', { 'data-status': template.status }, badge(template.status)),
    h('td', null, reasonOf(template) || '—'),
    h('td', { class: 'clip' }, text('BODY') ?? '—'),
    h('td', null, time(template.createdAt)),
  );
}

export const templatesPage: Page = {
  title: 'Templates',
  async render(ctx) {
    const body = h('tbody');
    const results = h('div', null, loading('templates'));
    const last = { value: '' };
    let pending = false;
    const load = async () => {
      const templates = await ctx.api.get<Template[]>('/v1/templates', { limit: 200 });
      pending = templates.some((template) => template.status === 'PENDING');
      if (ctx.signal.aborted || !changed(last, templates)) return;
      if (templates.length === 0) return replace(results, h('p', { class: 'empty' }, 'No template yet: register one below.'));
      replace(body, templates.map(templateRow));
      if (!results.contains(body)) {
        replace(results, table('Templates, newest first', ['Name', 'Language', 'Category', 'Status', 'Reason', 'Body', 'Registered'], body));
      }
    };
    replace(ctx.main, h('h1', { tabindex: -1 }, 'Templates'), results, registerForm(ctx, load));
    try {
      await load();
    } catch (error) {
      showError(results, error, 'Templates');
      return;
    }
    // Reviews take from seconds (sandbox) to hours: poll only while one is pending.
    ctx.poll(REFRESH_MS, async () => {
      if (pending) await load();
    });
  },
};
