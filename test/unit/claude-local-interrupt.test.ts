/**
 * A desk turn ended by the person in Claude Code's terminal UI (here: the permission dialog
 * declined with Esc) runs no Stop hook: Claude Code only writes its marker line ("[Request
 * interrupted by user for tool use]") to the transcript. The transcript lines below are the ones the
 * real pinned CLI wrote (fixtures/claude/local/declined-dialog.transcript.jsonl). The local engine,
 * driven through its own hook path and transcript tail (no CLI), must end the turn on that line; the
 * SessionActor fed what the engine reported must then hand over at once when the phone takes
 * control, not wait `handoffWaitMs` for a turn that no longer runs (`handoff_waiting`).
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLAUDE_CAPABILITIES } from '../../src/engines/claude/engine.js';
import { ClaudeLocalEngine } from '../../src/engines/claude/local/engine.js';
import { TranscriptTranslator } from '../../src/engines/claude/local/transcript-translate.js';
import type { AgentEvent } from '../../src/events/agent-event.js';
import { realEngineContext } from '../support/engine-context.js';
import { feed, only, settleWrites, start } from '../support/machine.js';

const FIXTURE = join(import.meta.dirname, '../fixtures/claude/local/declined-dialog.transcript.jsonl');
/** The prompt, the assistant's tool use, the tool result "doesn't want to proceed", the marker. */
const [PROMPT, TOOL_USE, REJECTED, MARKER] = readFileSync(FIXTURE, 'utf8').trim().split('\n') as [string, string, string, string];
const SESSION_ID = (JSON.parse(PROMPT) as { sessionId: string }).sessionId;

/** The engine with its hook handler reachable, bound to generation 1 as a start would bind it. */
class DrivenEngine extends ClaudeLocalEngine {
  constructor() {
    super(realEngineContext(), {}, CLAUDE_CAPABILITIES);
    this.events.bind(1);
    this.sessionId = SESSION_ID;
  }
  hook(input: Record<string, unknown>): Promise<void> {
    return this.onHook({ input, settled: false, reply: () => undefined, onHangUp: () => undefined });
  }
  close(): Promise<void> {
    return this.closeTranscript();
  }
}

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

async function until(check: () => boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + 20_000; !check(); await new Promise((r) => setTimeout(r, 10))) {
    if (Date.now() > deadline) throw new Error(`never ${what}`);
  }
}

describe('claude local: a turn interrupted at the desk', () => {
  it('the marker line ends the turn (cancelled, with its usage); it is not a prompt', () => {
    const translator = new TranscriptTranslator();
    const bodies = [PROMPT, TOOL_USE, REJECTED, MARKER].flatMap((line) => translator.translate(JSON.parse(line)));
    expect(bodies.map((b) => (b.type === 'message' ? `message:${b.role}` : b.type))).toEqual(['message:user', 'message:assistant', 'tool_call', 'tool_result', 'turn_complete']);
    expect(bodies.at(-1)).toMatchObject({ type: 'turn_complete', status: 'cancelled', usage: { outputTokens: expect.any(Number) } });
    expect(JSON.stringify(bodies)).not.toContain('Request interrupted');
  });

  it('the engine ends the turn from the transcript, and the phone then takes control at once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ase-claude-local-interrupt-'));
    const transcript = join(dir, `${SESSION_ID}.jsonl`);
    writeFileSync(transcript, '');
    const engine = new DrivenEngine();
    cleanup = async () => {
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    };
    const events: AgentEvent[] = [];
    engine.onEvent((e) => events.push(e));

    // The hooks and transcript lines in the order the real CLI produced them.
    await engine.hook({ hook_event_name: 'SessionStart', session_id: SESSION_ID, transcript_path: transcript, source: 'startup' });
    await engine.hook({ hook_event_name: 'UserPromptSubmit', session_id: SESSION_ID, prompt: 'a risky question from the desk' });
    appendFileSync(transcript, `${PROMPT}\n${TOOL_USE}\n`);
    await until(() => events.some((e) => e.type === 'tool_call'), 'the tool call reported');
    await engine.hook({ hook_event_name: 'PermissionRequest', session_id: SESSION_ID, tool_name: 'Bash', tool_input: { command: 'echo no > no.txt' } });
    appendFileSync(transcript, `${REJECTED}\n${MARKER}\n`);
    await until(() => events.some((e) => e.type === 'turn_complete'), 'the turn ended (no Stop hook comes)');

    expect(events.filter((e) => e.type === 'turn_complete')).toEqual([expect.objectContaining({ status: 'cancelled' })]);
    expect(events.filter((e) => e.type === 'message' && e.role === 'user')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'permission_cancelled')).toHaveLength(1);

    // The SessionActor in local mode, fed exactly what the engine reported, then the phone's tap.
    let [s] = start({ mode: 'local' });
    s = settleWrites(s, 1_000);
    const last = events.at(-1)!.at;
    [s] = feed(s, ...events);
    s = settleWrites(s, last);
    expect(s.value).toEqual({ local: 'active' });
    const [after, fx] = feed(s, { type: 'switch_mode', to: 'remote', at: last + 1_000 });
    expect(only(fx, 'transcript.emit').filter((e) => e.entry.type === 'handoff_waiting')).toEqual([]);
    expect(after.value).toBe('switching');
    expect(only(fx, 'engine.stop')).toEqual([{ type: 'engine.stop', gen: 1 }]);
  });
});
