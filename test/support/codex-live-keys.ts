/**
 * Dedupe keys of the LIVE protocol stream of a recorded run (codex 0.153.4 `mcp-server`
 * `codex/event` notifications, codex 0.169.0 `app-server` notifications), built the way a codex
 * engine would key its live events, so tests can check that the rollout tailer produces exactly
 * the same keys (and texts) as the live stream: the precondition for EventDeduper to work.
 */
import type { DedupeKey } from '../../src/engines/codex/rollout/index.js';
import type { TrafficEntry } from './jsonrpc-child.js';

export interface LiveKeys {
  keys: DedupeKey[];
  /** message id → concatenated text (assistant text, thinking or user text) */
  texts: Map<string, string>;
}

function incoming(traffic: TrafficEntry[]): any[] {
  return traffic.filter((t) => t.dir === 'agent->host').map((t) => t.msg);
}

/** MCP: one event family only (item_completed + exec/patch begin/end + task_complete/turn_aborted/error), reference §10.4. */
export function liveKeysFromMcp(traffic: TrafficEntry[]): LiveKeys {
  const keys: DedupeKey[] = [];
  const texts = new Map<string, string>();
  const userCount = new Map<string, number>();
  let threadId = '';
  for (const msg of incoming(traffic)) {
    if (msg.method !== 'codex/event') continue;
    const event = msg.params?.msg ?? {};
    const turnId: string = event.turn_id ?? msg.params?.id ?? '';
    const key = (kind: DedupeKey['kind'], itemId: string) => keys.push({ threadId, turnId, kind, itemId });
    switch (event.type) {
      case 'session_configured':
        threadId = event.thread_id;
        key('session_identified', threadId);
        break;
      case 'item_completed': {
        const item = event.item;
        if (item.type === 'UserMessage') {
          // The legacy rollout has no user-message id: the engine keys live user messages the same synthetic way.
          const n = userCount.get(turnId) ?? 0;
          userCount.set(turnId, n + 1);
          const id = `${turnId}#user${n}`;
          key('message', id);
          texts.set(id, item.content.map((c: any) => c.text).join(''));
        } else if (item.type === 'AgentMessage') {
          key('message', item.id);
          texts.set(item.id, item.content.map((c: any) => c.text).join(''));
        } else if (item.type === 'Reasoning') {
          key('message', item.id);
          texts.set(item.id, item.summary_text.join('\n\n'));
        }
        break;
      }
      case 'exec_command_begin':
      case 'patch_apply_begin':
        key('tool_call', event.call_id);
        break;
      case 'exec_command_end':
      case 'patch_apply_end':
        key('tool_result', event.call_id);
        break;
      case 'error':
        key('error', turnId);
        break;
      case 'task_complete':
      case 'turn_aborted':
        key('turn_complete', turnId);
        break;
    }
  }
  return { keys, texts };
}

/** app-server notifications (v2 items). */
export function liveKeysFromAppServer(traffic: TrafficEntry[]): LiveKeys {
  const keys: DedupeKey[] = [];
  const texts = new Map<string, string>();
  let threadId = '';
  const threadStart = new Set<number>();
  for (const entry of traffic) {
    if (entry.dir === 'host->agent' && entry.msg.method === 'thread/start') threadStart.add(entry.msg.id);
  }
  for (const msg of incoming(traffic)) {
    if (msg.id !== undefined && threadStart.has(msg.id) && msg.result?.thread) {
      threadId = msg.result.thread.id;
      keys.push({ threadId, turnId: '', kind: 'session_identified', itemId: threadId });
      continue;
    }
    const params = msg.params ?? {};
    const turnId: string = params.turnId ?? params.turn?.id ?? '';
    const key = (kind: DedupeKey['kind'], itemId: string) => keys.push({ threadId, turnId, kind, itemId });
    const item = params.item;
    if (msg.method === 'item/started' && (item?.type === 'commandExecution' || item?.type === 'fileChange')) key('tool_call', item.id);
    if (msg.method === 'item/completed') {
      if (item.type === 'commandExecution' || item.type === 'fileChange') key('tool_result', item.id);
      else if (item.type === 'userMessage') {
        key('message', item.id);
        texts.set(item.id, item.content.map((c: any) => c.text).join(''));
      } else if (item.type === 'agentMessage') {
        key('message', item.id);
        texts.set(item.id, item.text);
      } else if (item.type === 'reasoning') {
        key('message', item.id);
        texts.set(item.id, item.summary.join('\n\n'));
      }
    }
    if (msg.method === 'error' && params.willRetry === false) key('error', turnId);
    if (msg.method === 'turn/completed') key('turn_complete', params.turn.id);
  }
  return { keys, texts };
}
