import { createApi, createProject, SvcError } from '../api.ts';
import { field, h, replace } from '../dom.ts';
import { saveKey } from '../session.ts';
import { alertBox, busy, copyButton } from '../ui.ts';

// Sign in with an API key (checked with GET /v1/projects/me before it is kept), or create a
// project and get its first key.

export function renderSignIn(root: HTMLElement, start: (apiKey: string) => void, message?: string): void {
  document.title = 'Sign in · svc console';
  const keyInput = h('input', {
    name: 'apiKey',
    type: 'password',
    required: true,
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: 'svc_live_…',
    pattern: '\\s*svc_live_\\S+\\s*',
  });
  const signInStatus = h('div');
  const signInForm = h(
    'form',
    { class: 'card', 'aria-labelledby': 'sign-in-heading' },
    h('h2', { id: 'sign-in-heading' }, 'Sign in'),
    field('API key', keyInput, 'Kept in this tab only (session storage) and sent as a Bearer token; never a cookie.'),
    signInStatus,
    h('button', { type: 'submit' }, 'Sign in'),
  );
  signInForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const apiKey = keyInput.value.trim();
    // A message from an earlier try never stays beside a new one.
    replace(signInStatus);
    void busy(signInForm, async () => {
      try {
        await createApi(apiKey, () => {}).get('/v1/projects/me');
        saveKey(apiKey);
        start(apiKey);
      } catch (error) {
        replace(
          signInStatus,
          error instanceof SvcError && error.status === 401
            ? h('p', { class: 'alert', role: 'alert' }, 'That API key is not valid: unknown, revoked, or its project is disabled.')
            : alertBox(error),
        );
        keyInput.focus();
      }
    });
  });

  const nameInput = h('input', { name: 'name', required: true, maxlength: 200, autocomplete: 'organization' });
  const emailInput = h('input', { name: 'ownerEmail', type: 'email', required: true, autocomplete: 'email' });
  const createStatus = h('div');
  const createForm = h(
    'form',
    { class: 'card', 'aria-labelledby': 'create-heading' },
    h('h2', { id: 'create-heading' }, 'New here? Create a project'),
    field('Project name', nameInput),
    field('Owner e-mail', emailInput),
    createStatus,
    h('button', { type: 'submit', class: 'secondary' }, 'Create project'),
  );
  createForm.addEventListener('submit', (event) => {
    event.preventDefault();
    replace(createStatus);
    replace(signInStatus);
    void busy(createForm, async () => {
      try {
        const project = await createProject(nameInput.value, emailInput.value);
        const copied = h('span', { class: 'muted', role: 'status' });
        replace(
          createStatus,
          h(
            'div',
            { class: 'secret', role: 'status' },
            h('p', null, h('strong', null, `Project ${project.projectId} created.`), ' Its first API key is shown once: keep it somewhere safe.'),
            h('code', { class: 'key-value', id: 'new-project-key' }, project.apiKey),
            copyButton(() => project.apiKey, (text) => replace(copied, text)),
            copied,
            h('button', { type: 'button', onclick: () => {
                  keyInput.value = project.apiKey;
                  signInForm.requestSubmit();
                } }, 'Sign in with this key'),
          ),
        );
      } catch (error) {
        replace(createStatus, alertBox(error));
      }
    });
  });

  replace(
    root,
    h(
      'main',
      { id: 'main', class: 'sign-in' },
      h('h1', null, 'svc console'),
      message ? h('p', { class: 'notice', role: 'status' }, message) : null,
      signInForm,
      createForm,
      h('p', { class: 'muted' }, 'The API reference is at ', h('a', { href: '/docs' }, '/docs'), '.'),
    ),
  );
  keyInput.focus();
}
