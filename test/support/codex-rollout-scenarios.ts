/**
 * The two real-binary scenarios that produce the rollout fixtures under
 * test/fixtures/codex/rollout/ (regenerate: `UPDATE_CODEX_ROLLOUT_FIXTURES=1`, see
 * test/real-cli/codex-rollout.test.ts):
 * - legacy dialect: codex 0.153.4 `mcp-server`, driven by JSON-RPC `tools/call codex` / `codex-reply`;
 * - paginated dialect: codex 0.169.0 `app-server`, driven by `thread/start` / `turn/start`.
 *
 * Same five turns in both, scripted through the Responses mock:
 *  1. "say hello"   → reasoning "pondering" + text
 *  2. "use tools"   → exec_command (exit 0), exec_command (exit ≠ 0), apply_patch (add file), text
 *  3. "stall"       → the model stream stalls; the turn is interrupted (MCP notifications/cancelled,
 *                     app-server turn/interrupt)
 *  4. "after abort" → echo text
 *  5. "fail"        → response.failed "mock exploded"
 * The failing turn is last on purpose: in 0.153.4 `mcp-server`, the `codex-reply` after a failed
 * turn returns at once with that turn's stale `task_complete` (an MCP quirk, not a rollout one),
 * so the interrupted turn must come before it.
 */
import { applyPatchCall, execCommandCall, type OpenAIResponsesMock } from '../mocks/openai-responses-mock.js';
import type { HermeticCodex } from './codex-hermetic.js';
import { JsonRpcChild, type TrafficEntry } from './jsonrpc-child.js';

export const SCENARIO_TEXTS = {
  hello: { legacy: 'Hello legacy', paginated: 'Hello paginated' },
  reasoning: 'pondering',
  okCommand: 'echo hi > out.txt; cat out.txt',
  failingCommand: 'ls /nonexistent-ase-dir',
  patch: '*** Begin Patch\n*** Add File: hello.txt\n+hello from patch\n*** End Patch',
  toolsDone: 'Tools done',
  stallPartial: 'part',
  failMessage: 'mock exploded',
} as const;

export interface ScenarioRun {
  threadId: string;
  rolloutPath: string;
  /** every JSON-RPC message both ways, with ms since spawn */
  traffic: TrafficEntry[];
  stderr: string;
}

export interface ScenarioOptions {
  mock: OpenAIResponsesMock;
  h: HermeticCodex;
  /** called as soon as the rollout path is known (before the file exists) */
  onRolloutPath?: (path: string) => void;
}

function enqueueToolTurn(mock: OpenAIResponsesMock): void {
  mock.enqueue(
    execCommandCall(SCENARIO_TEXTS.okCommand),
    execCommandCall(SCENARIO_TEXTS.failingCommand),
    applyPatchCall(SCENARIO_TEXTS.patch),
    { kind: 'text', text: SCENARIO_TEXTS.toolsDone },
  );
}

