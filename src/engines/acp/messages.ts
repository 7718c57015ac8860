/**
 * Lenient readers for the ACP messages the engine interprets (reference "acp.md" §2).
 *
 * Why not the SDK's zod schemas: an update variant or field the pinned schema does not know makes
 * the SDK drop the whole notification (it only logs). Agents in the wild send extra fields and
 * newer variants, so the engine reads the few fields it needs itself and keeps everything else
 * as raw data. Every reader returns `undefined` for input it cannot use; none throws.
 */

export type Json = Record<string, unknown>;

export const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** The tool-call fields shared by `tool_call`, `tool_call_update` and a permission's `toolCall`. */
export interface AcpToolCallFields {
  toolCallId: string;
  title?: string;
  kind?: string;
  status?: string;
  /** Replaces the previous content when present (spec: content and locations replace). */
  content?: unknown[];
  locations?: unknown[];
  rawInput?: unknown;
  rawOutput?: unknown;
  /** Some agents name the tool (`name`, or `_meta.claudeCode.toolName`). */
  name?: string;
}

export interface AcpSessionUpdate {
  sessionId: string;
  /** The `sessionUpdate` discriminator, e.g. `agent_message_chunk`. */
  kind: string;
  update: Json;
}

export interface AcpPermissionOption {
  optionId: string;
  name: string;
  /** `allow_once` | `allow_always` | `reject_once` | `reject_always` (or something newer). */
  kind: string;
}

export interface AcpPermissionRequest {
  sessionId: string;
  toolCall: AcpToolCallFields;
  options: AcpPermissionOption[];
}

/** A content block of a chunk: text is what we stream, anything else becomes a placeholder. */
export function contentText(content: unknown): string | undefined {
  if (!isRecord(content)) return undefined;
  if (content['type'] === 'text') return str(content['text']);
  const type = str(content['type']) ?? 'content';
  const uri = str(content['uri']) ?? (isRecord(content['resource']) ? str(content['resource']['uri']) : undefined);
  return `[${type}${uri ? `: ${uri}` : ''}]`;
}

function toolName(fields: Json): string | undefined {
  const meta = isRecord(fields['_meta']) ? fields['_meta'] : undefined;
  const claude = meta && isRecord(meta['claudeCode']) ? meta['claudeCode'] : undefined;
  return str(fields['name']) ?? (claude ? str(claude['toolName']) : undefined);
}

export function readToolCallFields(value: unknown): AcpToolCallFields | undefined {
  if (!isRecord(value)) return undefined;
  const toolCallId = str(value['toolCallId']);
  if (!toolCallId) return undefined;
  const out: AcpToolCallFields = { toolCallId };
  const title = str(value['title']);
  const kind = str(value['kind']);
  const status = str(value['status']);
  const name = toolName(value);
  if (title !== undefined) out.title = title;
  if (kind !== undefined) out.kind = kind;
  if (status !== undefined) out.status = status;
  if (name !== undefined) out.name = name;
  if (Array.isArray(value['content'])) out.content = value['content'];
  if (Array.isArray(value['locations'])) out.locations = value['locations'];
  if ('rawInput' in value && value['rawInput'] !== null) out.rawInput = value['rawInput'];
  if ('rawOutput' in value && value['rawOutput'] !== null) out.rawOutput = value['rawOutput'];
  return out;
}

/** `session/update` params → the update, or undefined when it has no sessionId / discriminator. */
export function readSessionUpdate(params: unknown): AcpSessionUpdate | undefined {
  if (!isRecord(params) || !isRecord(params['update'])) return undefined;
  const sessionId = str(params['sessionId']);
  const kind = str(params['update']['sessionUpdate']);
  if (!sessionId || !kind) return undefined;
  return { sessionId, kind, update: params['update'] };
}

export function readPermissionRequest(params: unknown): AcpPermissionRequest | undefined {
  if (!isRecord(params)) return undefined;
  const sessionId = str(params['sessionId']);
  const toolCall = readToolCallFields(params['toolCall']);
  if (!sessionId || !toolCall || !Array.isArray(params['options'])) return undefined;
  const options: AcpPermissionOption[] = [];
  for (const option of params['options']) {
    if (!isRecord(option)) continue;
    const optionId = str(option['optionId']);
    const kind = str(option['kind']);
    if (optionId === undefined || kind === undefined) continue;
    options.push({ optionId, kind, name: str(option['name']) ?? optionId });
  }
  return { sessionId, toolCall, options };
}

/** A JSON-RPC id as a map key that keeps `1` and `"1"` apart. */
export function rpcKey(id: unknown): string {
  return `${typeof id}:${String(id)}`;
}

export type WireMessage =
  | { kind: 'request'; id: unknown; method: string; params: unknown }
  | { kind: 'notification'; method: string; params: unknown }
  | { kind: 'response'; id: unknown; result?: unknown; error?: { code: number; message: string; data?: unknown } }
  | { kind: 'invalid' };

/** Classifies one decoded JSON-RPC message. */
export function classifyWire(message: unknown): WireMessage {
  if (!isRecord(message)) return { kind: 'invalid' };
  const method = str(message['method']);
  if (method !== undefined) {
    return 'id' in message ? { kind: 'request', id: message['id'], method, params: message['params'] } : { kind: 'notification', method, params: message['params'] };
  }
  if (!('id' in message)) return { kind: 'invalid' };
  if (isRecord(message['error'])) {
    const e = message['error'];
    const code = typeof e['code'] === 'number' ? e['code'] : -32603;
    const error: { code: number; message: string; data?: unknown } = { code, message: str(e['message']) ?? `error ${code}` };
    if ('data' in e) error.data = e['data'];
    return { kind: 'response', id: message['id'], error };
  }
  return { kind: 'response', id: message['id'], result: message['result'] };
}
