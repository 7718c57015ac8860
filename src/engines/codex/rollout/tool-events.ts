/**
 * Tool calls and tool results from rollout lines, for both dialects.
 *
 * Calls: `response_item function_call {name, arguments (JSON string), call_id}` and
 * `custom_tool_call {name, input, call_id}` (apply_patch is a freeform tool).
 * Results, in the order Codex writes them for one call:
 * - paginated: `event_msg item_completed` CommandExecution / FileChange (`item.id` = call_id),
 *   then `response_item *_call_output`;
 * - legacy: `event_msg patch_apply_end` (patches only), then `response_item *_call_output`.
 * The translator keeps the first result per call_id; the later `*_call_output` of a call already
 * reported is dropped, and is the only result for tools without an item (e.g. update_plan).
 */
import type { AgentEventOf } from '../../../events/agent-event.js';
import { isObject, str, type Json } from './rollout-line.js';

type ToolCallBody = Omit<AgentEventOf<'tool_call'>, 'gen' | 'at'>;
type ToolResultBody = Omit<AgentEventOf<'tool_result'>, 'gen' | 'at'>;
type ToolStatus = ToolResultBody['status'];

function parseArguments(raw: unknown): unknown {
  if (typeof raw !== 'string') return raw ?? {};
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw; // not JSON: keep what the model sent
  }
}

/**
 * The names Codex's model-facing shell tool has had across versions and front ends. Every codex
 * engine reports such a call as `shell` with `{command: string, cwd?}` (the app-server and MCP
 * engines' shape), so a session switching between local and remote sees one tool, not three.
 */
const SHELL_TOOL_NAMES: ReadonlySet<string> = new Set(['exec_command', 'shell', 'local_shell', 'shell_command', 'container.exec']);

/** The one name and input shape of a Codex shell call; any other tool as it is. */
export function codexToolCall(name: string, input: unknown): { toolName: string; input: unknown } {
  if (!SHELL_TOOL_NAMES.has(name) || !isObject(input)) return { toolName: name, input };
  const line = commandLineOf(input);
  if (line === undefined) return { toolName: name, input };
  const { cmd: _cmd, command: _command, workdir, cwd, ...rest } = input;
  const dir = typeof workdir === 'string' ? workdir : cwd;
  return { toolName: 'shell', input: { command: line, ...(typeof dir === 'string' && { cwd: dir }), ...rest } };
}

/**
 * The command line of a shell call's input, in each shape Codex has written it: `cmd` (a string),
 * `command` as argv (joined with spaces) or as a string. It is both the title of such a call and
 * the `command` of the one `shell` input shape, so the two never disagree.
 */
function commandLineOf(input: Record<string, unknown>): string | undefined {
  const { cmd, command } = input;
  if (typeof cmd === 'string') return cmd;
  if (Array.isArray(command) && command.every((c) => typeof c === 'string')) return command.join(' ');
  return typeof command === 'string' ? command : undefined;
}

/** A human title for the common tools (the command line of exec_command / shell). */
function titleOf(name: string, input: unknown): string | undefined {
  if (!isObject(input)) return undefined;
  return commandLineOf(input) ?? (name === 'apply_patch' ? 'apply_patch' : undefined);
}

/** `response_item` function_call / custom_tool_call → tool_call (undefined for other payloads or without call_id). */
export function toolCallFromResponseItem(payload: Json): ToolCallBody | undefined {
  const callId = str(payload, 'call_id');
  const name = str(payload, 'name');
  if (callId === undefined || name === undefined) return undefined;
  let input: unknown;
  if (payload.type === 'function_call') input = parseArguments(payload.arguments);
  else if (payload.type === 'custom_tool_call') input = payload.input ?? '';
  else return undefined;
  const title = titleOf(name, input);
  const call = codexToolCall(name, input);
  return { type: 'tool_call', callId, toolName: call.toolName, input: call.input, ...(title !== undefined ? { title } : {}) };
}

/** Status of a `*_call_output` text: Codex reports exit codes and rejections only in prose. */
function statusOfOutputText(text: string): ToolStatus {
  if (/\bRejected\(/.test(text) || /rejected by user/i.test(text)) return 'denied';
  if (/^aborted\b/i.test(text)) return 'cancelled';
  const code = /(?:Process exited with code|Exit code:)\s*(-?\d+)/.exec(text);
  if (code && Number(code[1]) !== 0) return 'failed';
  return 'completed';
}

/** `response_item` function_call_output / custom_tool_call_output → tool_result. */
export function toolResultFromOutput(payload: Json): ToolResultBody | undefined {
  const callId = str(payload, 'call_id');
  if (callId === undefined) return undefined;
  const raw = payload.output;
  // Newer Codex may store `{content, success}` or content items instead of a plain string.
  const output = isObject(raw) && 'content' in raw ? raw.content : raw;
  const text = typeof output === 'string' ? output : JSON.stringify(output ?? '');
  let status = statusOfOutputText(text);
  if (isObject(raw) && raw.success === false && status === 'completed') status = 'failed';
  return { type: 'tool_result', callId, status, output, isError: status !== 'completed' };
}

function statusOfItem(status: unknown, exitCode: unknown): ToolStatus {
  if (status === 'declined' || status === 'rejected') return 'denied';
  if (status === 'interrupted' || status === 'cancelled' || status === 'aborted') return 'cancelled';
  if (status === 'failed') return 'failed';
  if (typeof exitCode === 'number' && exitCode !== 0) return 'failed';
  return 'completed';
}

/** paginated `item_completed` CommandExecution / FileChange → tool_result (undefined for other items). */
export function toolResultFromItem(item: Json): ToolResultBody | undefined {
  const callId = str(item, 'id');
  if (callId === undefined) return undefined;
  if (item.type === 'CommandExecution') {
    const status = statusOfItem(item.status, item.exit_code);
    const output = str(item, 'aggregated_output') ?? str(item, 'stdout') ?? '';
    return { type: 'tool_result', callId, status, output, isError: status !== 'completed' };
  }
  if (item.type === 'FileChange') {
    const status = statusOfItem(item.status, undefined);
    const output = str(item, 'stdout') || str(item, 'stderr') || '';
    return { type: 'tool_result', callId, status, output, isError: status !== 'completed' };
  }
  return undefined;
}

/** legacy `event_msg patch_apply_end {call_id, success, stdout, stderr, status}` → tool_result. */
export function toolResultFromPatchApplyEnd(payload: Json): ToolResultBody | undefined {
  const callId = str(payload, 'call_id');
  if (callId === undefined) return undefined;
  const status = payload.success === true ? 'completed' : statusOfItem(payload.status === 'completed' ? 'failed' : payload.status, undefined);
  const output = str(payload, 'stdout') || str(payload, 'stderr') || '';
  return { type: 'tool_result', callId, status, output, isError: status !== 'completed' };
}