/** codex 0.153.4 mcp-server: legacy rollout dialect. */
export async function runLegacyScenario({ mock, h, onRolloutPath }: ScenarioOptions): Promise<ScenarioRun> {
  let rolloutPath: string | undefined;
  const child = new JsonRpcChild(h.bin, ['mcp-server'], {
    env: h.env,
    cwd: h.workDir,
    onMessage: (msg) => {
      const event = msg.method === 'codex/event' ? msg.params?.msg : undefined;
      if (event?.type === 'session_configured' && typeof event.rollout_path === 'string' && rolloutPath === undefined) {
        rolloutPath = event.rollout_path;
        onRolloutPath?.(event.rollout_path);
      }
    },
  });
  try {
    await child.request('initialize', { protocolVersion: '2025-06-18', capabilities: { elicitation: {} }, clientInfo: { name: 'ase-rollout-fixtures', version: '0' } });
    child.notify('notifications/initialized');
    let threadId: string | undefined;
    /**
     * One turn = one tools/call; it ends with the turn's `task_complete` / `turn_aborted` event.
     * The JSON-RPC results are not waited for: after a cancelled call, 0.153.4 routes the next
     * failed turn's isError result to the cancelled request id (and the call after a failed turn
     * gets that turn's stale completion), so results are unreliable turn boundaries.
     */
    const turn = async (prompt: string, onStarted?: (requestId: number) => Promise<void>) => {
      const from = child.messages.length;
      const requestId = threadId
        ? child.send('tools/call', { name: 'codex-reply', arguments: { threadId, prompt } })
        : child.send('tools/call', { name: 'codex', arguments: { prompt, cwd: h.workDir, 'approval-policy': 'never', sandbox: 'workspace-write' } });
      await onStarted?.(requestId);
      const end = await child.waitFor(
        (m) => m.method === 'codex/event' && (m.params?.msg?.type === 'task_complete' || m.params?.msg?.type === 'turn_aborted'),
        `end of turn "${prompt}"`,
        20_000,
        from,
      );
      threadId ??= end.params._meta.threadId as string;
      return end.params.msg;
    };

    mock.enqueue({ kind: 'text', text: SCENARIO_TEXTS.hello.legacy, reasoning: SCENARIO_TEXTS.reasoning });
    await turn('say hello');

    enqueueToolTurn(mock);
    await turn('use tools');

    mock.enqueue({ kind: 'stall', partialText: SCENARIO_TEXTS.stallPartial });
    const before = mock.responsesRequests().length;
    await turn('stall', async (requestId) => {
      await mock.waitForRequests(before + 1);
      // MCP cancel: the call never gets a response; the turn ends with turn_aborted (reference §4.7).
      child.notify('notifications/cancelled', { requestId, reason: 'test interrupt' });
    });

    await turn('after abort');

    mock.enqueue({ kind: 'failed', message: SCENARIO_TEXTS.failMessage });
    const failed = await turn('fail');
    if (!failed.error) throw new Error(`expected the last turn to fail: ${JSON.stringify(failed)}`);
    if (!rolloutPath || !threadId) throw new Error('no session_configured.rollout_path seen');
    return { threadId, rolloutPath, traffic: child.traffic, stderr: child.stderr };
  } finally {
    await child.stop();
  }
}

/** codex 0.169.0 app-server: paginated rollout dialect. */
export async function runPaginatedScenario({ mock, h, onRolloutPath }: ScenarioOptions): Promise<ScenarioRun> {
  const child = new JsonRpcChild(h.bin, ['app-server'], { env: h.env, cwd: h.workDir });
  try {
    await child.request('initialize', { clientInfo: { name: 'ase-rollout-fixtures', title: null, version: '0' }, capabilities: { experimentalApi: false, requestAttestation: false } });
    child.notify('initialized');
    const started = await child.request('thread/start', { cwd: h.workDir, approvalPolicy: 'never', sandbox: 'workspace-write', model: 'gpt-5.5' });
    const threadId = started.thread.id as string;
    const rolloutPath = started.thread.path as string;
    onRolloutPath?.(rolloutPath); // the file appears only at the first turn

    const turn = async (text: string) => {
      const from = child.messages.length;
      const result = await child.request('turn/start', { threadId, input: [{ type: 'text', text, text_elements: [] }] });
      const turnId = result.turn.id as string;
      const done = child.waitFor((m) => m.method === 'turn/completed' && m.params?.turn?.id === turnId, `turn/completed ${text}`, 20_000, from);
      return { turnId, done };
    };

    mock.enqueue({ kind: 'text', text: SCENARIO_TEXTS.hello.paginated, reasoning: SCENARIO_TEXTS.reasoning });
    await (await turn('say hello')).done;

    enqueueToolTurn(mock);
    await (await turn('use tools')).done;

    mock.enqueue({ kind: 'stall', partialText: SCENARIO_TEXTS.stallPartial });
    const before = mock.responsesRequests().length;
    const stalled = await turn('stall');
    await mock.waitForRequests(before + 1);
    await child.request('turn/interrupt', { threadId, turnId: stalled.turnId });
    await stalled.done;

    await (await turn('after abort')).done;

    mock.enqueue({ kind: 'failed', message: SCENARIO_TEXTS.failMessage });
    await (await turn('fail')).done;
    return { threadId, rolloutPath, traffic: child.traffic, stderr: child.stderr };
  } finally {
    await child.stop();
  }
}
