/**
 * The embedded default SessionStore: one JSON file per session, `<dir>/<sessionId>.json`, holding
 * `{ version, state }`. Writes go to a temp file that is fsynced and renamed over the target, so a
 * crash leaves either the old or the new file, never a torn one.
 *
 * Compare-and-set guarantee: it holds for all writers in one process (saves of a session id are
 * serialized through a per-file promise chain, shared by every FileStore instance of the process).
 * Across processes it is best effort: an exclusive `<id>.lock` file (O_EXCL) is held around the
 * read-compare-write, which protects writers on a local filesystem, but a lock older than the stale
 * threshold is broken (its holder is assumed dead), as is one whose holder, a process of this host,
 * is gone (a writer killed mid-save must not block the next run for the stale threshold), and O_EXCL
 * is not reliable on every network filesystem. A holder that stalls past the threshold can therefore lose the guarantee.
 */
import { randomBytes } from 'node:crypto';
import fs, { type FileHandle } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PersistedSessionSchema, type PersistedSession, type VersionedSession } from '../../events/session-state.js';
import { AseError } from '../../errors.js';
import { assertExpectedVersion } from './memory-store.js';
import type { SaveResult, SessionStore } from './session-store.js';
import { errno, syncDir } from '../fs-durable.js';

export interface FileStoreOptions {
  dir: string;
  /** How long a save waits for another process's lock before failing with STORE_IO (default 2000 ms). */
  lockTimeoutMs?: number;
  /** A lock file older than this is taken to be left by a dead process and removed (default 30000 ms). */
  staleLockMs?: number;
}

const SESSION_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** Session ids become file names, so anything that could leave `dir` is rejected. */
export function assertSessionId(sessionId: string): void {
  if (typeof sessionId !== 'string' || !SESSION_ID.test(sessionId) || sessionId === '.' || sessionId === '..') {
    throw new AseError('INVALID_INPUT', `invalid session id ${JSON.stringify(sessionId)}: expected 1-128 of [A-Za-z0-9._-], not '.' or '..'`);
  }
}

export function isValidSessionId(sessionId: string): boolean {
  return SESSION_ID.test(sessionId) && sessionId !== '.' && sessionId !== '..';
}

/** Per target file, process-wide, so two FileStore instances on one dir also serialize. */
const chains = new Map<string, Promise<void>>();

function serialize<T>(key: string, task: () => Promise<T>): Promise<T> {
  const previous = chains.get(key) ?? Promise.resolve();
  const run = previous.then(task);
  const tail = run.then(
    () => undefined,
    () => undefined,
  );
  chains.set(key, tail);
  void tail.then(() => {
    if (chains.get(key) === tail) chains.delete(key);
  });
  return run;
}

/** What is on disk: `state` is undefined when the file has a readable version but a bad state. */
interface OnDisk {
  version: number;
  state: PersistedSession | undefined;
}

export class FileStore implements SessionStore {
  readonly dir: string;
  readonly #lockTimeoutMs: number;
  readonly #staleLockMs: number;

  constructor(options: FileStoreOptions) {
    if (!options || typeof options.dir !== 'string' || options.dir === '') {
      throw new AseError('INVALID_OPTIONS', 'FileStore: dir must be a non-empty string');
    }
    this.dir = path.resolve(options.dir);
    this.#lockTimeoutMs = options.lockTimeoutMs ?? 2000;
    this.#staleLockMs = options.staleLockMs ?? 30_000;
  }

  async load(sessionId: string): Promise<VersionedSession | undefined> {
    assertSessionId(sessionId);
    const current = await this.#read(sessionId);
    if (!current) return undefined;
    if (!current.state) throw new AseError('STORE_CORRUPT', `${this.#file(sessionId)}: state does not match the session schema`);
    return { version: current.version, state: current.state };
  }

