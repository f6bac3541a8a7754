// Placeholders in template texts as svc reads them, for forms and previews drawn in the browser
// before anything is sent: POSITIONAL ({{1}}, {{2}}, …) or NAMED ({{first_name}}, CONTRACT §9).

export type ParameterFormat = 'POSITIONAL' | 'NAMED';

const POSITIONAL = /\{\{\s*(\d+)\s*\}\}/g;
const NAMED = /\{\{\s*([a-z][a-z0-9_]*)\s*\}\}/g;
const ANY = /\{\{\s*([^{}\s]+)\s*\}\}/g;

/**
 * The placeholders a text really has, each once: numbers in order ("1", "2"…), names in the order
 * they first appear. Only these get an example field or a value field: never one for a {{2}}
 * that is not in the text.
 */
export function placeholdersOf(text: string, format: ParameterFormat): string[] {
  const found = new Set<string>();
  for (const match of text.matchAll(format === 'NAMED' ? NAMED : POSITIONAL)) found.add(match[1]!);
  const keys = [...found];
  return format === 'NAMED' ? keys : keys.sort((a, b) => Number(a) - Number(b));
}

/** The text with each {{key}} replaced by its value, or left as it is when that value is empty. */
export function fillNamed(text: string, values: Record<string, string>): string {
  return text.replace(ANY, (whole, key: string) => values[key] || whole);
}
