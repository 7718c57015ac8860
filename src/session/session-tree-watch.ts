/**
 * `watchSessionTrees()`: tells when a tree file under a data dir (`<dataDir>/trees/`, see
 * session-tree-file.ts) may have changed, whoever wrote it (this process or another one: the files
 * are the truth). `fs.watch` on the directory wakes it; a poll of the files' identities (inode,
 * size, mtime) is the fallback (fs.watch is not reliable everywhere, and the directory may not
 * exist yet). Bursts are debounced into one call. It says only "look again": the caller re-reads
 * and compares (a rewrite with the same content is no change).
 */
import { watch, type FSWatcher } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';

export interface SessionTreeWatchOptions {
  dataDir: string;
  /** Something under `trees/` changed (debounced). */
  onChange(): void;
  /** Quiet time before `onChange`. Default 30 ms. */
  debounceMs?: number;
  /** Fallback poll period. Default 500 ms. */
  pollIntervalMs?: number;
}

export interface SessionTreeWatch {
  /** Stops watching: no timer, no watcher left open. */
  close(): void;
}

export function watchSessionTrees(options: SessionTreeWatchOptions): SessionTreeWatch {
  const dir = path.join(path.resolve(options.dataDir), 'trees');
  const debounceMs = options.debounceMs ?? 30;
  let closed = false;
  let watcher: FSWatcher | undefined;
  let debounce: NodeJS.Timeout | undefined;
  let signature: string | undefined;
  let polling = false;

  const changed = () => {
    if (closed) return;
    clearTimeout(debounce);
    debounce = setTimeout(() => {
      debounce = undefined;
      if (!closed) options.onChange();
    }, debounceMs);
    debounce.unref();
  };

  const startWatcher = () => {
    if (watcher || closed) return;
    try {
      watcher = watch(dir, () => changed());
      watcher.on('error', () => {
        watcher?.close();
        watcher = undefined;
      });
    } catch {
      // No directory yet (no tree kept here so far): the poll finds it once it appears.
    }
  };

  /** The files' identities; a change the watcher missed shows here. */
  const poll = async () => {
    if (polling || closed) return;
    polling = true;
    try {
      const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.json')).sort();
      const parts = await Promise.all(
        names.map(async (name) => {
          const s = await stat(path.join(dir, name)).catch(() => undefined);
          return s ? `${name}:${s.ino}:${s.size}:${s.mtimeMs}` : `${name}:gone`;
        }),
      );
      const next = parts.join('|');
      if (signature !== undefined && next !== signature) changed();
      signature = next;
      startWatcher();
    } finally {
      polling = false;
    }
  };

  const timer = setInterval(() => void poll(), options.pollIntervalMs ?? 500);
  timer.unref();
  startWatcher();
  void poll();

  return {
    close() {
      closed = true;
      clearInterval(timer);
      clearTimeout(debounce);
      watcher?.close();
      watcher = undefined;
    },
  };
}
