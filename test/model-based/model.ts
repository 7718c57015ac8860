/**
 * The model the harness walks: which events each snapshot offers (payloads derived from the
 * snapshot: live and stale generations, known and unknown ids) and the finite projection that
 * keys the state space.
 */
import type { SnapshotFrom } from 'xstate';
import { sessionMachine, type SessionEvent } from '../../src/actors/session.js';

export type Snapshot = SnapshotFrom<typeof sessionMachine>;

const USAGE = { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 };
const cap = (n: number, max: number) => Math.min(n, max);

/** The finite abstraction of a snapshot: never raw generations, timestamps or ids. */
export function project(s: Snapshot): string {
  const c = s.context;
  // A handoff waits only for the turn to end (or its timer, or an exit straight to the next mode):
  // persist flags, activity, thinking, open requests, restarts and errors gate nothing there.
  const waiting = s.value === 'handoff';
  return JSON.stringify({
    v: s.value,
    st: s.status,
    mode: c.mode,
    live: c.liveGen === null ? 'none' : c.stopSentFor === c.liveGen ? 'stopping' : 'up',
    q: cap(c.queue.length, 2),
    open: waiting ? null : cap(Object.keys(c.requests).length, 2),
    // Timers that gate transitions; `thinking` and `persist` come and go with almost every event.
    th: waiting ? null : c.thinking,
    timers: Object.keys(c.timers)
      .filter((id) => id !== 'thinking' && id !== 'persist')
      .map((id) => (id.startsWith('perm:') ? 'perm' : id))
      .sort(),
    p: waiting ? null : [c.persist.inFlight, c.persist.retries],
    r: waiting ? null : c.restartAttempts,
    err: waiting || !c.lastError ? null : c.lastError.retryable,
    unc: c.unconfirmed !== null,
    idle: waiting ? null : c.now - c.lastActivityAt > 0,
  });
}

/** The earliest armed timer, the one a clock would fire next (ties: arming order). */
function nextTimer(s: Snapshot): [string, number] | undefined {
  let best: [string, number] | undefined;
  for (const [id, deadline] of Object.entries(s.context.timers)) if (!best || deadline < best[1]) best = [id, deadline];
  return best;
}

