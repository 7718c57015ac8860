/**
 * The envelope of one rollout JSONL line (reference codex.md §6.2):
 * `{"timestamp": "<UTC ISO>", "ordinal"?: n, "type": <kind>, "payload": {…}}`.
 * `ordinal` exists only in the paginated dialect. Parsing never throws: anything that is not a
 * JSON object with a string `type` and an object `payload` is reported as malformed.
 */

export type Json = Record<string, unknown>;

export interface RolloutLine {
  /** UTC ISO timestamp of the line, when present */
  timestamp?: string;
  /** paginated dialect only: 0-based, strictly increasing across resumes */
  ordinal?: number;
  /** `session_meta` | `turn_context` | `world_state` | `response_item` | `event_msg` | `token_usage_record` | `compacted` | … */
  type: string;
  payload: Json;
}

export type RolloutLineParse = { ok: true; line: RolloutLine } | { ok: false; reason: string };

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function parseRolloutLine(text: string): RolloutLineParse {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: `not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (!isObject(value)) return { ok: false, reason: 'not a JSON object' };
  if (typeof value.type !== 'string') return { ok: false, reason: 'missing string "type"' };
  if (!isObject(value.payload)) return { ok: false, reason: 'missing object "payload"' };
  return {
    ok: true,
    line: {
      type: value.type,
      payload: value.payload,
      ...(typeof value.timestamp === 'string' ? { timestamp: value.timestamp } : {}),
      ...(typeof value.ordinal === 'number' && Number.isInteger(value.ordinal) ? { ordinal: value.ordinal } : {}),
    },
  };
}

/** `payload[key]` when it is a string. */
export function str(payload: Json | undefined, key: string): string | undefined {
  const value = payload?.[key];
  return typeof value === 'string' ? value : undefined;
}
