/**
 * A tap on an engine's raw protocol traffic: every line written to the agent and every line read
 * from it, as it crossed the pipe. For recording fixtures (replayed in tests that need no binary)
 * and for diagnosing an agent's behaviour in the field. A tap that throws is ignored.
 */
export interface TrafficRecord {
  /** When the line crossed the pipe (epoch ms, from the engine's clock). */
  at: number;
  direction: 'to_agent' | 'from_agent';
  /** The line without its trailing newline; not necessarily valid JSON (agents print junk too). */
  line: string;
}

export type TrafficTap = (record: TrafficRecord) => void;

/** Calls `tap` (if any) and swallows what it throws: a broken recorder must not break a session. */
export function tapTraffic(tap: TrafficTap | undefined, record: TrafficRecord): void {
  if (!tap) return;
  try {
    tap(record);
  } catch {
    // diagnostics only
  }
}
