import type { Db } from '../../db/database.ts';
import { findTemplateByNameAndLanguage } from '../../db/templates.ts';

// Whether a send's template is an AUTHENTICATION one, whose OTP button Meta requires the code
// for. A submission names its template by name and language only; the answer is read once a
// minute per template, not once per message (the send path is hot). A template's category is
// fixed for AUTHENTICATION: Meta re-categorises only between UTILITY and MARKETING.

const TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;

export class CodeButtons {
  readonly #db: Db;
  readonly #known = new Map<string, { authentication: boolean; until: number }>();

  constructor(db: Db) {
    this.#db = db;
  }

  async needed(projectId: string, name: string, language: string, now = Date.now()): Promise<boolean> {
    const key = `${projectId}\u0000${name}\u0000${language}`;
    const known = this.#known.get(key);
    if (known !== undefined && known.until > now) return known.authentication;
    const template = await findTemplateByNameAndLanguage(this.#db, projectId, name, language);
    const authentication = template?.category === 'AUTHENTICATION';
    if (this.#known.size >= MAX_ENTRIES) this.#known.clear();
    this.#known.set(key, { authentication, until: now + TTL_MS });
    return authentication;
  }
}
