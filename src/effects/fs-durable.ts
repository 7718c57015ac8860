/** Small file-system helpers shared by the file store and the file journal. */
import fs, { type FileHandle } from 'node:fs/promises';
import path from 'node:path';

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

/**
 * Writes `text` to `target` so that a crash leaves either the old file or the new one, never a
 * torn one: a temp file next to it is written and fsynced, renamed over `target`, and the
 * directory fsynced.
 */
export async function writeFileDurable(target: string, text: string): Promise<void> {
  const tmp = `${target}.${process.pid}.${Math.random().toString(36).slice(2, 8)}.tmp`;
  const handle = await fs.open(tmp, 'w');
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await fs.rename(tmp, target);
  } catch (error) {
    await fs.unlink(tmp).catch(() => undefined);
    throw error;
  }
  await syncDir(path.dirname(target));
}
