// A few helpers to build the DOM from code: elements, SVG, and text, never HTML strings (no
// injection, and nothing the Content-Security-Policy would have to allow).

export type Child = Node | string | number | null | undefined | false | Child[];

type Handler = (event: Event) => void;
export type Props = Record<string, string | number | boolean | Handler | null | undefined>;

function apply(element: Element, props: Props | null | undefined): void {
  if (!props) return;
  for (const [name, value] of Object.entries(props)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') {
      element.addEventListener(name.slice(2).toLowerCase(), value);
    } else if (name === 'value' && !(element instanceof HTMLInputElement) && 'value' in element) {
      // A textarea's or select's value is a property; an input's attribute is also what reset() restores.
      (element as HTMLTextAreaElement).value = String(value);
    } else {
      element.setAttribute(name, value === true ? '' : String(value));
    }
  }
}

function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** An HTML element: attributes and `on…` listeners in props, then its children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props?: Props | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  apply(element, props);
  append(element, children);
  return element;
}

/** An SVG element, the same way. */
export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  props?: Props | null,
  ...children: Child[]
): SVGElementTagNameMap[K] {
  const element = document.createElementNS('http://www.w3.org/2000/svg', tag);
  apply(element, props);
  append(element, children);
  return element;
}

/** Replaces what `parent` holds. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** A time as the reader's locale writes it, in a machine-readable <time>. */
export function time(iso: string | null | undefined): Child {
  if (!iso) return '—';
  return h('time', { datetime: iso, title: iso }, new Date(iso).toLocaleString());
}

/** A status as a labelled badge: the word itself carries the meaning, the colour only helps. */
export function badge(status: string): HTMLElement {
  return h('span', { class: `badge badge-${status.toLowerCase()}` }, status);
}

let hints = 0;

/**
 * A labelled form field: the label wraps its control (a click and a screen reader both find it)
 * and holds only the label's words; a hint is tied to the control with aria-describedby.
 */
export function field(label: string, control: HTMLElement, hint?: string): HTMLElement {
  const hintElement = hint ? h('small', { id: `hint-${++hints}` }, hint) : null;
  if (hintElement) control.setAttribute('aria-describedby', hintElement.id);
  return h('div', { class: 'field' }, h('label', null, h('span', { class: 'label' }, label), control), hintElement);
}

/** A table with a caption, its head, and a body the caller fills (and may refill). */
export function table(caption: string, headings: string[], body: HTMLTableSectionElement): HTMLElement {
  // Each cell carries its column's heading, which a phone shows above the value (a row becomes
  // a card there: see styles.css). Pages redraw rows, so new ones are labelled as they come.
  const label = () => {
    for (const row of body.rows) {
      for (const [index, cell] of [...row.cells].entries()) {
        if (cell.colSpan === 1 && headings[index] && !cell.hasAttribute('data-label')) cell.setAttribute('data-label', headings[index]);
      }
    }
  };
  label();
  new MutationObserver(label).observe(body, { childList: true, subtree: true });
  return h(
    'div',
    { class: 'table-wrap', role: 'region', 'aria-label': caption, tabindex: 0 },
    h('table', null, h('caption', null, caption), h('thead', null, h('tr', null, headings.map((heading) => h('th', { scope: 'col' }, heading)))), body),
  );
}
