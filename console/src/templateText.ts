// Placeholders in template texts ({{1}}, {{2}}, …) as svc numbers them, for forms and previews
// drawn in the browser before anything is sent.

const PLACEHOLDER = /\{\{\s*(\d+)\s*\}\}/g;

/** How many placeholders a text uses: its highest number (svc requires them without gaps). */
export function placeholderCount(text: string): number {
  let highest = 0;
  for (const match of text.matchAll(PLACEHOLDER)) highest = Math.max(highest, Number(match[1]));
  return highest;
}

/** The text with each {{n}} replaced by values[n - 1], or left as it is when that value is empty. */
export function fillPlaceholders(text: string, values: string[]): string {
  return text.replace(PLACEHOLDER, (whole, n: string) => {
    const value = values[Number(n) - 1];
    return value ? value : whole;
  });
}
