// WhatsApp refuses template parameters with new lines, tabs or more than four spaces in a row
// (the sandbox, which imitates it, applies the same rule).
const NEWLINE_OR_TAB = /[\n\r\t]/;
const FIVE_SPACES = / {5}/;

/** Why WhatsApp refuses a template parameter value, or undefined when it takes it. */
export function whatsappParameterRule(value: string): string | undefined {
  if (NEWLINE_OR_TAB.test(value)) return 'must not contain new lines or tabs';
  if (FIVE_SPACES.test(value)) return 'must not contain more than four consecutive spaces';
  return undefined;
}
