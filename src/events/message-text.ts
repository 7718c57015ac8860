/**
 * What a message says, as one string: its text blocks joined, nothing else (tool calls, images and
 * thinking are not what the agent answered). Every layer that needs "the agent's answer" (a
 * turn's result, a sub-agent's result for its parent, a typed result recognised in the parent's
 * UI) reads it here, so they cannot disagree on what counts as the answer.
 *
 * Lenient on purpose: it also reads a message as a journal hands it back (a payload of unknown
 * shape): blocks that are not text blocks with a string `text`, or no block list at all, add nothing.
 */

/** A message as far as its text goes: an AgentEvent `message`, a TurnMessage, a journaled payload. */
export interface MessageWithText {
  readonly role?: unknown;
  /** Set on a message of a sub-agent the agent runs in its own process (subAgentScope), not the agent's own. */
  readonly parentCallId?: unknown;
  readonly blocks?: readonly { readonly type?: unknown; readonly text?: unknown }[];
}

/** The message's text blocks joined ('' when it has none). */
export function messageText(message: MessageWithText): string {
  if (!Array.isArray(message.blocks)) return '';
  let text = '';
  for (const block of message.blocks) if (block?.type === 'text' && typeof block.text === 'string') text += block.text;
  return text;
}

/** The text of an answer of the session's own agent (a top-level assistant message); '' for any other message. */
export function answerText(message: MessageWithText): string {
  return message.role === 'assistant' && message.parentCallId === undefined ? messageText(message) : '';
}
