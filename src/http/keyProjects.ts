/**
 * Which project each key hash belongs to, as this process last read it. A key's id and project
 * never change; whether it is still active does, so that is never taken from here: a request
 * authenticated from this cache is answered only after the database said the key is active
 * (see Auth.verified).
 */
export class KeyProjects {
  readonly #byHash = new Map<string, { keyId: string; projectId: string }>();

  get(keyHash: string) {
    return this.#byHash.get(keyHash);
  }

  remember(keyHash: string, keyId: string, projectId: string): void {
    if (this.#byHash.size >= 10_000) this.#byHash.clear();
    this.#byHash.set(keyHash, { keyId, projectId });
  }

  forget(keyHash: string): void {
    this.#byHash.delete(keyHash);
  }
}
