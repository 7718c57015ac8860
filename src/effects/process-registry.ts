/**
 * The process registry: every process an engine spawns is recorded in the data dir
 * (`<dataDir>/processes/<host pid>-<host start>-<tag>.json`), so that a host that dies without stopping its agents (SIGKILL,
 * OOM kill, power loss of the host process) leaves enough behind for the next host to find and
 * reap them (process-reaper.ts). Engines never see this: the runtime hands each engine a
 * ProcessObserver (EngineContext.processes), which the transport calls.
 *
 * A record holds the process (pid, start time, process group), the session, the host process
 * (host name, pid, start time, boot id) and the descendants the supervisor collected, and a tag:
 * a random id put into the process's environment (`ASE_PROCESS_TAG`), which every descendant
 * inherits, so even one that left the process group and was never collected (a `setsid` child
 * started just before the host died) is recognised. Records are written durably (temp file, fsync,
 * rename) right after the spawn, not before it: a host killed in the few milliseconds between the
 * two leaves its agent to the parent-death signal alone. Collected descendants are rewritten at
 * most once per {@link DESCENDANTS_WRITE_MS}. A record is removed once the process and everything
 * collected are gone; one left by a host that died is removed by the reaper.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { DescendantInfo, ProcessObserver, ProcessWatch, SpawnedProcessInfo } from '../engines/transport/process-observer.js';
import { writeFileDurable } from './fs-durable.js';
import { currentProcess, type ProcessIdentity } from './store/process-identity.js';

/** The environment variable carrying a record's tag into the process tree. */
export const PROCESS_TAG_VAR = 'ASE_PROCESS_TAG';

/** At most this often a record is rewritten because its collected descendants changed. */
export const DESCENDANTS_WRITE_MS = 1_000;

/** Descendants kept per record (the newest): a build spawning thousands of compilers stays bounded. */
export const MAX_RECORDED_DESCENDANTS = 1_000;

export interface ProcessRecord {
  version: 1;
  tag: string;
  sessionId: string;
  /** The executable as the engine named it. */
  file: string;
  /** The host process that spawned it. */
  host: ProcessIdentity;
  /** Epoch ms. */
  spawnedAt: number;
  pid: number;
  pgid: number;
  /** Field 22 of /proc/<pid>/stat; '' without /proc. */
  startTime: string;
  descendants: DescendantInfo[];
}

export interface ProcessRegistryOptions {
  /** `<dataDir>/processes`. Created on the first record. */
  dir: string;
  /** A record could not be written or removed (the session goes on). Default: a process warning. */
  onError?: (error: unknown) => void;
}

/**
 * `<host pid>-<host start time>-<tag>.json`: the reaper can skip the records of a live host by
 * their name alone, without reading them (a data dir shared by thousands of running sessions).
 */
export function recordFileName(host: ProcessIdentity, tag: string): string {
  return `${host.pid}-${host.startTime || '0'}-${tag}.json`;
}

/** The host a record's file name names, if it has that form. */
export function recordFileHost(name: string): { pid: number; startTime: string } | undefined {
  const match = /^(\d+)-(\d+)-[0-9a-f-]{36}\.json$/.exec(name);
  return match ? { pid: Number(match[1]), startTime: match[2]! } : undefined;
}

/** Records the processes of one host's sessions in one directory. */
export class ProcessRegistry {
  readonly dir: string;
  readonly #onError: (error: unknown) => void;
  readonly #pending = new Set<Promise<void>>();

  constructor(options: ProcessRegistryOptions) {
    this.dir = options.dir;
    this.#onError =
      options.onError ?? ((error) => process.emitWarning(`agent-session-engine: process registry ${this.dir}: ${error instanceof Error ? error.message : String(error)}`));
  }

  /** The observer for one session's engines (EngineContext.processes). */
  observer(sessionId: string): ProcessObserver {
    return { spawning: (file) => this.#watch(sessionId, file) };
  }

  /** Resolves once every write and removal started so far has settled. */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  #track(work: Promise<void>): Promise<void> {
    const tracked = work.catch((error: unknown) => this.#onError(error));
    this.#pending.add(tracked);
    void tracked.finally(() => this.#pending.delete(tracked));
    return tracked;
  }

  #watch(sessionId: string, file: string): ProcessWatch {
    const tag = randomUUID();
    const target = path.join(this.dir, recordFileName(currentProcess(), tag));
    let record: ProcessRecord | undefined;
    let chain: Promise<void> = Promise.resolve();
    let lastWrite = 0;
    let timer: NodeJS.Timeout | undefined;
    let done = false;
    const enqueue = (step: () => Promise<void>): Promise<void> => {
      chain = this.#track(chain.then(step));
      return chain;
    };
    const write = (): void => {
      timer = undefined;
      if (done || !record) return;
      lastWrite = Date.now();
      const text = JSON.stringify(record);
      enqueue(async () => {
        if (done) return; // reaped meanwhile: the removal follows
        await fs.mkdir(this.dir, { recursive: true });
        await writeFileDurable(target, text);
      });
    };
    return {
      env: { [PROCESS_TAG_VAR]: tag },
      spawned: (info: SpawnedProcessInfo) => {
        record = {
          version: 1,
          tag,
          sessionId,
          file,
          host: currentProcess(),
          spawnedAt: Date.now(),
          pid: info.pid,
          pgid: info.pgid,
          startTime: info.startTime ?? '',
          descendants: [],
        };
        write();
      },
      descendants: (list) => {
        if (done || !record) return;
        record.descendants = list.slice(-MAX_RECORDED_DESCENDANTS).map((d) => ({ pid: d.pid, startTime: d.startTime }));
        if (timer) return; // a write is already due
        const wait = lastWrite + DESCENDANTS_WRITE_MS - Date.now();
        if (wait <= 0) write();
        else {
          timer = setTimeout(write, wait);
          timer.unref();
        }
      },
      reaped: () => {
        if (done) return chain;
        done = true;
        if (timer) clearTimeout(timer);
        timer = undefined;
        if (!record) return chain;
        return enqueue(() => fs.rm(target, { force: true }));
      },
    };
  }
}
