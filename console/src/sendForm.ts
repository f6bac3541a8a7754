import type { Message, Template } from '#sdk';
import { drawPhone } from './bubble.ts';
import { field, h, replace } from './dom.ts';
import { CONSOLE, type PageContext } from './page.ts';
import { partsOf, type SendValues, templateBubble, TRAILING_PLACEHOLDER } from './templateContent.ts';
import { placeholdersOf } from './templateText.ts';
import { alertBox, busy, type FieldNamer, markFields } from './ui.ts';

// The send form: an approved template, a recipient, and exactly the values that template needs
// (CONTRACT §9): its text placeholders (numbered or named), the header's media link (and a
// document's file name) or location, and its buttons' values (a URL's {{1}} suffix, a quick
// reply's payload, a coupon code). A live preview shows the recipient's bubble.

type Input = HTMLInputElement;

const MEDIA_WORD: Record<string, string> = { IMAGE: 'image', VIDEO: 'video', DOCUMENT: 'document' };

export function sendForm(ctx: PageContext, chosenId?: string): HTMLElement {
  const status = h('div');
  const templateSelect = h('select', { name: 'template', required: true }, h('option', { value: '' }, 'Loading templates…'));
  const toInput = h('input', { name: 'to', required: true, placeholder: '+5511987654321', inputmode: 'tel', autocomplete: 'off' });
  const variables = h('div', { class: 'variables' });
  const preview = h('div', { 'aria-live': 'polite', 'aria-label': 'Preview' });
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'send-heading' },
    h('h2', { id: 'send-heading' }, 'Send a message'),
    h(
      'div',
      { class: 'builder' },
      h('div', { class: 'builder-fields' }, field('Template', templateSelect, 'Only APPROVED templates can send.'), field('To', toInput, 'E.164, with the leading +.'), variables),
      h('div', { class: 'builder-preview' }, h('h3', null, 'Preview'), preview),
    ),
    status,
    h('button', { type: 'submit' }, 'Send'),
  );
  let templates: Template[] = [];
  const chosen = () => templates.find((template) => template.id === templateSelect.value);
  const valueOf = (name: string) => (form.elements.namedItem(name) as Input | null)?.value.trim() ?? '';
  const keyed = (group: string) =>
    Object.fromEntries([...variables.querySelectorAll<Input>(`input[data-group="${group}"]`)].map((input) => [input.dataset.key!, input.value]));

  function values(template: Template): SendValues {
    const parts = partsOf(template);
    const buttons: NonNullable<SendValues['buttons']> = {};
    parts.buttons.forEach((button, index) => {
      const value = valueOf(`button_${index}`);
      if (!value) return;
      if (button.type === 'URL') buttons[String(index)] = { text: value };
      else if (button.type === 'QUICK_REPLY') buttons[String(index)] = { payload: value };
      else if (button.type === 'COPY_CODE') buttons[String(index)] = { couponCode: value };
    });
    return {
      header: keyed('header'),
      body: keyed('body'),
      media: { link: valueOf('headerMediaLink') || undefined, filename: valueOf('headerMediaFilename') || undefined },
      location: { latitude: valueOf('latitude'), longitude: valueOf('longitude'), name: valueOf('locationName') || undefined, address: valueOf('locationAddress') || undefined },
      buttons,
    };
  }

  function drawPreview() {
    const template = chosen();
    if (!template) return replace(preview, h('p', { class: 'muted' }, 'Choose a template.'));
    drawPhone(preview, templateBubble(template, values(template)));
  }

  function drawVariables() {
    const template = chosen();
    if (!template) return (replace(variables), drawPreview());
    const parts = partsOf(template);
    const text = (group: string, label: string, source: string | undefined) =>
      placeholdersOf(source ?? '', parts.format).map((key) =>
        field(`${label} {{${key}}}`, h('input', { name: `${group}_${key}`, 'data-group': group, 'data-key': key, required: true, oninput: drawPreview })),
      );
    const input = (name: string, props: Record<string, string | boolean> = {}) => h('input', { name, autocomplete: 'off', oninput: drawPreview, ...props });
    const media = parts.headerFormat && MEDIA_WORD[parts.headerFormat];
    replace(
      variables,
      parts.headerFormat === 'TEXT' ? text('header', 'Header', parts.header?.text) : null,
      media
        ? [
            field(`Header ${media} link`, input('headerMediaLink', { type: 'url', required: true, pattern: 'https:.+', placeholder: `https://example.com/${media}` }), 'An https link the provider fetches.'),
            parts.headerFormat === 'DOCUMENT' ? field('Document file name (optional)', input('headerMediaFilename', { placeholder: 'invoice.pdf' })) : null,
          ]
        : null,
      parts.headerFormat === 'LOCATION'
        ? h(
            'div',
            { class: 'row' },
            field('Latitude', input('latitude', { required: true, inputmode: 'decimal', placeholder: '-23.5505' })),
            field('Longitude', input('longitude', { required: true, inputmode: 'decimal', placeholder: '-46.6333' })),
            field('Place name (optional)', input('locationName')),
            field('Address (optional)', input('locationAddress')),
          )
        : null,
      text('body', 'Body', parts.body?.text),
      parts.buttons.map((button, index) => {
        const name = `button_${index}`;
        const label = `Button ${index + 1} “${button.text ?? 'Copy offer code'}”`;
        if (button.type === 'URL' && TRAILING_PLACEHOLDER.test(button.url ?? '')) {
          return field(`${label} URL suffix`, input(name, { required: true }), `Fills {{1}} in ${button.url}.`);
        }
        if (button.type === 'QUICK_REPLY') return field(`${label} payload (optional)`, input(name), 'Returned when the recipient taps it; default: the button’s text.');
        if (button.type === 'COPY_CODE') return field(`${label} coupon code`, input(name, { required: true, maxlength: '15' }));
        return null;
      }),
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
        templates.map((template) => h('option', { value: template.id, selected: template.id === chosenId }, `${template.name} (${template.language})`)),
      );
      drawVariables();
    })
    .catch((error: unknown) => replace(status, alertBox(error)));

  /** "/buttons/0/text" in the form's words. */
  const namer: FieldNamer = (pointer) => {
    const template = chosen();
    const button = /^\/buttons\/(\d+)/.exec(pointer);
    if (button && template) return `Button ${Number(button[1]) + 1} “${partsOf(template).buttons[Number(button[1])]?.text ?? ''}”`;
    if (pointer.startsWith('/headerMedia')) return 'The header’s link';
    if (pointer.startsWith('/headerLocation')) return 'The location';
    const variable = /^\/(variables|headerVariables)\/(.+)$/.exec(pointer);
    if (variable) return `${variable[1] === 'variables' ? 'Body' : 'Header'} {{${variable[2]}}}`;
    return undefined;
  };

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const template = chosen();
    if (!template) return;
    const parts = partsOf(template);
    const given = values(template);
    const media = parts.headerFormat && MEDIA_WORD[parts.headerFormat];
    const body = {
      to: toInput.value.trim(),
      template: template.name,
      language: template.language,
      ...(Object.keys(given.body!).length > 0 && { variables: given.body }),
      ...(Object.keys(given.header!).length > 0 && { headerVariables: given.header }),
      ...(media && { headerMedia: { link: given.media!.link, ...(given.media!.filename && { filename: given.media!.filename }) } }),
      ...(parts.headerFormat === 'LOCATION' && {
        headerLocation: {
          latitude: Number(given.location!.latitude),
          longitude: Number(given.location!.longitude),
          ...(given.location!.name && { name: given.location!.name }),
          ...(given.location!.address && { address: given.location!.address }),
        },
      }),
      ...(Object.keys(given.buttons!).length > 0 && { buttons: given.buttons }),
    };
    replace(status);
    void busy(form, async () => {
      try {
        const message = await ctx.api.post<Message>('/v1/messages', body);
        ctx.announce(`Message ${message.id} queued.`);
        ctx.navigate(`${CONSOLE}/messages/${message.id}`);
      } catch (error) {
        markFields(form, error);
        replace(status, alertBox(error, namer));
      }
    });
  });
  drawPreview();
  return h('details', { class: 'send', open: chosenId !== undefined }, h('summary', null, 'Send a message'), form);
}
