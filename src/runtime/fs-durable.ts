/** Small file-system helpers shared by the file store and the file journal. */
import fs, { type FileHandle } from 'node:fs/promises';

/** Makes a create, rename or unlink durable. Best effort: some platforms cannot open or fsync a directory. */
export async function syncDir(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await fs.open(dir, 'r');
    await handle.sync();
  } catch {
    // Ignored on purpose (see above).
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/** The `code` of a Node system error (ENOENT, EEXIST, ...), if it has one. */
export function errno(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : undefined;
}
