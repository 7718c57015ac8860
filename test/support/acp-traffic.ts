/**
 * The ACP fixture format of recorded wire traffic, and a recorder that builds it from the engine's
 * public traffic tap (`onTraffic`, one TrafficRecord per JSON-RPC message). The format predates
 * that tap and is kept, so the committed fixtures (test/fixtures/acp*, replayed without a binary)
 * need no re-recording: `t` in ms since the run started, `dir`, and the decoded message.
 */
import type { TrafficRecord, TrafficTap } from '../../src/engines/transport/traffic.js';

export type TrafficDirection = 'client->agent' | 'agent->client';

/** One fixture line: a message, or a process lifecycle marker. */
export interface TrafficEntry {
  /** Milliseconds since the run started (the agent's spawn). */
  t: number;
  dir: TrafficDirection;
  msg?: unknown;
  /** The agent process exited (written by the recorder from the engine's `exited` event). */
  exit?: { code: number | null; signal: string | null };
  /** Free-form marker. */
  note?: string;
}

/** A TrafficRecord (the tap sees each message as one JSON line) as a fixture line at time `t`. */
export function toTrafficEntry(record: TrafficRecord, t: number): TrafficEntry {
  return { t, dir: record.direction === 'to_agent' ? 'client->agent' : 'agent->client', msg: JSON.parse(record.line) as unknown };
}

/** Collects the traffic of one engine as fixture lines; `t` counts from the recorder's creation. */
export class TrafficRecorder {
  readonly entries: TrafficEntry[] = [];
  readonly #t0 = performance.now();

  /** Milliseconds since the recorder was created, at µs resolution. */
  elapsed(): number {
    return Math.round((performance.now() - this.#t0) * 1000) / 1000;
  }

  /** Pass as the engine's `onTraffic`. */
  readonly tap: TrafficTap = (record) => {
    this.entries.push(toTrafficEntry(record, this.elapsed()));
  };
}
