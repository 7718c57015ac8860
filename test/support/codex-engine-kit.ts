/**
 * Shared helpers for the Codex engine tests (real-binary and replay): a real-time EngineContext,
 * an event log that waits on events instead of sleeping, traffic fixtures (record / load), and a
 * /proc scan for processes that belong to a test root.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AgentEngine } from '../../src/engines/core/engine.js';
import type { AgentEvent } from '../../src/events/agent-event.js';
import type { TrafficTap } from '../../src/engines/transport/traffic.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CODEX_FIXTURE_DIR = join(repoRoot, 'test', 'fixtures', 'codex');

export { realEngineContext } from './engine-context.js';

/** Every event an engine emitted, with waits that resolve on arrival (no sleeps). */
export class EventLog {
  readonly events: AgentEvent[] = [];
  readonly #waiters = new Set<() => void>();
  constructor(engine: Pick<AgentEngine, 'onEvent'>) {
    engine.onEvent((event) => {
      this.events.push(event);
      for (const wake of [...this.#waiters]) wake();
    });
  }

  /** Position to wait from (events before it are ignored by `waitFor(…, mark)`). */
  mark(): number {
    return this.events.length;
  }

  of<T extends AgentEvent['type']>(type: T, from = 0): Extract<AgentEvent, { type: T }>[] {
    return this.events.slice(from).filter((e): e is Extract<AgentEvent, { type: T }> => e.type === type);
  }

  waitFor<T extends AgentEvent['type']>(type: T, from = 0, pred: (e: Extract<AgentEvent, { type: T }>) => boolean = () => true, timeoutMs = 30_000): Promise<Extract<AgentEvent, { type: T }>> {
    return new Promise((resolvePromise, reject) => {
      const check = (): boolean => {
        const hit = this.of(type, from).find(pred);
        if (!hit) return false;
        cleanup();
        resolvePromise(hit);
        return true;
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`timed out waiting for ${type}; saw: ${this.events.map((e) => e.type).join(', ')}`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        this.#waiters.delete(wake);
      };
      const wake = (): void => void check();
      this.#waiters.add(wake);
      check();
    });
  }
}

/**
 * One recorded protocol message, the fixture format (it predates the engines' `onTraffic` tap of
 * raw lines and is kept so the committed fixtures replay unchanged).
 */
export interface TrafficEntry {
  /** ms since the first recorded line (the `initialize` right after the spawn) */
  t: number;
  dir: 'in' | 'out';
  msg: unknown;
}

/**
 * An `onTraffic` tap that appends each JSON line to `into` as a TrafficEntry. Non-JSON lines (log
 * noise on stdout, which the engine skips) are not part of the protocol and not recorded.
 */
export function recordTraffic(into: TrafficEntry[]): TrafficTap {
  let t0: number | undefined;
  return (record) => {
    let msg: unknown;
    try {
      msg = JSON.parse(record.line);
    } catch {
      return;
    }
    const now = performance.now();
    t0 ??= now;
    into.push({ t: Math.round((now - t0) * 10) / 10, dir: record.direction === 'to_agent' ? 'out' : 'in', msg });
  };
}

/** Header line of a traffic fixture. */
export interface FixtureHeader {
  scenario: string;
  engine: 'codex' | 'codex-mcp' | 'codex-exec';
  codexVersion: string;
  /** The work dir the recording used (the engine sends it as `cwd`; replays reuse it). */
  workDir: string;
  resumeToken?: string;
  /** Decisions the test gave to permission prompts, in order. */
  decisions?: unknown[];
  /** When the test called abort(): after the first event of this type. */
  abortAfter?: string;
  recordedAt: string;
}

export interface TrafficFixture {
  header: FixtureHeader;
  entries: TrafficEntry[];
}

export function fixturePath(name: string): string {
  return join(CODEX_FIXTURE_DIR, `${name}.jsonl`);
}

/** Writes the fixture when UPDATE_CODEX_FIXTURES=1 or when it does not exist yet. Returns whether it wrote. */
export function saveFixture(name: string, header: FixtureHeader, entries: readonly TrafficEntry[]): boolean {
  const path = fixturePath(name);
  if (process.env['UPDATE_CODEX_FIXTURES'] !== '1' && existsSync(path)) return false;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, [JSON.stringify({ header }), ...entries.map((e) => JSON.stringify(e))].join('\n') + '\n');
  return true;
}

export function loadFixture(name: string): TrafficFixture {
  const [first, ...rest] = readFileSync(fixturePath(name), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as unknown);
  return { header: (first as { header: FixtureHeader }).header, entries: rest as TrafficEntry[] };
}

/** pids (other than ours) whose command line or environment mentions `marker` (a test's temp root). */
export function processesMentioning(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8');
      if (!cmdline.includes(marker) && !environ.includes(marker)) continue;
      if (/\) Z /.test(readFileSync(`/proc/${entry}/stat`, 'utf8'))) continue; // zombie: already dead
      found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}
