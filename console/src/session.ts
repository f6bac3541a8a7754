// The signed-in API key lives in this tab's sessionStorage only: never a cookie, gone when the
// tab closes or on sign-out.

const KEY = 'svc.console.apiKey';

export function savedKey(): string | undefined {
  return sessionStorage.getItem(KEY) ?? undefined;
}

export function saveKey(apiKey: string): void {
  sessionStorage.setItem(KEY, apiKey);
}

export function forgetKey(): void {
  sessionStorage.removeItem(KEY);
}
