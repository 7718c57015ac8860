/**
 * The session tree as data (pure: no I/O), so its rules can be checked by property tests and the
 * record survives a host restart as it is. A tree is a root session and the sub-agent sessions
 * spawned under it, each `active`, `suspended` or `completed`, and one **focus**: the session the
 * person (the local terminal or the remote clients) drives. Entering a child moves the focus to it
 * and suspends the session that had it, without stopping or forking it: its resume token is noted
 * and checked when the focus comes back. A completed child's result goes to its parent exactly
 * once (`delivered`).
 */
import { z } from 'zod';
import { AseError } from '../errors.js';

export type TreeNodeState = 'active' | 'suspended' | 'completed';

export interface TreeNode {
  sessionId: string;
  parentId?: string;
  /** The parent's tool call that started this sub-agent, when there is one (AgentEvent `parentCallId`). */
  parentCallId?: string;
  state: TreeNodeState;
  /** Noted when the node was suspended: the agent session it must still be when it resumes. */
  resumeTokenAtSuspend?: string;
  /** A completed child's final result, to be delivered to its parent. */
  result?: string;
  /** The result reached the parent (as a queued message): never delivered again. */
  delivered?: boolean;
}

export interface TreeRecord {
  rootId: string;
  /** The one session of the tree that is interactive now. */
  focus: string;
  nodes: Record<string, TreeNode>;
}

const TreeNodeSchema = z.object({
  sessionId: z.string().min(1),
  parentId: z.string().min(1).optional(),
  parentCallId: z.string().optional(),
  state: z.enum(['active', 'suspended', 'completed']),
  resumeTokenAtSuspend: z.string().optional(),
  result: z.string().optional(),
  delivered: z.boolean().optional(),
});

/** A tree record as read back from its file: the shape, and the root and focus among its nodes. */
export const TreeRecordSchema: z.ZodType<TreeRecord> = z
  .object({ rootId: z.string().min(1), focus: z.string().min(1), nodes: z.record(z.string(), TreeNodeSchema) })
  .refine((t) => t.rootId in t.nodes && t.focus in t.nodes, 'the root and the focus must be nodes of the tree');

/** A session the tree does not hold: bad input. */
const fail = (message: string, details?: Record<string, unknown>): never => {
  throw new AseError('INVALID_INPUT', `session tree: ${message}`, details ? { details } : {});
};

/** A change the tree's rules forbid in its current state (a remote client gets 409). */
const conflict = (message: string, details: Record<string, unknown>): never => {
  throw new AseError('TREE_CONFLICT', `session tree: ${message}`, { details });
};

export function newTree(rootId: string): TreeRecord {
  return { rootId, focus: rootId, nodes: { [rootId]: { sessionId: rootId, state: 'active' } } };
}

function node(tree: TreeRecord, id: string): TreeNode {
  return tree.nodes[id] ?? fail(`no session "${id}" in the tree of "${tree.rootId}"`, { sessionId: id });
}

/** Adds a child under `parentId` (active, not focused). */
export function addChild(tree: TreeRecord, parentId: string, childId: string, parentCallId?: string): TreeRecord {
  const parent = node(tree, parentId);
  if (parent.state === 'completed') conflict(`"${parentId}" is completed: it spawns no more sub-agents`, { sessionId: parentId, state: parent.state });
  if (tree.nodes[childId]) conflict(`"${childId}" is already in the tree`, { sessionId: childId });
  const child: TreeNode = { sessionId: childId, parentId, state: 'active', ...(parentCallId !== undefined && { parentCallId }) };
  return { ...tree, nodes: { ...tree.nodes, [childId]: child } };
}

/**
 * The focus moves to `childId` (a child of the focused session, not completed); the session that
 * had it is suspended with its resume token noted. Nothing is stopped or forked.
 */
