import type { Api } from './api.ts';

// What a page gets from the shell. A page draws into `main`, and stops its work (polls, pending
// requests' redraws) when `signal` aborts, which happens when the reader goes elsewhere.

export interface PageContext {
  readonly api: Api;
  readonly main: HTMLElement;
  /** The groups the route's pattern captured (e.g. a message id). */
  readonly params: string[];
  readonly query: URLSearchParams;
  readonly signal: AbortSignal;
  /** The first characters of the signed-in key, as the API lists keys (`prefix`). */
  readonly keyPrefix: string;
  navigate(href: string, options?: { replace?: boolean }): void;
  /** Runs `work` every `ms` while the page is shown and the tab visible, one run at a time. */
  poll(ms: number, work: () => Promise<void>): void;
  /** Says something to screen-reader users (a polite live region) and shows it briefly. */
  announce(text: string): void;
  signOut(message?: string): void;
}

export interface Page {
  title: string;
  render(ctx: PageContext): Promise<void> | void;
}

export const CONSOLE = '/console';
