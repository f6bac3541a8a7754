import './styles.css';
import { type Api, createApi } from './api.ts';
import { h, replace } from './dom.ts';
import { CONSOLE, type Page, type PageContext } from './page.ts';
import { errorText } from './ui.ts';
import { askOtherTabs, forgetKey, savedKey, saveKey, shareWithOtherTabs, signOutOtherTabs } from './session.ts';
import { analyticsPage } from './pages/analytics.ts';
import { batchesPage } from './pages/batches.ts';
import { deliveriesPage } from './pages/deliveries.ts';
import { deliveryPage } from './pages/delivery.ts';
import { keysPage } from './pages/keys.ts';
import { messagePage } from './pages/message.ts';
import { messagesPage } from './pages/messages.ts';
import { providerPage } from './pages/provider.ts';
import { renderSignIn } from './pages/signIn.ts';
import { suppressionsPage } from './pages/suppressions.ts';
import { templatePage } from './pages/template.ts';
import { templatesPage } from './pages/templates.ts';
import { webhooksPage } from './pages/webhooks.ts';

// The shell: sign-in, the header and its navigation, and the router that draws a page for each
// /console/… path (history API, so every page has a link of its own).

const NAV: [string, string][] = [
  ['messages', 'Messages'],
  ['templates', 'Templates'],
  ['batches', 'Batches'],
  ['webhooks', 'Webhooks'],
  ['deliveries', 'Deliveries'],
  ['suppressions', 'Suppressions'],
  ['keys', 'API keys'],
  ['provider', 'Provider'],
  ['analytics', 'Analytics'],
];

const ROUTES: [RegExp, Page][] = [
  [/^\/messages$/, messagesPage],
  [/^\/messages\/([^/]+)$/, messagePage],
  [/^\/templates$/, templatesPage],
  [/^\/templates\/([^/]+)$/, templatePage],
  [/^\/batches$/, batchesPage],
  [/^\/webhooks$/, webhooksPage],
  [/^\/deliveries$/, deliveriesPage],
  [/^\/deliveries\/([^/]+)$/, deliveryPage],
  [/^\/suppressions$/, suppressionsPage],
  [/^\/keys$/, keysPage],
  [/^\/provider$/, providerPage],
  [/^\/analytics$/, analyticsPage],
];

const notFoundPage: Page = {
  title: 'Page not found',
  render({ main }) {
    replace(main, h('h1', { tabindex: -1 }, 'Page not found'), h('p', null, 'Nothing here. ', h('a', { href: `${CONSOLE}/messages` }, 'Go to the messages.')));
  },
};

const root = document.getElementById('app')!;
let session: { api: Api; apiKey: string; leave: AbortController } | undefined;

function signOut(message?: string, fromOtherTab = false): void {
  forgetKey();
  if (!fromOtherTab && session) signOutOtherTabs(session.apiKey);
  session?.leave.abort();
  session = undefined;
  history.replaceState(null, '', CONSOLE);
  renderSignIn(root, start, message);
}

function navigate(href: string, options: { replace?: boolean } = {}): void {
  if (options.replace) history.replaceState(null, '', href);
  else history.pushState(null, '', href);
  void route(true);
}

/**
 * The toast's one timer, shared by every page: a page's own timer would let the page before it
 * clear a newer page's announcement early.
 */
let announceTimer: number | undefined;

function announce(text: string): void {
  const region = document.getElementById('announcer');
  if (!region) return;
  region.textContent = text;
  clearTimeout(announceTimer);
  announceTimer = window.setTimeout(() => (region.textContent = ''), 6000);
}

function renderShell(): void {
  const nav = h(
    'nav',
    { 'aria-label': 'Console' },
    h('ul', null, NAV.map(([path, label]) => h('li', null, h('a', { href: `${CONSOLE}/${path}`, 'data-nav': path }, label)))),
  );
  replace(
    root,
    h('a', { class: 'skip', href: '#main' }, 'Skip to content'),
    h(
      'header',
      { class: 'top' },
      h('a', { class: 'brand', href: `${CONSOLE}/messages` }, 'svc console'),
      h('span', { class: 'project', id: 'project-name' }),
      h('span', { id: 'provider-badge' }),
      nav,
      h('button', { type: 'button', class: 'secondary', id: 'sign-out', onclick: () => signOut('You are signed out.') }, 'Sign out'),
    ),
    h('main', { id: 'main', tabindex: -1 }),
    h('div', { id: 'announcer', class: 'toast', role: 'status', 'aria-live': 'polite' }),
  );
  void session!.api
    .get<{ name: string; projectId: string; providerName?: string }>('/v1/projects/me')
    .then((project) => {
      const label = document.getElementById('project-name');
      if (label) label.textContent = `${project.name} · ${project.projectId}`;
      // Said on every page: in the sandbox nothing reaches WhatsApp, whatever the statuses say.
      if (project.providerName === 'sandbox') {
        replace(
          document.getElementById('provider-badge')!,
          h('span', { class: 'badge badge-sandbox', title: 'The sandbox provider: messages are simulated, nothing is sent to WhatsApp.' }, 'Sandbox'),
        );
      }
    })
    .catch(() => {});
}

