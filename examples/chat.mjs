// @ts-check A stdin chat: streamed text, y/n on each tool. `node examples/chat.mjs [agent] [engineOptions JSON]`
import { createInterface } from 'node:readline';
import { createSession } from 'agent-session-engine';

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const ask = async (/** @type {string} */ prompt) => (process.stdout.write(prompt), String((await lines.next()).value ?? '').trim());
const [agent = 'claude', options = '{}'] = process.argv.slice(2);
const session = await createSession({ agent, workDir: process.cwd(), engineOptions: JSON.parse(options),
  canUseTool: async (tool, input) => ((await ask(`\nAllow ${tool} ${JSON.stringify(input)}? (y/n) `)) === 'y' ? { behavior: 'allow' } : { behavior: 'deny', message: 'the user said no' }) });
for (let text; (text = await ask('> ')) !== '';) {
  const { events, result } = session.runStreamed(text);
  for await (const e of events) if (e.type === 'text_delta') process.stdout.write(e.text);
  console.log(`\n[${(await result).status}]`);
}
await session.stop(), process.stdin.destroy();