/** Events offered in each snapshot; payloads come from the snapshot (live gen, known ids). */
export function eventsFor(s: Snapshot): SessionEvent[] {
  const c = s.context;
  const at = c.now;
  const events: SessionEvent[] = [];
  const knownIds = [...c.queue.map((q) => q.localId), ...c.deliveredIds, ...(c.turn ? [c.turn.localId] : [])];
  const newest = Math.max(0, ...knownIds.map((id) => Number(id.slice(1))));
  if (c.queue.length < 2) events.push({ type: 'send', text: 'hello', localId: `m${newest + 1}`, at });
  const firstKnown = knownIds[0];
  if (firstKnown) events.push({ type: 'send', text: 'again', localId: firstKnown, at });
  events.push({ type: 'abort', at }, { type: 'switch_mode', to: 'local', at }, { type: 'switch_mode', to: 'remote', at });
  const open = Object.keys(c.requests)[0];
  if (open) {
    events.push({ type: 'decide', requestId: open, decision: 'allow', updatedInput: { command: 'ls -la' }, at });
    events.push({ type: 'decide', requestId: open, decision: 'deny', message: 'no', at });
  }
  events.push({ type: 'decide', requestId: 'unknown-request', decision: 'allow', at });
  const decided = Object.keys(c.completed)[0];
  if (decided) events.push({ type: 'decide', requestId: decided, decision: 'allow', at });
  events.push({ type: 'client_online', at }, { type: 'client_offline', at }, { type: 'stop', at });
  // The completion backstop's verdict on a turn (issue 15): recorded, changes nothing else.
  events.push({ type: 'record_verification', localId: knownIds[0] ?? 'm1', verdict: 'unverified', reason: 'worktree dirty', at });
  // Runtime settings: a choice, and back to the engine options' (null).
  events.push(
    { type: 'set_model', model: c.model === 'model-b' ? 'model-c' : 'model-b', at },
    { type: 'set_model', model: null, at },
    { type: 'set_permission_mode', mode: c.permissionMode === 'plan' ? 'acceptEdits' : 'plan', at },
    { type: 'set_permission_mode', mode: null, at },
  );

  const gen = c.liveGen;
  if (gen !== null) {
    const requestCount = Object.keys(c.requests).length + Object.keys(c.completed).length;
    events.push(
      { type: 'ready', gen, at },
      { type: 'exited', gen, at, code: 1, signal: null, reason: 'crashed' },
      { type: 'exited', gen, at, code: 0, signal: null },
      { type: 'session_identified', gen, at, resumeToken: 'agent-session-1' },
      { type: 'activity', gen, at },
      { type: 'thinking', gen, at, active: true },
      { type: 'thinking', gen, at, active: false },
      { type: 'text_delta', gen, at, messageId: 'a1', text: 'hi' },
      { type: 'message', gen, at, role: 'assistant', id: 'a1', blocks: [{ type: 'text', text: 'hi' }] },
      // A prompt typed in the local terminal (a local turn starts).
      { type: 'message', gen, at, role: 'user', id: 'u1', blocks: [{ type: 'text', text: 'typed at the desk' }] },
      { type: 'tool_call', gen, at, callId: 'c1', toolName: 'Bash', input: { command: 'ls' } },
      { type: 'tool_result', gen, at, callId: 'c1', status: 'completed', output: 'ok', isError: false },
      { type: 'turn_complete', gen, at, status: 'completed', usage: USAGE },
      { type: 'error', gen, at, kind: 'transient', message: 'overloaded', retryable: true },
      { type: 'error', gen, at, kind: 'auth', message: 'bad key', retryable: false },
      { type: 'warning', gen, at, code: 'untested_version', message: 'Claude Code 9.9.9 is not the tested 2.1.330' },
      { type: 'plan', gen, at, entries: [{ content: 'read the tests', status: 'in_progress' }] },
      { type: 'agent_mode', gen, at, modeId: 'plan' },
      { type: 'available_commands', gen, at, commands: [{ name: 'init', description: 'write AGENTS.md' }] },
      { type: 'context_usage', gen, at, usedTokens: 1_200, windowTokens: 200_000 },
      // Output arriving together: the runtime hands it over as one event (src/actors/agent-output.ts).
      {
        type: 'agent_output',
        gen,
        at,
        events: [
          { type: 'thinking', gen, at, active: true },
          { type: 'message', gen, at, role: 'assistant', id: 'a2', blocks: [{ type: 'text', text: 'batched' }] },
          { type: 'tool_call', gen, at, callId: 'c2', toolName: 'Bash', input: { command: 'pwd' } },
        ],
      },
    );
    // Local mode: one dialog at a time is on the terminal (a second one adds states, not transitions).
    if (Object.keys(c.requests).length < (s.value !== null && typeof s.value === 'object' && 'local' in s.value ? 1 : 2)) {
      events.push({ type: 'permission_request', gen, at, requestId: `p${requestCount + 1}`, toolName: 'Bash', input: { command: 'ls' }, callId: 'c1' });
    }
    if (open) events.push({ type: 'permission_cancelled', gen, at, requestId: open, reason: 'withdrawn' });
    // The engine's answer about a message a host crash left maybe-delivered (and one about another id).
    if (c.unconfirmed) {
      for (const received of [true, false, null]) events.push({ type: 'delivery_checked', gen, localId: c.unconfirmed.localId, received, at });
      events.push({ type: 'delivery_checked', gen, localId: 'not-the-unconfirmed-one', received: false, at });
    }
  }
  const timer = nextTimer(s);
  if (timer) events.push({ type: 'timer_fired', id: timer[0], at: timer[1] });
  if (c.persist.inFlight) {
    events.push({ type: 'persist_ok', version: c.version + 1, at });
    events.push({ type: 'persist_conflict', version: c.version + 1, at });
    events.push({ type: 'persist_failed', message: 'disk full (simulated)', at });
  }
  return events;
}