async function route(moved: boolean): Promise<void> {
  if (!session) return;
  session.leave.abort();
  const leave = new AbortController();
  session.leave = leave;
  let path = location.pathname.slice(CONSOLE.length).replace(/\/+$/, '');
  if (path === '') {
    history.replaceState(null, '', `${CONSOLE}/messages`);
    path = '/messages';
  }
  let params: string[] = [];
  let page = notFoundPage;
  for (const [pattern, candidate] of ROUTES) {
    const match = pattern.exec(path);
    if (match) {
      page = candidate;
      params = match.slice(1).map(decodeURIComponent);
      break;
    }
  }
  for (const link of root.querySelectorAll<HTMLAnchorElement>('[data-nav]')) {
    if (path.startsWith(`/${link.dataset.nav}`)) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  document.title = `${page.title} · svc console`;
  const main = document.getElementById('main')!;
  main.replaceChildren();
  const polls: number[] = [];
  leave.signal.addEventListener('abort', () => polls.forEach((timer) => clearTimeout(timer)));
  const ctx: PageContext = {
    api: session.api,
    main,
    params,
    query: new URLSearchParams(location.search),
    signal: leave.signal,
    keyPrefix: session.apiKey.slice(0, 12),
    navigate,
    poll(ms, work) {
      // A refresh that fails keeps what the page shows, says so above it, and tries again.
      const banner = h('p', { class: 'alert refresh-error', role: 'status' });
      const tick = async () => {
        if (leave.signal.aborted) return;
        if (document.visibilityState === 'visible') {
          try {
            await work();
            banner.remove();
          } catch (error) {
            if (!leave.signal.aborted) {
              banner.textContent = `Could not refresh this page: ${errorText(error)} Trying again…`;
              if (!banner.isConnected) main.querySelector('h1')?.after(banner);
            }
          }
        }
        if (!leave.signal.aborted) polls.push(window.setTimeout(tick, ms));
      };
      polls.push(window.setTimeout(tick, ms));
    },
    announce,
    signOut,
  };
  await page.render(ctx);
  // Moving to a page puts the reader at its heading, as a page load would.
  if (moved && !leave.signal.aborted) main.querySelector<HTMLElement>('h1')?.focus();
}

function start(apiKey: string): void {
  session = {
    apiKey,
    api: createApi(apiKey, () => signOut('The API key is no longer valid (revoked, or its project disabled). Sign in again.')),
    leave: new AbortController(),
  };
  renderShell();
  void route(false);
}

// Links inside the console change the page without reloading it.
document.addEventListener('click', (event) => {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const link = (event.target as Element).closest?.('a');
  if (!link || link.target || link.hasAttribute('download') || link.origin !== location.origin) return;
  if (link.getAttribute('href')?.startsWith('#')) return;
  if (link.pathname !== CONSOLE && !link.pathname.startsWith(`${CONSOLE}/`)) return;
  if (!session) return;
  event.preventDefault();
  navigate(link.pathname + link.search);
});
window.addEventListener('popstate', () => void route(true));

// A tab signed in lends its key to a new tab of the console (same origin only, in memory, never
// stored on disk), and a sign-out in one tab signs every tab out: see session.ts.
shareWithOtherTabs(() => session?.apiKey, () => {
  if (session) signOut('You signed out in another tab.', true);
});
const apiKey = savedKey();
if (apiKey) start(apiKey);
else {
  renderSignIn(root, start);
  void askOtherTabs().then((lent) => {
    // Only if the reader has not started typing or signing in meanwhile.
    if (lent && !session) {
      saveKey(lent);
      start(lent);
    }
  });
}
