import type { Db } from '../db/database.ts';
import { findSendContext, type SendContext } from '../db/messages.ts';
import type { TemplatesTable } from '../db/tables.ts';
import { type TemplateShape, templateShape } from '../domain/templateMessage.ts';
import type { TemplateComponent } from '../providers/provider.ts';

/** A template's components as a send uses them, parsed once per template row read. */
export interface TemplateParts extends TemplateShape {
  headerCount: number;
  bodyCount: number;
}

const partsByRow = new WeakMap<TemplatesTable, TemplateParts>();

export function templateParts(template: TemplatesTable): TemplateParts {
  let parts = partsByRow.get(template);
  if (parts === undefined) {
    const components = JSON.parse(template.components) as TemplateComponent[];
    const shape = templateShape(components, template.parameter_format === 'NAMED' ? 'NAMED' : 'POSITIONAL');
    parts = { ...shape, headerCount: shape.headerKeys.length, bodyCount: shape.bodyKeys.length };
    partsByRow.set(template, parts);
  }
  return parts;
}

const MAX_ENTRIES = 5_000;

/**
 * What a send needs to know of its project and template (findSendContext), as this process last
 * read it, per (project, template name). Nothing here is trusted on its own: a send checked
 * against a remembered context is committed only if the commit finds the template and the project
 * as they were (MessageAcceptor), and a send a remembered context would refuse is checked again
 * against a fresh read before the refusal leaves. So the cache only saves reads: a template
 * approved, paused, deleted or registered again — by this process or another — is seen by the
 * next send, and another project's templates are never under this project's key.
 */
export class SendContexts {
  readonly #reader: Db;
  readonly #entries = new Map<string, SendContext>();

  constructor(reader: Db) {
    this.#reader = reader;
  }

  /** The remembered context, or a fresh read (remembered for the next send). */
  async get(projectId: string, templateName: string, fresh: boolean): Promise<SendContext | undefined> {
    const key = `${projectId}\n${templateName}`;
    if (!fresh) {
      const known = this.#entries.get(key);
      if (known !== undefined) return known;
    }
    const context = await findSendContext(this.#reader, projectId, templateName);
    this.#entries.delete(key);
    if (context !== undefined) {
      if (this.#entries.size >= MAX_ENTRIES) this.#entries.delete(this.#entries.keys().next().value!);
      this.#entries.set(key, context);
    }
    return context;
  }
}
