/**
 * `ase demo`: a scripted session on the fake engine, so a newcomer sees the whole policy work with
 * no agent installed: a permission prompt decided remotely, a hand-over to the terminal and back,
 * a crash with an automatic restart that resumes the agent session, and a clean stop.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createSession, EngineRegistry, FakeEngine, type EngineFactory, type FakeScript, type Session, type SessionNotice } from '../index.js';
import { formatUsd } from './format.js';
import { bold, NoticeRenderer, type Output } from './render.js';

const RESUME_TOKEN = 'demo-agent-session-1';

/** One script per engine generation: what the pretend agent does in each. */
const SCRIPTS: FakeScript[] = [
  {
    startDelayMs: 150,
    resumeToken: RESUME_TOKEN,
    turns: [
      [
        { emit: { type: 'thinking', active: true } },
        { text: "I'll list the files first.", afterMs: 150 },
        {
          ask: { requestId: 'perm-1', toolName: 'Bash', input: { command: 'ls' }, callId: 'call-1' },
          afterMs: 100,
          onAllow: [
            { emit: { type: 'tool_call', callId: 'call-1', toolName: 'Bash', input: { command: 'ls' } } },
            { emit: { type: 'tool_result', callId: 'call-1', status: 'completed', output: 'README.md  src/', isError: false }, afterMs: 100 },
            { text: 'Two entries: README.md and src/.', afterMs: 100 },
            { complete: { usage: { inputTokens: 1200, outputTokens: 80, costUsd: 0.0042 } } },
          ],
        },
      ],
    ],
  },
  { startDelayMs: 150, resumeToken: RESUME_TOKEN },
  {
    startDelayMs: 150,
    resumeToken: RESUME_TOKEN,
    turns: [[{ text: 'Starting on it…', afterMs: 150 }, { crash: { code: 137, reason: 'killed (simulated crash)' }, afterMs: 200 }]],
  },
  {
    startDelayMs: 150,
    resumeToken: RESUME_TOKEN,
    turns: [[{ text: 'Back after a restart, same agent session; picking up the queued message.', afterMs: 150 }, { complete: { usage: { inputTokens: 900, outputTokens: 40, costUsd: 0.003 } } }]],
  },
];

/** Hands each new generation the next script (engines are per generation). */
function scriptedFake(): EngineFactory {
  let generation = 0;
  const base = { name: 'fake', capabilities: FakeEngine.capabilities };
  return { ...base, create: (context) => new FakeEngine(context, SCRIPTS[Math.min(generation++, SCRIPTS.length - 1)]!) };
}

const phase = (session: Session, name: string) => session.waitFor('status', (n) => n.phase === name);

export async function runDemo(output: Output): Promise<number> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'ase-demo-'));
  const say = (text: string) => output.out(`\n${bold(`▶ ${text}`)}\n`);
  try {
    const registry = new EngineRegistry();
    registry.register(scriptedFake());
    const renderer = new NoticeRenderer({ out: output.out, err: output.out });
    const session = await createSession({
      agent: 'fake',
      workDir: process.cwd(),
      mode: 'remote',
      registry,
      dataDir,
      config: { restartBaseMs: 300 },
      onNotice: (n) => renderer.render(n),
    });
    session.on('permission_prompt', (p) => {
      output.out(`${bold('?')} the agent asks to run ${p.toolName} ${JSON.stringify(p.input)}; the remote client approves\n`);
      setTimeout(() => session.decide(p.requestId, 'allow'), 300);
    });

    say('A remote client (say, a phone) sends a message; the engine starts in remote mode.');
    const idle = phase(session, 'idle');
    await session.run('What files are here?');
    await idle;

    say('The person at the terminal takes over: the remote engine stops before the local one starts.');
    const local = phase(session, 'local');
    session.switchMode('local');
    await local;

    say('A message arrives from the phone while local: it is queued and control moves back to remote.');
    const crashed = phase(session, 'recovering');
    session.send('Now fix the typo in README.md.');
    await crashed;

    say('The agent crashed mid-turn. A message sent now is kept; the engine restarts with backoff and resumes the same agent session.');
    await session.run('Did the fix land?');

    say('Stop: the engine exits, anything open ends cancelled, and the state is persisted.');
    const final = await session.stop();
    output.out(
      [
        '',
        bold('Summary'),
        `  generations started: ${final.gen}   resume token: ${final.resumeToken}`,
        `  permissions: ${Object.entries(final.completed).map(([id, c]) => `${id}=${c.status}`).join(', ') || 'none'}`,
        `  usage: ${final.usage.turns} turns, ${final.usage.inputTokens} in / ${final.usage.outputTokens} out tokens, ${formatUsd(final.usage.costUsd)}`,
        `  state file and transcript were written under ${dataDir} (removed now)`,
        '',
      ].join('\n'),
    );
    return 0;
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}