  async save(sessionId: string, state: PersistedSession, expectedVersion: number): Promise<SaveResult> {
    assertSessionId(sessionId);
    assertExpectedVersion(expectedVersion);
    // Refuse to write what load would later reject as corrupt.
    const parsed = PersistedSessionSchema.safeParse(state);
    if (!parsed.success) {
      throw new AseError('INVALID_INPUT', `FileStore.save(${sessionId}): state does not match the session schema: ${parsed.error.message}`);
    }
    const body = JSON.stringify({ version: expectedVersion + 1, state });
    return serialize(this.#file(sessionId), async () => {
      await this.#io(`creating ${this.dir}`, () => fs.mkdir(this.dir, { recursive: true }));
      return this.#withLock(sessionId, async (): Promise<SaveResult> => {
        // A file with a readable version but a bad state can still be overwritten by a writer that
        // names that version: that is how a caller repairs it.
        const current = await this.#read(sessionId);
        const currentVersion = current?.version ?? 0;
        if (currentVersion !== expectedVersion) {
          return { ok: false, version: currentVersion, ...(current?.state && { stored: current.state }) };
        }
        await this.#writeAtomic(sessionId, body);
        return { ok: true, version: expectedVersion + 1 };
      });
    });
  }

  async list(): Promise<string[]> {
    let names: string[];
    try {
      names = await fs.readdir(this.dir);
    } catch (error) {
      if (errno(error) === 'ENOENT') return [];
      throw new AseError('STORE_IO', `listing ${this.dir} failed: ${message(error)}`, { cause: error });
    }
    return names
      .filter((name) => name.endsWith('.json'))
      .map((name) => name.slice(0, -'.json'.length))
      .filter(isValidSessionId)
      .sort();
  }

  async delete(sessionId: string): Promise<void> {
    assertSessionId(sessionId);
    await serialize(this.#file(sessionId), async () => {
      try {
        await fs.stat(this.dir);
      } catch (error) {
        if (errno(error) === 'ENOENT') return; // Nothing was ever saved here.
        throw new AseError('STORE_IO', `reading ${this.dir} failed: ${message(error)}`, { cause: error });
      }
      await this.#withLock(sessionId, async () => {
        await this.#io(`deleting ${this.#file(sessionId)}`, () => fs.rm(this.#file(sessionId), { force: true }));
        await syncDir(this.dir);
      });
    });
  }

  #file(sessionId: string): string {
    return path.join(this.dir, `${sessionId}.json`);
  }

  async #read(sessionId: string): Promise<OnDisk | undefined> {
    const file = this.#file(sessionId);
    let text: string;
    try {
      text = await fs.readFile(file, 'utf8');
    } catch (error) {
      if (errno(error) === 'ENOENT') return undefined;
      throw new AseError('STORE_IO', `reading ${file} failed: ${message(error)}`, { cause: error });
    }
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (error) {
      throw new AseError('STORE_CORRUPT', `${file}: not valid JSON`, { cause: error });
    }
    if (typeof data !== 'object' || data === null) throw new AseError('STORE_CORRUPT', `${file}: not a JSON object`);
    const { version, state } = data as { version?: unknown; state?: unknown };
    if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1) {
      throw new AseError('STORE_CORRUPT', `${file}: missing or invalid version`);
    }
    const parsed = PersistedSessionSchema.safeParse(state);
    return { version, state: parsed.success ? parsed.data : undefined };
  }

  async #writeAtomic(sessionId: string, body: string): Promise<void> {
    const target = this.#file(sessionId);
    const tmp = path.join(this.dir, `.${sessionId}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
    let handle: FileHandle | undefined;
    try {
      handle = await fs.open(tmp, 'wx');
      await handle.writeFile(body, 'utf8');
      await handle.sync();
      await handle.close();
      handle = undefined;
      await fs.rename(tmp, target);
    } catch (error) {
      await handle?.close().catch(() => undefined);
      await fs.rm(tmp, { force: true }).catch(() => undefined);
      throw new AseError('STORE_IO', `writing ${target} failed: ${message(error)}`, { cause: error });
    }
    await syncDir(this.dir);
  }

  async #withLock<T>(sessionId: string, task: () => Promise<T>): Promise<T> {
    const lockPath = path.join(this.dir, `${sessionId}.lock`);
    // pid and host name it for #breakIfStale: a lock of a dead process of this host is broken at once.
    const token = `${process.pid} ${os.hostname()} ${randomBytes(8).toString('hex')}\n`;
    const deadline = Date.now() + this.#lockTimeoutMs;
    for (;;) {
      try {
        const handle = await fs.open(lockPath, 'wx');
        try {
          await handle.writeFile(token, 'utf8');
        } finally {
          await handle.close();
        }
        break;
      } catch (error) {
        if (errno(error) !== 'EEXIST') throw new AseError('STORE_IO', `locking ${lockPath} failed: ${message(error)}`, { cause: error });
      }
      if (await this.#breakIfStale(lockPath)) continue;
      if (Date.now() >= deadline) {
        throw new AseError('STORE_IO', `timed out after ${this.#lockTimeoutMs} ms waiting for ${lockPath} (held by another process?)`);
      }
      await sleep(5 + Math.random() * 20);
    }
    try {
      return await task();
    } finally {
      // Remove only our own lock: if it was broken as stale meanwhile, the file is someone else's.
      const content = await fs.readFile(lockPath, 'utf8').catch(() => undefined);
      if (content === token) await fs.rm(lockPath, { force: true }).catch(() => undefined);
    }
  }

  /** True when the lock was gone or stale (and removed), so acquiring should be retried at once. */
  async #breakIfStale(lockPath: string): Promise<boolean> {
    try {
      const stat = await fs.stat(lockPath);
      const holderGone = !holderAlive(await fs.readFile(lockPath, 'utf8').catch(() => ''));
      if (!holderGone && Date.now() - stat.mtimeMs < this.#staleLockMs) return false;
      await fs.rm(lockPath, { force: true });
      return true;
    } catch (error) {
      if (errno(error) === 'ENOENT') return true;
      throw new AseError('STORE_IO', `inspecting ${lockPath} failed: ${message(error)}`, { cause: error });
    }
  }

  async #io<T>(what: string, task: () => Promise<T>): Promise<T> {
    try {
      return await task();
    } catch (error) {
      throw new AseError('STORE_IO', `${what} failed: ${message(error)}`, { cause: error });
    }
  }
}


function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}


function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * False only when the lock names a process of this host that no longer exists. A lock written by
 * another host, an older format, a half-written one, or a live (or reused) pid counts as alive,
 * leaving it to the age rule.
 */
function holderAlive(lockContent: string): boolean {
  const match = /^(\d+) (\S+) [0-9a-f]+\n$/.exec(lockContent);
  if (!match || match[2] !== os.hostname()) return true;
  const pid = Number(match[1]);
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errno(error) !== 'ESRCH';
  }
}
