// What a file object storage (service/adapters/fs-storage) holds, read straight from its folder, so a test
// sees what was really stored and not what the storage's own listing says.
import { readdir } from 'node:fs/promises';
import path from 'node:path';

/** Every object key under the storage root, sorted, with '/' separators (the storage's own .tmp excluded). */
export async function storedKeys(storageRoot: string): Promise<string[]> {
  const entries = await readdir(storageRoot, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(storageRoot, path.join(e.parentPath, e.name)).split(path.sep).join('/'))
    .filter((k) => !k.startsWith('.tmp/'))
    .sort();
}
