// Answers about an executable (its version, what it can do), probed once per build. Keyed by
// path, size and mtime, so a build replaced in place (an upgrade) is probed again. A failed
// probe is forgotten, so the next call tries again. One per worker: never a module singleton.
import { stat } from 'node:fs/promises';

export class PerBinaryCache<T> {
  private readonly entries = new Map<string, Promise<T>>();

  constructor(private readonly probe: (binary: string) => Promise<T>) {}

  async get(binary: string, run: (binary: string) => Promise<T> = this.probe): Promise<T> {
    const st = await stat(binary).catch(() => undefined);
    const key = st ? `${binary}\0${st.size}\0${st.mtimeMs}` : binary;
    let hit = this.entries.get(key);
    if (!hit) {
      hit = run(binary);
      this.entries.set(key, hit);
      hit.catch(() => this.entries.delete(key));
    }
    return hit;
  }
}
