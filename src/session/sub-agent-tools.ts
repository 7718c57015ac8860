/**
 * `subAgentTools({ supervisor })`: host tools that let the agent start sub-agent sessions itself,
 * as ordinary host tools a session opts into (`tools: [...subAgentTools({ supervisor })]`):
 * - `spawn_session {agent, prompt, workDir?}` starts a child session under the calling session, in
 *   its session tree (tree-spawn.ts: the same path as the server's `POST /api/sessions {parentId}`),
 *   on any engine the supervisor knows, and sends it the prompt. It answers at once with the child's
 *   id: the parent's turn goes on. When the child's turn ends, the child is completed in the tree
 *   and its answer reaches the parent exactly once, as a queued message (`SessionTree.complete`).
 *   A child a person has entered meanwhile (it holds the tree's focus) is not completed under them.
 * - `session_status {id}` tells where one of the caller's children stands (phase, tree state,
 *   result once completed).
 * The tree, the supervisor's list, `ase sessions` and the page show these children exactly as
 * children a host spawned: they are the same kind of node.
 */
import path from 'node:path';
import { z } from 'zod';
import { defineTool, type HostTool, type HostToolContext } from '../engines/core/host-tools.js';
import { AseError, errorMessage, isAseError } from '../errors.js';
import type { ResultDelivery } from './session-tree.js';
import type { SupervisedSessionOptions, Supervisor } from './supervisor.js';
import { findTreeOf, inSessionTree, spawnIntoTree, withSessionTree } from './tree-spawn.js';

export interface SubAgentToolsOptions {
  supervisor: Supervisor;
  /** Engines the agent may start (default: any the supervisor knows). */
  agents?: readonly string[];
  /**
   * More options for each child (its `engineOptions`, its own `tools`, `config`, ...), by the
   * agent it runs on and the session that asked. Default: none (the supervisor's defaults apply).
   */
  childOptions?: (request: { agent: string; parentId: string; workDir: string }) => Partial<Omit<SupervisedSessionOptions, 'agent' | 'workDir' | 'sessionId' | 'parentId' | 'parentCallId'>>;
  /** How a finished child's answer reaches its parent (default: sent as a queued message; `SessionTree.complete`). */
  deliverResult?: ResultDelivery;
  /** Told when following a child failed after `spawn_session` answered (its result could not be delivered). Default: a process warning. */
  onError?: (error: AseError, childId: string) => void;
}

const SpawnInput = z.object({
  agent: z.string().min(1).describe('The engine of the child session, e.g. "claude", "codex", "fake"'),
  prompt: z.string().min(1).describe("The child's first message: its task"),
  workDir: z.string().min(1).optional().describe("The child's working directory (default: the parent's)"),
});

const StatusInput = z.object({ id: z.string().min(1).describe('The id spawn_session returned') });

/** The `spawn_session` and `session_status` host tools on `supervisor`. */
export function subAgentTools(options: SubAgentToolsOptions): HostTool<never>[] {
  // Read at each use, not here: a host may make these tools before the supervisor that offers them (its `defaults.tools`).
  const place = () => ({ dataDir: options.supervisor.dataDir, store: options.supervisor.store });
  const warn =
    options.onError ?? ((error: AseError, childId: string) => process.emitWarning(`agent-session-engine: sub-agent ${childId}: ${error.code}: ${error.message}`));

  /** When the child's turn ends: completed in its tree, so its answer reaches the parent once. */
  const follow = async (childId: string, prompt: string, localId: string): Promise<void> => {
    const { supervisor } = options;
    const child = supervisor.get(childId);
    if (!child) return;
    const turn = await child.run(prompt, { localId });
    // Stopped (a shutdown, a person stopping it): it did not finish its task; nothing to report.
    if (turn.error?.code === 'SESSION_STOPPED') return;
    const result = turn.status === 'completed' ? turn.text : `[the sub-agent's turn ${turn.status}${turn.error ? `: ${turn.error.message}` : ''}]\n${turn.text}`;
    const tree = await findTreeOf(supervisor, place(), childId);
    if (!tree) return;
    // A person who entered the child (or one of its own children) drives it now: it completes when they are done.
    if (tree.focus === childId || tree.nodes[childId]?.state !== 'active') return;
    await inSessionTree(supervisor, tree.rootId, () => withSessionTree(supervisor, supervisor.dataDir, tree.rootId, (t) => t.complete(childId, result, { ...(options.deliverResult && { deliver: options.deliverResult }) })));
  };

  const spawn = defineTool({
    name: 'spawn_session',
    description:
      'Starts a sub-agent: a new agent session under this one, given `prompt` as its task. Returns its id at once; ' +
      "when the sub-agent finishes, its answer arrives as a new message in this conversation. Use session_status to check on it.",
    inputSchema: SpawnInput,
    handler: async ({ agent, prompt, workDir }, ctx: HostToolContext) => {
      const { supervisor } = options;
      if (options.agents && !options.agents.includes(agent)) {
        return { content: [{ type: 'text', text: `agent "${agent}" is not offered here (offered: ${options.agents.join(', ')})` }], isError: true };
      }
      const parentId = ctx.sessionId;
      const parentDir = (await supervisor.store.load(parentId))?.state.workDir;
      if (parentDir === undefined && workDir === undefined) throw new AseError('INVALID_INPUT', `the calling session "${parentId}" is not stored: give workDir`);
      const dir = workDir !== undefined ? path.resolve(parentDir ?? process.cwd(), workDir) : parentDir!;
      ctx.signal.throwIfAborted();
      const child = await spawnIntoTree(supervisor, place(), {
        ...options.childOptions?.({ agent, parentId, workDir: dir }),
        agent,
        workDir: dir,
        parentId,
        parentCallId: ctx.callId,
      });
      void follow(child.id, prompt, `spawn-${ctx.callId}`).catch((error: unknown) => warn(isAseError(error) ? error : new AseError('ENGINE_ERROR', errorMessage(error), { cause: error }), child.id));
      return JSON.stringify({ sessionId: child.id, agent, workDir: dir, status: 'started' });
    },
  });

  const status = defineTool({
    name: 'session_status',
    description: 'Where a sub-agent this session started stands: its phase, and its result once it finished.',
    inputSchema: StatusInput,
    handler: async ({ id }, ctx: HostToolContext) => {
      const { supervisor } = options;
      const live = supervisor.get(id)?.snapshot();
      const stored = live ? undefined : (await supervisor.store.load(id).catch(() => undefined))?.state;
      const parentId = live?.parentId ?? stored?.parentId;
      // Only the caller's own children: other sessions of this host are not the agent's to read.
      if ((!live && !stored) || parentId !== ctx.sessionId) return { content: [{ type: 'text', text: `no sub-agent "${id}" of this session` }], isError: true };
      const node = (await findTreeOf(supervisor, place(), id))?.nodes[id];
      return JSON.stringify({
        sessionId: id,
        agent: live?.agent ?? stored!.agent,
        phase: live?.phase ?? stored!.phase,
        ...(node && { tree: node.state }),
        ...(node?.result !== undefined && { result: node.result }),
      });
    },
  });

  return [spawn as HostTool<never>, status as HostTool<never>];
}