export function enter(tree: TreeRecord, childId: string, focusResumeToken: string | undefined): TreeRecord {
  const child = node(tree, childId);
  if (child.parentId !== tree.focus) conflict(`"${childId}" is not a sub-agent of the focused session "${tree.focus}"`, { sessionId: childId, focus: tree.focus });
  if (child.state === 'completed') conflict(`"${childId}" is completed`, { sessionId: childId, state: child.state });
  const from = node(tree, tree.focus);
  const suspended: TreeNode = { ...from, state: 'suspended', ...(focusResumeToken !== undefined && { resumeTokenAtSuspend: focusResumeToken }) };
  return { ...tree, focus: childId, nodes: { ...tree.nodes, [from.sessionId]: suspended, [childId]: { ...child, state: 'active' } } };
}

/**
 * The focus returns to the parent of the focused session. `parentResumeToken` is the parent's token
 * now: if it was noted at suspend and differs, the parent was forked, which is an error (the
 * focus stays). With `from`, that session must be the focus (a caller that saw an older tree
 * does not exit another session).
 */
export function exit(tree: TreeRecord, parentResumeToken: string | undefined, from?: string): TreeRecord {
  if (from !== undefined && from !== tree.focus) {
    node(tree, from);
    conflict(`"${from}" is not the focused session (the focus is "${tree.focus}")`, { sessionId: from, focus: tree.focus });
  }
  const focused = node(tree, tree.focus);
  if (focused.parentId === undefined) conflict(`"${tree.focus}" is the root: there is nothing to exit to`, { sessionId: tree.focus, focus: tree.focus });
  const parent = node(tree, focused.parentId!);
  const noted = parent.resumeTokenAtSuspend;
  if (noted !== undefined && parentResumeToken !== undefined && noted !== parentResumeToken) {
    throw new AseError('RESUME_FORKED', `session tree: "${parent.sessionId}" came back as agent session ${parentResumeToken}, not ${noted}: it was forked`, {
      details: { sessionId: parent.sessionId, expected: noted, actual: parentResumeToken },
    });
  }
  const { resumeTokenAtSuspend: _noted, ...resumed } = parent;
  return { ...tree, focus: parent.sessionId, nodes: { ...tree.nodes, [parent.sessionId]: { ...resumed, state: 'active' } } };
}

/** A child finished with `result`; it is not focused (exit first). Completing twice keeps the first result. */
export function complete(tree: TreeRecord, childId: string, result: string): TreeRecord {
  const child = node(tree, childId);
  if (child.parentId === undefined) conflict('the root is not a sub-agent: it does not complete into a parent', { sessionId: childId });
  if (tree.focus === childId) conflict(`"${childId}" has the focus: exit() before completing it`, { sessionId: childId, focus: tree.focus });
  // A suspended session is an ancestor of the focus: it completes only once the focus is back.
  if (child.state === 'suspended') conflict(`"${childId}" is suspended under the focus: exit() to it before completing it`, { sessionId: childId, state: child.state });
  if (child.state === 'completed') return tree;
  return { ...tree, nodes: { ...tree.nodes, [childId]: { ...child, state: 'completed', result } } };
}

/** Completed children whose result has not reached their parent yet. */
export function undelivered(tree: TreeRecord): TreeNode[] {
  return Object.values(tree.nodes).filter((n) => n.state === 'completed' && !n.delivered && n.parentId !== undefined);
}

export function markDelivered(tree: TreeRecord, childId: string): TreeRecord {
  const child = node(tree, childId);
  return { ...tree, nodes: { ...tree.nodes, [childId]: { ...child, delivered: true } } };
}

/** The message that carries a child's result to its parent: its `localId` makes a second send a refused duplicate. */
export function resultMessage(child: TreeNode): { localId: string; text: string } {
  const call = child.parentCallId !== undefined ? ` (call ${child.parentCallId})` : '';
  return { localId: `subagent-result-${child.sessionId}`, text: `[sub-agent ${child.sessionId}${call} finished]\n${child.result ?? ''}` };
}
