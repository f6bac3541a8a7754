// Text into HTML for the API reference: escaping, and the little Markdown the document's prose
// uses (paragraphs, `code`, **bold**, [links](…), "- " lists). Everything is escaped first, so
// nothing in the document can inject markup.

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ENTITIES[char]!);
}

/** One line of Markdown (already a paragraph's text) as inline HTML. */
export function inline(text: string): string {
  return escapeHtml(text)
    .replace(/`([^`]+)`/g, '<code>$1</code>')
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
    .replace(/\[([^\]]+)\]\(((?:https?:\/\/|\/|#)[^)\s]*)\)/g, '<a href="$2">$1</a>');
}

/** A block of Markdown: paragraphs separated by blank lines, "- " items as a list. */
export function markdown(text: string | undefined): string {
  if (!text) return '';
  return text
    .trim()
    .split(/\n\s*\n/)
    .map((block) => {
      const lines = block.split('\n');
      if (lines.every((line) => /^\s*[-*] /.test(line) || /^\s{2,}\S/.test(line))) {
        const items = block.split(/\n\s*[-*] /).map((item) => item.replace(/^\s*[-*] /, '').replace(/\s*\n\s*/g, ' '));
        return `<ul>${items.map((item) => `<li>${inline(item)}</li>`).join('')}</ul>`;
      }
      return `<p>${inline(block.replace(/\s*\n\s*/g, ' '))}</p>`;
    })
    .join('\n');
}

/** A value as pretty JSON, escaped for a <pre>. */
export function json(value: unknown): string {
  return escapeHtml(JSON.stringify(value, null, 2));
}

/** A slug for an id attribute: "API keys" → "api-keys". */
export function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}
