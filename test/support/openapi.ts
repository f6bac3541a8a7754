/**
 * A copy of an OpenAPI document with every local `$ref` replaced by what it points to, for tests
 * that read a schema's properties wherever the document names it (components.schemas).
 */
export function inlineRefs(document: any): any {
  const inline = (node: any, seen: string[]): any => {
    if (Array.isArray(node)) return node.map((item) => inline(item, seen));
    if (typeof node !== 'object' || node === null) return node;
    if (typeof node.$ref === 'string' && node.$ref.startsWith('#/') && !seen.includes(node.$ref)) {
      const target = node.$ref.slice(2).split('/').reduce((at: any, key: string) => at?.[key], document);
      return inline(target, [...seen, node.$ref]);
    }
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, inline(value, seen)]));
  };
  return inline(document, []);
}
