// @ts-check
/**
 * Host tools: functions of this program the agent calls (`createSession({tools})`, or a
 * supervisor's `create({tools})`), and the built-in sub-agent tools (`subAgentTools`), with which the
 * agent starts a child session itself; the child's answer comes back to it once, as a message.
 *
 * The agent here is the built-in fake engine playing a script (a real agent, e.g. `agent: 'claude'`,
 * decides by itself when to call the tools; nothing else changes). Everything lives in a temporary
 * data dir, removed at the end. Run it with plain Node: `node examples/host-tools.mjs` (in this
 * repository after `npm run build`). `test/unit/examples.test.ts` runs it too.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createSupervisor, defineTool, fakeEngine, findSessionTree, subAgentTools } from 'agent-session-engine';

/** A tool with a JSON Schema; the input is checked against it before the handler runs. */
const lookupTicket = defineTool({
  name: 'lookup_ticket',
  description: 'Looks up a ticket by id and returns its title and state.',
  inputSchema: { type: 'object', properties: { id: { type: 'string', pattern: '^T-[0-9]+$' } }, required: ['id'], additionalProperties: false },
  handler: async ({ id }, ctx) => {
    // ctx.signal aborts when the turn is aborted or the session stops: pass it to your I/O.
    if (ctx.signal.aborted) return { content: [{ type: 'text', text: 'aborted' }], isError: true };
    return { title: `Ticket ${id}: flaky test`, state: 'open' }; // any JSON value: the agent gets its JSON text
  },
});

/** What the scripted parent agent does: look a ticket up, start a sub-agent, then answer. */
const parentScript = {
  turns: [
    [
      { callTool: { name: 'lookup_ticket', input: { id: 'T-42' } } },
      { callTool: { name: 'lookup_ticket', input: { id: 'not a ticket' } } }, // refused before the handler
      { callTool: { name: 'spawn_session', input: { agent: 'fake', prompt: 'fix the flaky test of T-42' } } },
      { text: 'I asked a sub-agent to fix it.' },
    ],
    [{ text: 'The sub-agent is done.' }],
  ],
};

/** @returns {Promise<{ toolResults: unknown[]; tree: import('agent-session-engine').TreeRecord | undefined }>} */
export async function main() {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-host-tools-example-'));
  const supervisor = createSupervisor({ dataDir, engines: [{ ...fakeEngine(parentScript), name: 'scripted' }] });
  try {
    const parent = await supervisor.create({
      agent: 'scripted',
      workDir: process.cwd(),
      sessionId: 'parent',
      // Tools are code: they are not stored. A session opened again later gets them passed again.
      tools: [lookupTicket, ...subAgentTools({ supervisor, agents: ['fake'] })],
    });
    /** @type {unknown[]} */
    const toolResults = [];
    parent.on('agent', ({ event }) => {
      if (event.type === 'tool_call') console.log(`tool_call ${event.toolName} ${JSON.stringify(event.input)}`);
      if (event.type === 'tool_result') {
        toolResults.push(event.output);
        const text = Array.isArray(event.output) ? event.output.map((c) => c.text).join('') : '';
        console.log(`tool_result ${event.status}: ${text}`);
      }
    });
    // The child's answer reaches the parent as one queued message: the parent's second turn.
    let turnsEnded = 0;
    const secondTurn = parent.waitFor('agent', (n) => n.event.type === 'turn_complete' && ++turnsEnded === 2, { timeoutMs: 10_000 });
    const turn = await parent.run('please fix ticket T-42');
    console.log(`parent: ${turn.text}`);
    await secondTurn;
    const last = parent.snapshot().usage.turns;
    console.log(`parent turns: ${last}`);

    // The tree notes the delivery right after the parent stored the message.
    let tree = await findSessionTree({ dataDir, store: supervisor.store, sessionId: 'parent' });
    for (let i = 0; i < 100 && !Object.values(tree?.nodes ?? {}).some((n) => n.delivered); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      tree = await findSessionTree({ dataDir, store: supervisor.store, sessionId: 'parent' });
    }
    for (const node of Object.values(tree?.nodes ?? {})) console.log(`tree: ${node.sessionId}${node.parentId ? ` under ${node.parentId}` : ''}: ${node.state}${node.delivered ? ', delivered' : ''}`);
    return { toolResults, tree };
  } finally {
    await supervisor.shutdown();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
