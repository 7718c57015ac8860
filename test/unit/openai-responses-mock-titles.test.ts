/**
 * The OpenAI Responses mock answers Codex's title request (its terminal UI asks for a title of the
 * first prompt beside the turn, at times of its own) without taking a scripted reply: a fresh-clone
 * run had the title request arrive first and take the turn's tool call, so the turn got the reply
 * meant for after the tool and never asked for permission (test/real-cli/codex-local.test.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startOpenAIResponsesMock, type OpenAIResponsesMock } from '../mocks/openai-responses-mock.js';

let mock: OpenAIResponsesMock | undefined;
afterEach(async () => {
  await mock?.close();
  mock = undefined;
});

/** One `POST /v1/responses` with `text` as the user's message; returns the streamed body. */
async function ask(text: string): Promise<string> {
  const response = await fetch(`${mock!.providerBaseUrl}/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-5.5', stream: true, input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text }] }] }),
  });
  return response.text();
}

describe('OpenAI Responses mock: Codex title requests', () => {
  it('a title request that comes first takes no scripted reply: the turn gets the first one', async () => {
    mock = await startOpenAIResponsesMock();
    mock.enqueue({ kind: 'text', text: 'FIRST scripted' }, { kind: 'text', text: 'SECOND scripted' });
    const title = await ask('Generate a concise, single-line task title of at most 36 characters for this task: write it here');
    const turn = await ask('write it here');
    expect(title).toContain('A task title');
    expect(title).not.toContain('scripted');
    expect(turn).toContain('FIRST scripted');
    expect(mock.pending()).toBe(1);
    // Recorded like any other request.
    expect(mock.responsesRequests()).toHaveLength(2);
  });
});
