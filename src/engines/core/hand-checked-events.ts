/**
 * The engine's most frequent events after the deltas (`message`, `tool_call`, `tool_result`: every
 * assistant line and tool of a model call) checked by hand against the same rules as their
 * AgentEventSchema members, and built as the schema parse builds them (a fresh object of the
 * schema's own fields, in its order; an optional field given as undefined stays, as zod keeps it;
 * `input`/`output` by reference, as `z.unknown()` returns them). A zod parse of each was the
 * largest share of an engine's own cost on a dense stream (issue 24). A body that fails here
 * returns undefined and goes through the schema, which says what is wrong.
 * test/unit/hand-checked-events.property.test.ts holds these to the schema's verdicts and output.
 */
import type { AgentEvent, AgentEventBody, ContentBlock } from '../../events/agent-event.js';

type Fields = Record<string, unknown>;

const isPlainObject = (v: unknown): v is Fields => typeof v === 'object' && v !== null && !Array.isArray(v);
const MESSAGE_ROLES = new Set(['user', 'assistant', 'system']);
const TOOL_STATUSES = new Set(['completed', 'failed', 'denied', 'cancelled']);

/** `parentCallId` (subAgentScope): absent, undefined, or a non-empty string. */
const scopeIsValid = (body: Fields): boolean => body['parentCallId'] === undefined || (typeof body['parentCallId'] === 'string' && body['parentCallId'] !== '');

/** Copies `key` to `out` when the body has it (also as undefined: zod keeps a present key). */
function copyIfPresent(out: Fields, body: Fields, key: string): void {
  if (key in body) out[key] = body[key];
}

/** A content block as ContentBlockSchema returns it, or undefined when it does not match. */
function contentBlock(block: unknown): ContentBlock | undefined {
  if (!isPlainObject(block)) return undefined;
  switch (block['type']) {
    case 'text':
    case 'thinking':
      return typeof block['text'] === 'string' ? { type: block['type'], text: block['text'] } : undefined;
    case 'tool_use':
      if (typeof block['callId'] !== 'string' || typeof block['name'] !== 'string' || !('input' in block)) return undefined;
      return { type: 'tool_use', callId: block['callId'], name: block['name'], input: block['input'] };
    case 'tool_result': {
      if (typeof block['callId'] !== 'string' || typeof block['isError'] !== 'boolean') return undefined;
      const out: Fields = { type: 'tool_result', callId: block['callId'] };
      copyIfPresent(out, block, 'output');
      out['isError'] = block['isError'];
      return out as ContentBlock;
    }
    default:
      return undefined;
  }
}

/**
 * The event for a `message`, `tool_call` or `tool_result` body stamped with `gen` and `at`
 * (already checked by the caller), or undefined: another type, or a body the schema must judge.
 */
export function handCheckedEvent(body: AgentEventBody, gen: number, at: number): AgentEvent | undefined {
  const fields = body as unknown as Fields;
  if (!scopeIsValid(fields)) return undefined;
  switch (body.type) {
    case 'message': {
      if (!MESSAGE_ROLES.has(fields['role'] as string) || typeof fields['id'] !== 'string' || !Array.isArray(fields['blocks'])) return undefined;
      if (fields['parentId'] !== undefined && typeof fields['parentId'] !== 'string') return undefined;
      const blocks: ContentBlock[] = [];
      for (const block of fields['blocks'] as unknown[]) {
        const checked = contentBlock(block);
        if (!checked) return undefined;
        blocks.push(checked);
      }
      const out: Fields = { type: 'message', gen, at };
      copyIfPresent(out, fields, 'parentCallId');
      out['role'] = fields['role'];
      out['id'] = fields['id'];
      copyIfPresent(out, fields, 'parentId');
      out['blocks'] = blocks;
      return out as AgentEvent;
    }
    case 'tool_call': {
      if (typeof fields['callId'] !== 'string' || typeof fields['toolName'] !== 'string' || !('input' in fields)) return undefined;
      if (fields['title'] !== undefined && typeof fields['title'] !== 'string') return undefined;
      const out: Fields = { type: 'tool_call', gen, at };
      copyIfPresent(out, fields, 'parentCallId');
      out['callId'] = fields['callId'];
      out['toolName'] = fields['toolName'];
      out['input'] = fields['input'];
      copyIfPresent(out, fields, 'title');
      return out as AgentEvent;
    }
    case 'tool_result': {
      if (typeof fields['callId'] !== 'string' || !TOOL_STATUSES.has(fields['status'] as string) || typeof fields['isError'] !== 'boolean') return undefined;
      const out: Fields = { type: 'tool_result', gen, at };
      copyIfPresent(out, fields, 'parentCallId');
      out['callId'] = fields['callId'];
      out['status'] = fields['status'];
      copyIfPresent(out, fields, 'output');
      out['isError'] = fields['isError'];
      return out as AgentEvent;
    }
    default:
      return undefined;
  }
}
