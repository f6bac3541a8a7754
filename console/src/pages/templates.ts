import type { Template } from '#sdk';
import { badge, field, h, replace, table, time } from '../dom.ts';
import type { Page, PageContext } from '../page.ts';
import { fillPlaceholders, placeholderCount } from '../templateText.ts';
import { alertBox, busy, changed, markFields, showError } from '../ui.ts';

// The templates with their review status (polled while one is PENDING), and a form to register
// one, with a live preview filled with its example values.

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
    h('th', { scope: 'row' }, template.name),
    h('td', null, template.language),
    h('td', null, template.category),
    h('td', { 'data-status': template.status }, badge(template.status)),
    h('td', null, reasonOf(template) || '—'),
    h('td', { class: 'clip' }, text('BODY') ?? '—'),
    h('td', null, time(template.createdAt)),
  );
}

function registerForm(ctx: PageContext, reload: () => Promise<void>): HTMLElement {
  const input = (name: string, props: Record<string, string | number | boolean> = {}) => h('input', { name, autocomplete: 'off', ...props });
  const name = input('name', { required: true, pattern: '[a-z0-9_]{1,512}', placeholder: 'order_update' });
  const language = input('language', { required: true, value: 'en_US', pattern: '[a-z]{2,3}(_[A-Za-z]{2,4})?' });
  const category = h('select', { name: 'category' }, ['UTILITY', 'MARKETING'].map((value) => h('option', { value }, value)));
  const header = input('header', { maxlength: 60, placeholder: 'Order {{1}}' });
  const bodyText = h('textarea', { name: 'body', required: true, maxlength: 1024, rows: 4, placeholder: 'Hello {{1}}, your order {{2}} has shipped.' });
  const footer = input('footer', { maxlength: 60, placeholder: 'Acme Shop' });
  const examples = h('fieldset', { class: 'variables' });
  const preview = h('div', { class: 'bubble', 'aria-live': 'polite' });
  const status = h('div');
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'register-heading' },
    h('h2', { id: 'register-heading' }, 'Register a template'),
    h('div', { class: 'row' }, field('Name', name, 'Lowercase letters, digits, underscores.'), field('Language', language), field('Category', category)),
    field('Header (optional)', header, 'At most one placeholder.'),
    field('Body', bodyText, 'Placeholders {{1}}, {{2}}, … numbered without gaps.'),
    field('Footer (optional)', footer, 'No placeholders.'),
    examples,
    h('h3', null, 'Preview with the example values'),
    preview,
    status,
    h('button', { type: 'submit' }, 'Register'),
  );
  const exampleInputs = (group: string) => [...examples.querySelectorAll<HTMLInputElement>(`input[data-group="${group}"]`)];

  function drawPreview() {
    const headerValues = exampleInputs('header').map((item) => item.value);
    const bodyValues = exampleInputs('body').map((item) => item.value);
    replace(
      preview,
      header.value ? h('p', { class: 'bubble-header' }, fillPlaceholders(header.value, headerValues)) : null,
      h('p', { class: 'bubble-body' }, bodyText.value ? fillPlaceholders(bodyText.value, bodyValues) : h('span', { class: 'muted' }, 'The body appears here.')),
      footer.value ? h('p', { class: 'bubble-footer' }, footer.value) : null,
    );
  }

  /** One example field per placeholder, keeping what was typed in those that stay. */
  function drawExamples() {
    const kept = new Map([...examples.querySelectorAll<HTMLInputElement>('input')].map((item) => [item.name, item.value]));
    const fields = (group: string, label: string, count: number) =>
      Array.from({ length: count }, (_, i) => {
        const inputName = `example_${group}_${i + 1}`;
        return field(`${label} {{${i + 1}}} example`, h('input', { name: inputName, 'data-group': group, required: true, value: kept.get(inputName) ?? '', oninput: drawPreview }));
      });
    const headerCount = placeholderCount(header.value);
    const bodyCount = placeholderCount(bodyText.value);
    replace(
      examples,
      h('legend', null, 'Example values (the provider reviews the template with them)'),
      headerCount + bodyCount === 0 ? h('p', { class: 'muted' }, 'No placeholder yet.') : null,
      fields('header', 'Header', headerCount),
      fields('body', 'Body', bodyCount),
    );
    drawPreview();
  }
  for (const control of [header, bodyText, footer]) control.addEventListener('input', drawExamples);

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const headerExamples = exampleInputs('header').map((item) => item.value);
    const bodyExamples = exampleInputs('body').map((item) => item.value);
    const components = [
      ...(header.value ? [{ type: 'HEADER', format: 'TEXT', text: header.value, ...(headerExamples.length > 0 && { example: { header_text: headerExamples } }) }] : []),
      { type: 'BODY', text: bodyText.value, ...(bodyExamples.length > 0 && { example: { body_text: [bodyExamples] } }) },
      ...(footer.value ? [{ type: 'FOOTER', text: footer.value }] : []),
    ];
    replace(status);
    void busy(form, async () => {
      try {
        const template = await ctx.api.post<Template>('/v1/templates', { name: name.value, language: language.value, category: category.value, components });
        // No status here: it changes with the review, and the list above shows it as it does.
        replace(status, h('p', { class: 'notice', role: 'status' }, `Template ${template.name} (${template.language}) registered and sent for review: its status is in the list above.`));
        form.reset();
        drawExamples();
        await reload();
      } catch (error) {
        markFields(form, error);
        replace(status, alertBox(error));
      }
    });
  });
  drawExamples();
  return form;
}

export const templatesPage: Page = {
  title: 'Templates',
  async render(ctx) {
    const body = h('tbody');
    const results = h('div');
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
