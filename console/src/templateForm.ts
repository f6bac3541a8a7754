import type { Template } from '#sdk';
import { type BubbleButton, type BubbleContent, type BubbleHeader, drawPhone } from './bubble.ts';
import { field, h, type Props, replace } from './dom.ts';
import type { PageContext } from './page.ts';
import { fillNamed, type ParameterFormat, placeholdersOf } from './templateText.ts';
import { alertBox, busy, type FieldNamer, markFields } from './ui.ts';

// The form that registers a template with every component CONTRACT §9 lists (Meta's template
// JSON): a header (text, image, video, document or location, with its review sample), a body
// with positional or named parameters, a footer, and buttons (quick reply, URL with a trailing
// {{1}}, phone number, copy code); or an AUTHENTICATION template in Meta's model. A live preview
// shows the recipient's bubble with the example values. Example fields exist only for the
// placeholders the texts really have.

const CATEGORIES = ['UTILITY', 'MARKETING', 'AUTHENTICATION'];
const HEADER_FORMATS: [string, string][] = [
  ['TEXT', 'Text'],
  ['IMAGE', 'Image'],
  ['VIDEO', 'Video'],
  ['DOCUMENT', 'Document'],
  ['LOCATION', 'Location'],
];
const BUTTON_TYPES: [string, string][] = [
  ['QUICK_REPLY', 'Quick reply'],
  ['URL', 'Visit website (URL)'],
  ['PHONE_NUMBER', 'Call phone number'],
  ['COPY_CODE', 'Copy offer code'],
];
const TRAILING_PLACEHOLDER = /\{\{1\}\}$/;

type Input = HTMLInputElement;
const input = (name: string, props: Props = {}) => h('input', { name, autocomplete: 'off', ...props });

interface ButtonDraft {
  type: string;
  element: HTMLElement;
  text?: Input;
  url?: Input;
  example?: Input;
  phone?: Input;
}

