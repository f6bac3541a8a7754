// The API reference's script (served as /docs/reference.js): language and status tabs, the
// API key preset (kept in this tab's sessionStorage), and "Try it", which sends the request from
// this page to this server. Plain browser JavaScript, no dependency; the page reads without it.
/* global document, window, sessionStorage, location, fetch, Headers, CSS, URLSearchParams */
'use strict';

const KEY = 'svc-docs-api-key';
const LANGUAGE = 'svc-docs-language';
const PLACEHOLDER = 'svc_live_YOUR_API_KEY';

function storage(name, value) {
  try {
    if (value === undefined) return sessionStorage.getItem(name) || '';
    if (value === '') sessionStorage.removeItem(name);
    else sessionStorage.setItem(name, value);
  } catch {
    // Storage off: the key lives in this page only.
  }
  return value;
}

let apiKey = storage(KEY);

function select(tabs, key) {
  const button = tabs.querySelector(`[role="tab"][data-tab="${CSS.escape(key)}"]`);
  if (!button) return;
  for (const tab of tabs.querySelectorAll('[role="tab"]')) tab.setAttribute('aria-selected', String(tab === button));
  for (const panel of tabs.querySelectorAll('[role="tabpanel"]')) panel.hidden = panel.dataset.panel !== key;
}

function showKey() {
  for (const span of document.querySelectorAll('[data-key]')) span.textContent = apiKey || PLACEHOLDER;
  const state = document.querySelector('.key-state');
  if (state) state.textContent = apiKey ? `Using the key ${apiKey.slice(0, 12)}… in the curl samples and “Try it” (kept in this tab only).` : 'Kept in this tab only (sessionStorage), never sent anywhere but this server. It fills the curl samples and “Try it”.';
}

document.addEventListener('click', (event) => {
  const tab = event.target.closest('[role="tab"]');
  if (!tab) return;
  const tabs = tab.closest('.tabs');
  if (tabs.dataset.tabs === 'lang') {
    // One language for the whole page, as Stripe's reference does.
    storage(LANGUAGE, tab.dataset.tab);
    for (const other of document.querySelectorAll('.tabs[data-tabs="lang"]')) select(other, tab.dataset.tab);
  } else {
    select(tabs, tab.dataset.tab);
  }
});

async function send(form) {
  const output = form.querySelector('.try-result');
  let path = form.dataset.path;
  const query = new URLSearchParams();
  const headers = new Headers({ accept: 'application/json' });
  for (const input of form.querySelectorAll('input[data-in]')) {
    const value = input.value.trim();
    if (input.dataset.in === 'path') path = path.replace(`{${input.name}}`, encodeURIComponent(value));
    else if (value === '') continue;
    else if (input.dataset.in === 'query') query.set(input.name, value);
    else headers.set(input.name, value);
  }
  if (form.dataset.auth === 'true') {
    if (!apiKey) {
      output.textContent = 'Enter an API key under Authentication first.';
      return;
    }
    headers.set('authorization', `Bearer ${apiKey}`);
  }
  const init = { method: form.dataset.method, headers };
  const body = form.querySelector('textarea[name="body"]');
  if (body && body.value.trim() !== '') {
    headers.set('content-type', 'application/json');
    init.body = body.value;
  }
  const url = `${path}${query.size > 0 ? `?${query}` : ''}`;
  output.textContent = `Sending ${init.method} ${url}…`;
  try {
    const response = await fetch(url, init);
    const text = await response.text();
    let shown = text;
    try {
      shown = JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      // Not JSON (metrics, an empty body): shown as it came.
    }
    const status = document.createElement('p');
    status.className = 'try-status';
    status.textContent = `${response.status} ${response.statusText} · ${init.method} ${url}`;
    const pre = document.createElement('pre');
    pre.textContent = shown;
    output.replaceChildren(status, pre);
  } catch (error) {
    output.textContent = `The request did not complete: ${error.message}`;
  }
}

document.addEventListener('submit', (event) => {
  const form = event.target;
  if (form.matches('.key-form')) {
    event.preventDefault();
    apiKey = storage(KEY, form.apiKey.value.trim());
    form.apiKey.value = '';
    showKey();
  } else if (form.matches('.try-form')) {
    event.preventDefault();
    void send(form);
  }
});

document.addEventListener('click', (event) => {
  if (!event.target.closest('[data-forget]')) return;
  apiKey = storage(KEY, '');
  showKey();
});

for (const span of document.querySelectorAll('[data-base]')) span.textContent = location.origin;
const language = storage(LANGUAGE);
if (language) for (const tabs of document.querySelectorAll('.tabs[data-tabs="lang"]')) select(tabs, language);
showKey();
// A deep link into a folded part of the page opens it.
if (location.hash) document.getElementById(decodeURIComponent(location.hash.slice(1)))?.scrollIntoView();
// On a phone the contents fold above the page instead of filling the first screen.
const menu = document.querySelector('.sidebar .menu');
if (menu && window.matchMedia('(max-width: 900px)').matches && !location.hash) menu.open = false;
