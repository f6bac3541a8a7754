// The signed-in API key lives in this tab's sessionStorage only: never a cookie, never
// localStorage, gone when the tab closes or on sign-out.
//
// A new tab of the console (a link opened in a new tab, a bookmark) starts with empty session
// storage; rather than keep the key on disk (localStorage outlives the browser and every tab,
// which on a shared computer leaves a live key behind), a new tab asks the console's open tabs
// over a BroadcastChannel (same origin only, in memory) and one signed in lends it the key. So
// the key lives exactly as long as some console tab is open, and signing out in one tab signs
// every tab out.

const KEY = 'svc.console.apiKey';
const CHANNEL = 'svc.console.session';
/** How long a new tab waits for an open tab to answer: they answer at once, or there is none. */
const ASK_MS = 400;

// A sign-out names the key's visible prefix (as the API lists keys), so a tab signed in with
// another key stays signed in.
type Note = { type: 'ask'; from: string } | { type: 'key'; to: string; key: string } | { type: 'sign-out'; prefix: string };

const prefixOf = (apiKey: string) => apiKey.slice(0, 12);

let channel: BroadcastChannel | undefined;

export function savedKey(): string | undefined {
  return sessionStorage.getItem(KEY) ?? undefined;
}

export function saveKey(apiKey: string): void {
  sessionStorage.setItem(KEY, apiKey);
}

export function forgetKey(): void {
  sessionStorage.removeItem(KEY);
}

/** Answers other tabs' requests for the key while this tab is signed in, and hears sign-outs. */
export function shareWithOtherTabs(current: () => string | undefined, signedOutElsewhere: () => void): void {
  if (typeof BroadcastChannel === 'undefined') return;
  channel = new BroadcastChannel(CHANNEL);
  channel.addEventListener('message', (event: MessageEvent<Note>) => {
    const note = event.data;
    if (note?.type === 'ask') {
      const key = current();
      if (key) channel!.postMessage({ type: 'key', to: note.from, key } satisfies Note);
    } else if (note?.type === 'sign-out') {
      const key = current();
      if (key && prefixOf(key) === note.prefix) signedOutElsewhere();
    }
  });
}

/** Tells the other tabs signed in with this key that the reader signed out. */
export function signOutOtherTabs(apiKey: string): void {
  channel?.postMessage({ type: 'sign-out', prefix: prefixOf(apiKey) } satisfies Note);
}

/** The key of a console tab already signed in, if one answers. */
export function askOtherTabs(): Promise<string | undefined> {
  if (typeof BroadcastChannel === 'undefined') return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const asking = new BroadcastChannel(CHANNEL);
    const me = crypto.randomUUID();
    const done = (key: string | undefined) => {
      clearTimeout(timer);
      asking.close();
      resolve(key);
    };
    const timer = setTimeout(() => done(undefined), ASK_MS);
    asking.addEventListener('message', (event: MessageEvent<Note>) => {
      const note = event.data;
      if (note?.type === 'key' && note.to === me && typeof note.key === 'string') done(note.key);
    });
    asking.postMessage({ type: 'ask', from: me } satisfies Note);
  });
}
