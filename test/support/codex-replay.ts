/**
 * Replays a recorded Codex traffic fixture (test/fixtures/codex/*.jsonl) against an engine, with
 * no Codex binary: a fake {@link NdjsonLauncher} delivers the recorded server→client messages and
 * checks that every client→server message the engine writes equals the recorded one, in order.
 * Delivery pauses at each recorded client message until the engine has written it, so the
 * conversation unfolds exactly as recorded (the test drives send/abort/answers meanwhile).
 */
import { isDeepStrictEqual } from 'node:util';
import type { NdjsonLauncher, NdjsonProcess } from '../../src/engines/codex/index.js';
import type { TrafficEntry, TrafficFixture } from './codex-engine-kit.js';

export interface Replay {
  launcher: NdjsonLauncher;
  /** Client messages that differed from the recording (empty when the engine spoke as recorded). */
  readonly mismatches: string[];
  /** The next recorded client message the engine has not written yet. */
  nextExpected(): TrafficEntry | undefined;
  /** True once every recorded message was delivered or matched. */
  finished(): boolean;
  /** Resolves once `finished()`; rejects after `timeoutMs`. */
  whenFinished(timeoutMs?: number): Promise<void>;
}

export function replay(fixture: TrafficFixture): Replay {
  const entries = fixture.entries;
  const mismatches: string[] = [];
  let index = 0;
  let deliver: ((value: unknown) => void) | undefined;
  let resolveExit!: () => void;
  const exitSignal = new Promise<void>((r) => (resolveExit = r));
  const waiters = new Set<() => void>();
  const wake = (): void => {
    for (const w of [...waiters]) w();
  };

  /** Delivers recorded server messages up to the next client message (asynchronously, like a pipe). */
  const pump = (): void => {
    setImmediate(() => {
      while (index < entries.length && entries[index]!.dir === 'in') {
        const entry = entries[index++]!;
        deliver?.(entry.msg);
      }
      wake();
    });
  };

  const launcher: NdjsonLauncher = async (spec) => {
    deliver = (value) => spec.onMessage(value);
    pump();
    const transport: NdjsonProcess = {
      pid: undefined,
      write: async (value) => {
        const expected = entries[index];
        if (!expected || expected.dir !== 'out') {
          mismatches.push(`unexpected client message ${JSON.stringify(value)} (recording expects ${expected ? 'a server message next' : 'nothing more'})`);
          return;
        }
        // Compare as JSON (what goes on the wire): undefined members are not sent.
        const sent = JSON.parse(JSON.stringify(value)) as unknown;
        if (!isDeepStrictEqual(sent, expected.msg)) mismatches.push(`client message #${index}: sent ${JSON.stringify(sent)}, recorded ${JSON.stringify(expected.msg)}`);
        index++;
        pump();
      },
      exited: exitSignal.then(() => ({ code: 0, signal: null })),
      stop: async () => {
        resolveExit();
      },
      stderrTail: () => '',
    };
    return transport;
  };

  const finished = (): boolean => index >= entries.length;
  return {
    launcher,
    mismatches,
    nextExpected: () => entries.slice(index).find((e) => e.dir === 'out'),
    finished,
    whenFinished: (timeoutMs = 10_000) =>
      new Promise<void>((resolve, reject) => {
        const check = (): void => {
          if (!finished()) return;
          cleanup();
          resolve();
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`replay stalled at entry ${index}/${entries.length}: next ${JSON.stringify(entries[index])?.slice(0, 300)}; mismatches: ${mismatches.join(' | ')}`));
        }, timeoutMs);
        const cleanup = (): void => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      }),
  };
}

/** The user text of a recorded turn-starting client message (`turn/start` or MCP `tools/call`), if it is one. */
export function turnTextOf(entry: TrafficEntry | undefined): string | undefined {
  const msg = entry?.msg as { method?: string; params?: { input?: { text?: string }[]; arguments?: { prompt?: string } } } | undefined;
  if (msg?.method === 'turn/start') return msg.params?.input?.[0]?.text;
  if (msg?.method === 'tools/call') return msg.params?.arguments?.prompt;
  return undefined;
}
