/**
 * messageText / answerText (src/events/message-text.ts): the one reading of "what a message says"
 * that the turn's result, a sub-agent's result and the server's last answer share. Typed events
 * and journaled payloads of any shape alike: only text blocks with string text count.
 */
import { describe, expect, it } from 'vitest';
import { answerText, messageText } from '../../src/events/message-text.js';

describe('messageText', () => {
  it('joins the text blocks in order and skips every other block', () => {
    const blocks = [
      { type: 'text', text: 'The answer ' },
      { type: 'tool_use', id: 't1', name: 'Read', input: {} },
      { type: 'thinking', text: 'not said' },
      { type: 'text', text: 'is 42.' },
    ];
    expect(messageText({ blocks })).toBe('The answer is 42.');
  });

  it('reads a journaled payload of any shape without throwing: no blocks, garbage blocks, non-string text', () => {
    expect(messageText({})).toBe('');
    expect(messageText({ blocks: 'text' as never })).toBe('');
    expect(messageText({ blocks: [null as never, 7 as never, { type: 'text', text: 5 }, { type: 'text' }, { type: 'text', text: 'ok' }] })).toBe('ok');
  });
});

describe('answerText', () => {
  const blocks = [{ type: 'text', text: 'done' }];
  it("is the text of the agent's own assistant messages only", () => {
    expect(answerText({ role: 'assistant', blocks })).toBe('done');
    expect(answerText({ role: 'user', blocks })).toBe('');
    expect(answerText({ role: 'assistant', parentCallId: 'call-1', blocks })).toBe('');
  });
});
