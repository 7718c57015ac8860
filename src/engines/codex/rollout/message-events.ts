/**
 * User / assistant / reasoning messages from rollout lines.
 *
 * - paginated: `event_msg item_completed` with item `UserMessage {id, content:[{type:"text",text}]}`,
 *   `AgentMessage {id, content:[{type:"Text",text}]}`, `Reasoning {id, summary_text[], raw_content[]}`.
 * - legacy: the user's text only in `event_msg user_message {message}` (no id); the assistant's
 *   and the reasoning's ids only in the `response_item message` (role assistant) / `reasoning`
 *   that follows the `agent_message` / `agent_reasoning` event, so those response items are the
 *   source (the events are ignored: same text, no id).
 * Reasoning becomes an assistant message with one `thinking` block (its own id: it is a separate
 * Responses item).
 */
import type { AgentEventOf, ContentBlock } from '../../../events/agent-event.js';
import { isObject, str, type Json } from './rollout-line.js';

type MessageBody = Omit<AgentEventOf<'message'>, 'gen' | 'at'>;

function texts(content: unknown, types: readonly string[]): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  return content.filter((c): c is Json => isObject(c) && types.includes(String(c.type)) && typeof c.text === 'string').map((c) => c.text as string);
}

function message(role: MessageBody['role'], id: string, blocks: ContentBlock[]): MessageBody {
  return { type: 'message', role, id, blocks };
}

const textBlocks = (parts: string[]): ContentBlock[] => parts.map((text) => ({ type: 'text', text }));

/** paginated UserMessage / AgentMessage / Reasoning items → message (undefined for other items). */
export function messageFromItem(item: Json): MessageBody | undefined {
  const id = str(item, 'id');
  if (id === undefined) return undefined;
  switch (item.type) {
    case 'UserMessage':
      return message('user', id, textBlocks(texts(item.content, ['text', 'input_text'])));
    case 'AgentMessage':
      return message('assistant', id, textBlocks(texts(item.content, ['Text', 'text', 'output_text'])));
    case 'Reasoning': {
      const summary = Array.isArray(item.summary_text) ? item.summary_text.filter((s): s is string => typeof s === 'string') : [];
      const raw = texts(item.raw_content, ['text', 'reasoning_text', 'Text']);
      const text = (summary.length > 0 ? summary : raw).join('\n\n');
      return text === '' ? undefined : message('assistant', id, [{ type: 'thinking', text }]);
    }
    default:
      return undefined;
  }
}

/** legacy `response_item message` (role assistant) → message; user/developer items are injected context or duplicates. */
export function assistantMessageFromResponseItem(payload: Json): MessageBody | undefined {
  const id = str(payload, 'id');
  if (payload.role !== 'assistant' || id === undefined) return undefined;
  return message('assistant', id, textBlocks(texts(payload.content, ['output_text', 'text'])));
}

/** legacy `response_item reasoning {id, summary:[{type:"summary_text",text}]}` → thinking message. */
export function reasoningFromResponseItem(payload: Json): MessageBody | undefined {
  const id = str(payload, 'id');
  if (id === undefined) return undefined;
  const text = texts(payload.summary, ['summary_text']).join('\n\n');
  return text === '' ? undefined : message('assistant', id, [{ type: 'thinking', text }]);
}

/** legacy `event_msg user_message {message}` → message with the caller's synthetic id. */
export function userMessageFromEvent(payload: Json, id: string): MessageBody | undefined {
  const text = str(payload, 'message');
  return text === undefined ? undefined : message('user', id, [{ type: 'text', text }]);
}
