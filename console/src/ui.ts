import { isMissingEndpoint, SvcError } from './api.ts';
import { h } from './dom.ts';

// Pieces every page uses: how errors read, the "not on this server" state, confirmations.

/** What went wrong, in words: the problem's detail, its field errors, and the request id to quote. */
export function errorText(error: unknown, nameOf?: FieldNamer): string {
  if (error instanceof SvcError) {
    const problem = error.problem;
    if (!problem) return `The server answered ${error.status}.`;
    const detail = readableMessage(problem.detail, nameOf);
    const fields = (problem.errors ?? []).map((item) => readableMessage(item.message, nameOf)).filter((message) => message !== detail);
    return [detail, ...fields].join(' ') + (error.requestId ? ` (request ${error.requestId})` : '');
  }
  if (error instanceof TypeError) return 'The server could not be reached. Is svc running?';
  return error instanceof Error ? error.message : String(error);
}

/**
 * A field named by a JSON pointer, in words: `/to` → “to”, `/items/2/to` → “to” (items #3),
 * `/` → the request. The API names fields by pointer; people read names.
 */
export function readableField(pointer: string): string {
  const parts = pointer.split('/').slice(1).filter((part) => part !== '').map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (parts.length === 0) return 'The request';
  const lastName = parts.findLastIndex((part) => !/^\d+$/.test(part));
  const name = lastName === -1 ? `#${Number(parts.at(-1)) + 1}` : `“${parts[lastName]}”`;
  const context = parts
    .filter((_, index) => index !== lastName)
    .map((part) => (/^\d+$/.test(part) ? `#${Number(part) + 1}` : part))
    .join(' ');
  return context ? `${name} (${context})` : name;
}

/** A form's own words for a field the API names by pointer, when it has some (else undefined). */
export type FieldNamer = (pointer: string) => string | undefined;

/** A server message that starts with a field's pointer ("/to must be…"), with the field in words. */
export function readableMessage(message: string, nameOf?: FieldNamer): string {
  const match = /^(\/[^\s]*)\s(.*)$/s.exec(message);
  if (!match) return message;
  const words = nameOf?.(match[1]!) ?? readableField(match[1]!);
  return `${words.charAt(0).toUpperCase()}${words.slice(1)} ${match[2]}`;
}

/** A button that copies `text`, saying in `report` whether it could. */
export function copyButton(text: () => string, report: (message: string) => void, label = 'Copy'): HTMLButtonElement {
  const button = h('button', { type: 'button', class: 'secondary small' }, label);
  button.addEventListener('click', () => {
    void (navigator.clipboard ? navigator.clipboard.writeText(text()) : Promise.reject(new Error('no clipboard'))).then(
      () => report('Copied to the clipboard.'),
      () => report('Copying is not allowed here: select the text and copy it.'),
    );
  });
  return button;
}

export function alertBox(error: unknown, nameOf?: FieldNamer): HTMLElement {
  return h('p', { class: 'alert', role: 'alert' }, errorText(error, nameOf));
}

/** What a list shows while its first answer is on the way (never a blank page on a slow API). */
export function loading(what: string): HTMLElement {
  return h('p', { class: 'loading', role: 'status', 'aria-busy': 'true' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), `Loading ${what}…`);
}

export function notAvailable(what: string): HTMLElement {
  return h(
    'div',
    { class: 'empty not-available', role: 'note' },
    h('p', null, h('strong', null, `${what}: not available on this server.`)),
    h('p', null, 'This version of svc does not have this endpoint yet; the rest of the console works without it.'),
  );
}

/** Renders `error` into `where`: the "not available" state for a missing endpoint, else an alert. */
export function showError(where: HTMLElement, error: unknown, feature: string): void {
  where.replaceChildren(isMissingEndpoint(error) ? notAvailable(feature) : alertBox(error));
}

/** Marks the form's controls named by the problem's field errors (`/name` → name="name"). */
export function markFields(form: HTMLFormElement, error: unknown): void {
  for (const control of form.querySelectorAll('[aria-invalid]')) control.removeAttribute('aria-invalid');
  if (!(error instanceof SvcError)) return;
  for (const item of error.problem?.errors ?? []) {
    const name = item.field.replace(/^\//, '').split('/')[0];
    const control = name ? form.querySelector(`[name="${CSS.escape(name)}"]`) : null;
    control?.setAttribute('aria-invalid', 'true');
  }
}

/** A modal question (native <dialog>: focus is trapped and Escape cancels). */
export function confirmDialog(question: string, confirmLabel: string): Promise<boolean> {
  return new Promise((resolve) => {
    const dialog = h(
      'dialog',
      { class: 'confirm', 'aria-label': question },
      h(
        'form',
        { method: 'dialog' },
        h('p', null, question),
        h(
          'div',
          { class: 'actions' },
          h('button', { value: 'cancel', type: 'submit' }, 'Cancel'),
          h('button', { value: 'confirm', type: 'submit', class: 'danger' }, confirmLabel),
        ),
      ),
    );
    dialog.addEventListener('close', () => {
      resolve(dialog.returnValue === 'confirm');
      dialog.remove();
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}

/** Disables a form's controls while `work` runs, so a double click sends once. */
export async function busy<T>(form: HTMLFormElement | HTMLButtonElement, work: () => Promise<T>): Promise<T> {
  const controls = form instanceof HTMLFormElement ? [...form.elements] : [form];
  const disabled = controls.filter((control) => !(control as HTMLButtonElement).disabled);
  for (const control of disabled) (control as HTMLButtonElement).disabled = true;
  form.setAttribute('aria-busy', 'true');
  try {
    return await work();
  } finally {
    for (const control of disabled) (control as HTMLButtonElement).disabled = false;
    form.removeAttribute('aria-busy');
  }
}

/** Whether two answers differ (so a poll redraws only what changed and keeps focus otherwise). */
export function changed(previous: { value: string }, next: unknown): boolean {
  const serialised = JSON.stringify(next);
  if (serialised === previous.value) return false;
  previous.value = serialised;
  return true;
}