export function registerForm(ctx: PageContext, reload: () => Promise<void>): HTMLFormElement {
  const name = input('name', { required: true, pattern: '[a-z0-9_]{1,512}', placeholder: 'order_update' });
  const language = input('language', { required: true, value: 'en_US', pattern: '[a-z]{2,3}(_[A-Za-z]{2,4})?' });
  const category = h('select', { name: 'category' }, CATEGORIES.map((value) => h('option', { value }, value)));
  const parameterFormat = h(
    'select',
    { name: 'parameter_format' },
    h('option', { value: 'POSITIONAL' }, 'Numbered: {{1}}, {{2}}…'),
    h('option', { value: 'NAMED' }, 'Named: {{first_name}}…'),
  );
  const headerFormat = h('select', { name: 'headerFormat' }, HEADER_FORMATS.map(([value, label]) => h('option', { value }, label)));
  const headerText = input('header', { maxlength: 60, placeholder: 'Order {{1}}' });
  const sampleKind = h(
    'select',
    { name: 'headerSampleKind' },
    h('option', { value: 'url' }, 'A public https link (svc downloads and uploads it)'),
    h('option', { value: 'handle' }, 'A handle from the provider’s upload API'),
  );
  const sample = input('headerSample', { placeholder: 'https://example.com/product.jpg' });
  const textHeader = h('div', null, field('Header (optional)', headerText, 'At most one placeholder.'));
  const mediaHeader = h(
    'div',
    { hidden: true },
    field('Header sample from', sampleKind),
    field('Header sample', sample, 'What the provider reviews: image jpeg/png ≤ 5 MB, video mp4 ≤ 16 MB, document pdf ≤ 100 MB. Each send gives its own link.'),
  );
  const locationHeader = h('p', { class: 'muted', hidden: true }, 'A location header needs no sample: each send gives the place.');
  const bodyText = h('textarea', { name: 'body', required: true, maxlength: 1024, rows: 4, placeholder: 'Hello {{1}}, your order {{2}} has shipped.' });
  const footer = input('footer', { maxlength: 60, placeholder: 'Acme Shop' });
  const examples = h('fieldset', { class: 'variables' });
  const buttonList = h('div', { class: 'buttons-list' });
  const addType = h('select', { name: 'addButtonType', 'aria-label': 'Button type' }, BUTTON_TYPES.map(([value, label]) => h('option', { value }, label)));
  const addButton = h('button', { type: 'button', class: 'secondary small' }, 'Add button');
  const standard = h(
    'div',
    null,
    field('Parameters', parameterFormat, 'How the texts name their placeholders.'),
    field('Header type', headerFormat),
    textHeader,
    mediaHeader,
    locationHeader,
    field('Body', bodyText, 'Placeholders {{1}}, {{2}}, … numbered without gaps, or {{first_name}} when named.'),
    field('Footer (optional)', footer, 'No placeholders.'),
    h('fieldset', { class: 'buttons' }, h('legend', null, 'Buttons (optional)'), buttonList, h('div', { class: 'actions' }, addType, addButton)),
    examples,
  );
  const security = h('input', { type: 'checkbox', name: 'add_security_recommendation', checked: true });
  const expiry = input('code_expiration_minutes', { type: 'number', min: 1, max: 90, placeholder: '10' });
  const copyText = input('otpText', { value: 'Copy code', maxlength: 25 });
  const authentication = h(
    'div',
    { hidden: true },
    h('p', { class: 'muted' }, 'An authentication template’s texts are the provider’s own: the body says the code, the button copies it.'),
    h('label', { class: 'check' }, security, 'Add “For your security, do not share this code.”'),
    field('Code expires after (minutes, optional)', expiry),
    field('Copy-code button text', copyText),
  );
  const preview = h('div', { 'aria-live': 'polite', 'aria-label': 'Preview' });
  const status = h('div');
  const form = h(
    'form',
    { class: 'card template-form', 'aria-labelledby': 'register-heading' },
    h('h2', { id: 'register-heading' }, 'Register a template'),
    h(
      'div',
      { class: 'builder' },
      h(
        'div',
        { class: 'builder-fields' },
        h('div', { class: 'row' }, field('Name', name, 'Lowercase letters, digits, underscores.'), field('Language', language), field('Category', category)),
        standard,
        authentication,
      ),
      h('div', { class: 'builder-preview' }, h('h3', null, 'Preview with the example values'), preview),
    ),
    status,
    h('button', { type: 'submit' }, 'Register'),
  );

  const buttons: ButtonDraft[] = [];
  const format = () => parameterFormat.value as ParameterFormat;
  const isAuthentication = () => category.value === 'AUTHENTICATION';
  const exampleOf = (group: string, key: string) => examples.querySelector<Input>(`input[data-group="${group}"][data-key="${CSS.escape(key)}"]`)?.value ?? '';
  const examplesOf = (group: string, text: string) => Object.fromEntries(placeholdersOf(text, format()).map((key) => [key, exampleOf(group, key)]));

  function drawButtons() {
    buttonList.replaceChildren(
      ...buttons.map((draft, index) => {
        const number = index + 1;
        const label = BUTTON_TYPES.find(([type]) => type === draft.type)![1];
        const remove = h('button', { type: 'button', class: 'danger small', 'aria-label': `Remove button ${number}` }, 'Remove');
        remove.addEventListener('click', () => {
          buttons.splice(index, 1);
          drawButtons();
          drawExamples();
        });
        const urlExample = draft.url && TRAILING_PLACEHOLDER.test(draft.url.value) ? field(`Button ${number} URL example`, draft.example!, 'A full value for {{1}}, e.g. an order number.') : null;
        replace(
          draft.element,
          h('legend', null, `Button ${number}: ${label}`),
          draft.text ? field(`Button ${number} text`, draft.text) : null,
          draft.url ? field(`Button ${number} URL`, draft.url, 'https://…, optionally ending in {{1}}: its value is given at each send.') : null,
          urlExample,
          draft.phone ? field(`Button ${number} phone number`, draft.phone, 'E.164, with the leading +.') : null,
          draft.type === 'COPY_CODE' ? field(`Button ${number} code example`, draft.example!, 'A sample code, at most 15 characters; each send gives the real one.') : null,
          h('div', { class: 'actions' }, remove),
        );
        return draft.element;
      }),
    );
  }

  addButton.addEventListener('click', () => {
    const type = addType.value;
    const redraw = () => {
      drawButtons();
      drawPreview();
    };
    const draft: ButtonDraft = { type, element: h('fieldset', { class: 'button-draft', 'data-type': type }) };
    if (type !== 'COPY_CODE') draft.text = input('buttonText', { required: true, maxlength: 25, oninput: drawPreview });
    if (type === 'URL') draft.url = input('buttonUrl', { required: true, type: 'url', placeholder: 'https://example.com/track/{{1}}', oninput: redraw });
    if (type === 'URL' || type === 'COPY_CODE') draft.example = input('buttonExample', { required: true, oninput: drawPreview, ...(type === 'COPY_CODE' && { maxlength: 15 }) });
    if (type === 'PHONE_NUMBER') draft.phone = input('buttonPhone', { required: true, inputmode: 'tel', placeholder: '+15550051310', oninput: drawPreview });
    buttons.push(draft);
    drawButtons();
    drawPreview();
    (draft.text ?? draft.example)?.focus();
  });

  function headerContent(): BubbleHeader | null {
    const kind = headerFormat.value;
    if (kind === 'TEXT') return headerText.value ? fillNamed(headerText.value, examplesOf('header', headerText.value)) : null;
    if (kind === 'LOCATION') return { type: 'LOCATION', name: 'A place, given at each send' };
    return { type: kind as 'IMAGE', link: sampleKind.value === 'url' && sample.value ? sample.value : 'the link is given at each send' };
  }

  function buttonContent(draft: ButtonDraft): BubbleButton {
    const text = draft.text?.value ?? '';
    if (draft.type === 'URL') return { type: 'URL', text, url: (draft.url?.value ?? '').replace(TRAILING_PLACEHOLDER, draft.example?.value || '{{1}}') };
    if (draft.type === 'PHONE_NUMBER') return { type: 'PHONE_NUMBER', text, phoneNumber: draft.phone?.value ?? '' };
    if (draft.type === 'COPY_CODE') return { type: 'COPY_CODE', couponCode: draft.example?.value ?? '' };
    return { type: 'QUICK_REPLY', text };
  }

  function drawPreview() {
    let content: BubbleContent;
    if (isAuthentication()) {
      const minutes = Number(expiry.value);
      content = {
        body: `*123456* is your verification code.${security.checked ? ' For your security, do not share this code.' : ''}`,
        footer: minutes > 0 ? `This code expires in ${minutes} minutes.` : null,
        buttons: [{ type: 'OTP', text: copyText.value || 'Copy code' }],
      };
    } else {
      content = {
        header: headerContent(),
        body: bodyText.value ? fillNamed(bodyText.value, examplesOf('body', bodyText.value)) : h('span', { class: 'muted' }, 'The body appears here.'),
        footer: footer.value || null,
        buttons: buttons.map(buttonContent),
      };
    }
    drawPhone(preview, content);
  }

  /** One example field per placeholder the texts have, keeping what was typed in those that stay. */
  function drawExamples() {
    const kept = new Map([...examples.querySelectorAll<Input>('input')].map((item) => [item.name, item.value]));
    const fields = (group: string, label: string, keys: string[]) =>
      keys.map((key) => {
        const inputName = `example_${group}_${key}`;
        return field(
          `${label} {{${key}}} example`,
          h('input', { name: inputName, 'data-group': group, 'data-key': key, required: true, value: kept.get(inputName) ?? '', oninput: drawPreview }),
        );
      });
    const headerKeys = headerFormat.value === 'TEXT' ? placeholdersOf(headerText.value, format()) : [];
    const bodyKeys = placeholdersOf(bodyText.value, format());
    replace(
      examples,
      h('legend', null, 'Example values (the provider reviews the template with them)'),
      headerKeys.length + bodyKeys.length === 0 ? h('p', { class: 'muted' }, 'No placeholder yet.') : null,
      fields('header', 'Header', headerKeys),
      fields('body', 'Body', bodyKeys),
    );
    drawPreview();
  }

  function drawHeader() {
    const kind = headerFormat.value;
    textHeader.hidden = kind !== 'TEXT';
    mediaHeader.hidden = !['IMAGE', 'VIDEO', 'DOCUMENT'].includes(kind);
    locationHeader.hidden = kind !== 'LOCATION';
    sample.required = !mediaHeader.hidden;
    sample.placeholder = sampleKind.value === 'url' ? 'https://example.com/sample' : '4::aW1hZ2UvanBlZw==:ARb…';
    sample.type = sampleKind.value === 'url' ? 'url' : 'text';
    drawExamples();
  }

  function drawCategory() {
    authentication.hidden = !isAuthentication();
    standard.hidden = isAuthentication();
    // Hidden controls must not block the submit with their own `required`.
    for (const control of standard.querySelectorAll<Input>('input, textarea')) control.disabled = isAuthentication();
    bodyText.disabled = isAuthentication();
    drawPreview();
  }

  for (const control of [headerText, bodyText]) control.addEventListener('input', drawExamples);
  for (const control of [footer, sample, expiry, copyText]) control.addEventListener('input', drawPreview);
  security.addEventListener('change', drawPreview);
  parameterFormat.addEventListener('change', drawExamples);
  headerFormat.addEventListener('change', drawHeader);
  sampleKind.addEventListener('change', drawHeader);
  category.addEventListener('change', drawCategory);

  function headerComponent(): Record<string, unknown> | undefined {
    const kind = headerFormat.value;
    if (kind === 'TEXT') {
      if (!headerText.value) return undefined;
      const values = examplesOf('header', headerText.value);
      const keys = Object.keys(values);
      const example =
        keys.length === 0
          ? undefined
          : format() === 'NAMED'
            ? { header_text_named_params: keys.map((key) => ({ param_name: key, example: values[key] })) }
            : { header_text: keys.map((key) => values[key]) };
      return { type: 'HEADER', format: 'TEXT', text: headerText.value, ...(example && { example }) };
    }
    if (kind === 'LOCATION') return { type: 'HEADER', format: 'LOCATION' };
    return { type: 'HEADER', format: kind, example: sampleKind.value === 'url' ? { header_url: [sample.value.trim()] } : { header_handle: [sample.value.trim()] } };
  }

  function bodyComponent(): Record<string, unknown> {
    const values = examplesOf('body', bodyText.value);
    const keys = Object.keys(values);
    const example =
      keys.length === 0
        ? undefined
        : format() === 'NAMED'
          ? { body_text_named_params: keys.map((key) => ({ param_name: key, example: values[key] })) }
          : { body_text: [keys.map((key) => values[key])] };
    return { type: 'BODY', text: bodyText.value, ...(example && { example }) };
  }

  function buttonComponent(draft: ButtonDraft): Record<string, unknown> {
    if (draft.type === 'URL') {
      const url = draft.url!.value.trim();
      return { type: 'URL', text: draft.text!.value, url, ...(TRAILING_PLACEHOLDER.test(url) && { example: [draft.example!.value] }) };
    }
    if (draft.type === 'PHONE_NUMBER') return { type: 'PHONE_NUMBER', text: draft.text!.value, phone_number: draft.phone!.value.trim() };
    if (draft.type === 'COPY_CODE') return { type: 'COPY_CODE', example: draft.example!.value };
    return { type: 'QUICK_REPLY', text: draft.text!.value };
  }

  function components(): Record<string, unknown>[] {
    if (isAuthentication()) {
      const minutes = Number(expiry.value);
      return [
        { type: 'BODY', add_security_recommendation: security.checked },
        ...(minutes > 0 ? [{ type: 'FOOTER', code_expiration_minutes: minutes }] : []),
        { type: 'BUTTONS', buttons: [{ type: 'OTP', otp_type: 'COPY_CODE', text: copyText.value || 'Copy code' }] },
      ];
    }
    const header = headerComponent();
    return [
      ...(header ? [header] : []),
      bodyComponent(),
      ...(footer.value ? [{ type: 'FOOTER', text: footer.value }] : []),
      ...(buttons.length > 0 ? [{ type: 'BUTTONS', buttons: buttons.map(buttonComponent) }] : []),
    ];
  }

  /** "/components/2/buttons/0/url" in the form's words: "Button 1 URL". */
  function namer(sent: Record<string, unknown>[]): FieldNamer {
    const words: Record<string, string> = { text: 'text', url: 'URL', phone_number: 'phone number', example: 'example', format: 'type', header_url: 'sample link', header_handle: 'sample handle' };
    return (pointer) => {
      const parts = pointer.split('/').slice(1);
      if (parts[0] !== 'components' || parts[1] === undefined) return undefined;
      const component = sent[Number(parts[1])];
      if (!component) return undefined;
      const last = [...parts].reverse().find((part) => !/^\d+$/.test(part));
      const what = last && last !== parts[0] ? (words[last] ?? last.replace(/_/g, ' ')) : '';
      if (component.type === 'BUTTONS' && parts[2] === 'buttons' && parts[3] !== undefined) {
        return `Button ${Number(parts[3]) + 1}${what && what !== 'buttons' ? ` ${what}` : ''}`;
      }
      const part = component.type === 'HEADER' ? 'The header' : component.type === 'BODY' ? 'The body' : component.type === 'FOOTER' ? 'The footer' : 'The buttons';
      return what && !['components', 'buttons'].includes(last!) ? `${part}’s ${what}` : part;
    };
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const sent = components();
    const body = {
      name: name.value,
      language: language.value,
      category: category.value,
      ...(!isAuthentication() && format() === 'NAMED' && { parameter_format: 'NAMED' }),
      components: sent,
    };
    replace(status);
    void busy(form, async () => {
      try {
        const template = await ctx.api.post<Template>('/v1/templates', body);
        // No status here: it changes with the review, and the list above shows it as it does.
        replace(status, h('p', { class: 'notice', role: 'status' }, `Template ${template.name} (${template.language}) registered and sent for review: its status is in the list above.`));
        form.reset();
        buttons.length = 0;
        drawButtons();
        drawHeader();
        drawCategory();
        await reload();
      } catch (error) {
        markFields(form, error);
        replace(status, alertBox(error, namer(sent)));
      }
    });
  });
  drawHeader();
  drawCategory();
  return form;
}
