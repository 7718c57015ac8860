/**
 * Model-based tests: a breadth-first walk of the SessionActor's reachable (projected) state
 * space with payload events derived from each snapshot; every generated path is then replayed on
 * the real runtime (SessionActor + effect runtime + fake engine + simulated clock + store), with
 * invariants checked after every step. Fails if any transition of the machine is never taken.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createActor, initialTransition } from 'xstate';
import { BATCHED_OUTPUT_TYPES } from '../../src/actors/agent-output.js';
import { sessionMachine, type SessionEvent } from '../../src/actors/session.js';
import { keyOfDefinition, listTransitions } from '../../src/actors/transitions.js';
import type { SessionMachineInput } from '../../src/actors/session-context.js';
import type { ControlMode } from '../../src/events/session-input.js';
import type { VersionedSession } from '../../src/events/session-state.js';
import { flush, MODEL_CONFIG, START_TIME, Sut } from './harness.js';
import { eventsFor, project, type Snapshot } from './model.js';

const allTransitions = listTransitions(sessionMachine);
const taken = new Set<string>();
/** Transitions the pure walk took (the machine stepped by itself, no runtime). */
const walkTaken = new Set<string>();
/**
 * The root handlers of the agent output the runtime always hands over in one `agent_output` batch
 * (SessionRuntime#flushOutput), even a lone event: the runtime never takes them. They serve callers
 * that step the machine themselves; the walk takes them, and test/unit/agent-output-machine.property.test.ts
 * holds each to the batch of that one event.
 */
const batchedOnTheRuntime = (t: { source: string; event: string; index: number }) => t.source === 'session' && t.index === 0 && (BATCHED_OUTPUT_TYPES as ReadonlySet<string>).has(t.event);
let pathsRun = 0;
let stepsRun = 0;
const generated: string[] = [];

function inputFor(mode: ControlMode, restored?: VersionedSession): SessionMachineInput {
  return { sessionId: 'model', agent: 'fake', workDir: '/work', mode, now: START_TIME, config: MODEL_CONFIG, ...(restored && { restored }) };
}

/** One event from a snapshot: the snapshot after it and the machine transitions it takes. */
type Edge = { event: SessionEvent; state: Snapshot; taken: readonly string[] };
/** `via`: the edge from `parent` that first reached this state (following `parent` back gives a shortest route to it). */
type AdjacencyNode = { state: Snapshot; depth: number; transitions: Edge[]; parent?: AdjacencyNode; via?: Edge };

/**
 * The pure step the walk takes for every edge: the machine's own `transition` (what xstate's
 * `transition()` calls) with one inert scope made once, whose inspection records the transitions
 * each microstep takes. xstate's `transition()` builds a throwaway actor, initial snapshot included,
 * on every call (two thirds of its time here), and an actor restored from the snapshot to watch the
 * transitions cost as much again; the walk takes ~90,000 such steps per start. Actions are not
 * executed (the walk reads only the next snapshot and the transitions).
 */
function pureStepper(input: SessionMachineInput): (state: Snapshot, event: SessionEvent) => Edge {
  let taken: string[] = [];
  const inert = createActor(sessionMachine, {
    input,
    inspect: (ev) => {
      if (ev.type === '@xstate.microstep') {
        for (const def of (ev as unknown as { _transitions: Parameters<typeof keyOfDefinition>[0][] })._transitions) {
          const key = keyOfDefinition(def);
          taken.push(key);
          walkTaken.add(key);
        }
      }
    },
  });
  const noop = () => undefined;
  const scope = { self: inert, system: inert.system, id: '', sessionId: '', defer: noop, logger: noop, stopChild: noop, emit: noop, actionExecutor: noop } as unknown as Parameters<typeof sessionMachine.transition>[2];
  return (state, event) => {
    taken = [];
    const next = sessionMachine.transition(state, event, scope) as Snapshot;
    return { event, state: next, taken };
  };
}

/**
 * The reachable abstract state space, breadth first from `initial` (what xstate/graph's adjacency
 * map computes, built once here so that the shortest routes come from the same walk): states are
 * keyed by `project`, the first snapshot reaching a key represents it, and its route is a shortest
 * event sequence to it. `maxDepth` bounds the walk for starts that differ only in their first steps.
 */
function adjacencyOf(initial: Snapshot, maxDepth: number, step: (state: Snapshot, event: SessionEvent) => Edge): Map<string, AdjacencyNode> {
  const nodes = new Map<string, AdjacencyNode>([[project(initial), { state: initial, depth: 0, transitions: [] }]]);
  const queue = [project(initial)];
  while (queue.length > 0) {
    const node = nodes.get(queue.shift()!)!;
    if (node.state.status === 'done' || node.depth >= maxDepth) continue;
    for (const event of eventsFor(node.state)) {
      const edge = step(node.state, event);
      node.transitions.push(edge);
      const key = project(edge.state);
      if (nodes.has(key)) continue;
      nodes.set(key, { state: edge.state, depth: node.depth + 1, transitions: [], parent: node, via: edge });
      queue.push(key);
    }
  }
  return nodes;
}

/**
 * A path as the runner needs it: each event and the snapshot the model predicts after it; `parent`
 * is the path it extends by its last step (absent for a one-step path), `covers` the machine
 * transitions its replay takes (its parent's and its last step's).
 */
type ModelPath = { steps: { event: SessionEvent; state: Snapshot }[]; parent?: ModelPath; covers: ReadonlySet<string> };

/**
 * Shortest paths reach every abstract state; a transition can still be missed when it only
 * differs from another by its guard outcome. For each transition no shortest path takes, add the
 * shortest route to a state where some event takes it, plus that event. Each path's snapshots are
 * the walk's own (computed once per edge from the snapshot before it, as a replay would), and the
 * coverage counted is the transitions those steps took.
 */
function pathsCoveringEveryTransition(input: SessionMachineInput, initial: Snapshot, maxDepth: number): ModelPath[] {
  const adjacency = adjacencyOf(initial, maxDepth, pureStepper(input));
  // Every route is its BFS parent's route plus one event, and a step is deterministic: a path is
  // its parent's path plus one step, ending on the node's own snapshot (the walk computed it from
  // the parent's, as the replay would), and it takes its parent's transitions plus that step's.
  // Built parent first (the map is in BFS order), each step is computed once, by the walk.
  const pathOf = new Map<AdjacencyNode, ModelPath>();
  const paths: ModelPath[] = [];
  for (const node of adjacency.values()) {
    if (node.parent === undefined || node.via === undefined) continue;
    const path = extend(pathOf.get(node.parent), node.via);
    pathOf.set(node, path);
    paths.push(path);
  }
  const covered = new Set<string>();
  for (const path of paths) for (const key of path.covers) covered.add(key);

  const extra: ModelPath[] = [];
  for (const node of adjacency.values()) {
    for (const edge of node.transitions) {
      if (edge.taken.every((k) => covered.has(k))) continue;
      const candidate = extend(pathOf.get(node), edge);
      if ([...candidate.covers].some((k) => !covered.has(k))) {
        candidate.covers.forEach((k) => covered.add(k));
        extra.push(candidate);
      }
    }
  }
  return [...paths, ...extra];
}

/** `parent` (none: the start) plus the step `edge` (taken from the parent's last snapshot). */
function extend(parent: ModelPath | undefined, edge: Edge): ModelPath {
  const covers = new Set([...(parent?.covers ?? []), ...edge.taken]);
  return { steps: [...(parent?.steps ?? []), { event: edge.event, state: edge.state }], covers, ...(parent && { parent }) };
}

/**
 * The paths no other path extends. A path that is the start of a longer one is an exact duplicate
 * of that one's first steps (same start, same events, the same checks after each step, nothing
 * after the last), so only the longest are replayed on the runtime: the same steps are checked
 * and the same transitions taken, minus the repeats (about 60% of the steps, measured).
 */
function longestPaths(paths: readonly ModelPath[]): ModelPath[] {
  const extended = new Set(paths.flatMap((p) => (p.parent ? [p.parent] : [])));
  return paths.filter((p) => !extended.has(p));
}

/** A session persisted by an earlier process: its engine held an open permission request. */
const RESTORED: VersionedSession = {
  version: 3,
  state: {
    schemaVersion: 1,
    sessionId: 'model',
    agent: 'fake',
    workDir: '/work',
    mode: 'remote',
    phase: 'running',
    gen: 4,
    resumeToken: 'agent-session-0',
    queue: [{ localId: 'm7', text: 'queued before the restart', queuedAt: START_TIME - 10 }],
    requests: { 'p-old': { toolName: 'Bash', input: { command: 'rm -rf build' }, gen: 4, createdAt: START_TIME - 20 } },
    completed: {},
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0, turns: 0 },
    deliveredIds: ['m5', 'm6'],
    // The host died mid-turn: m6 was handed to the engine, and nobody knows whether it got there.
    turn: { localId: 'm6', text: 'in flight when the host died', gen: 4, startedAt: START_TIME - 15, eventId: 'old.4-9' },
    updatedAt: START_TIME - 5,
  },
};

/** The host died mid-turn with nothing queued and no request open: only the turn to settle. */
const RESTORED_MID_TURN: VersionedSession = {
  version: 2,
  state: { ...RESTORED.state, phase: 'running', queue: [], requests: {}, updatedAt: START_TIME - 3 },
};

/** A session stored while hibernated (its agent stopped after it sat idle): it comes back without an agent. */
const RESTORED_HIBERNATED: VersionedSession = {
  version: 4,
  state: { ...RESTORED.state, phase: 'hibernated', queue: [], requests: {}, turn: undefined, updatedAt: START_TIME - 2 },
};

const STARTS: { name: string; input: SessionMachineInput; maxSteps: number }[] = [
  { name: 'a new session in remote mode', input: inputFor('remote'), maxSteps: Infinity },
  { name: 'a new session in local mode', input: inputFor('local'), maxSteps: Infinity },
  // Restoring differs only at the start (and the delivery check after the first ready); a short walk is enough.
  { name: 'a restored session in remote mode', input: inputFor('remote', RESTORED), maxSteps: 3 },
  { name: 'a restored session in local mode', input: inputFor('local', RESTORED), maxSteps: 2 },
  { name: 'a session restored mid-turn with nothing queued', input: inputFor('remote', RESTORED_MID_TURN), maxSteps: 3 },
  { name: 'a hibernated session restored', input: inputFor('remote', RESTORED_HIBERNATED), maxSteps: 3 },
];

for (const start of STARTS) {
  describe(`SessionActor paths from ${start.name}`, () => {
    const initial = initialTransition(sessionMachine, start.input)[0] as Snapshot;
    const all = pathsCoveringEveryTransition(start.input, initial, start.maxSteps).filter((p) => p.steps.length <= start.maxSteps);
    const paths = longestPaths(all);
    generated.push(`${start.name}: ${paths.length} of ${all.length} paths (the rest are their prefixes)`);

    it('generates paths', () => {
      expect(paths.length).toBeGreaterThan(10);
    });

    for (const [n, path] of paths.entries()) {
      const { steps } = path;
      it(`#${n} (${steps.length} steps) ${steps.map((s) => s.event.type).join(' → ').slice(0, 180)}`, async () => {
        const sut = new Sut(start.input, taken);
        await flush();
        expect(project(sut.runtime.actor.getSnapshot() as Snapshot)).toBe(project(initial));
        sut.checkInvariants();
        for (const step of steps) {
          await sut.apply(step.event);
          stepsRun += 1;
          // The real runtime must be exactly where the model says the statechart is.
          expect(project(sut.runtime.actor.getSnapshot() as Snapshot)).toBe(project(step.state));
          sut.checkInvariants();
          await sut.assertStaleIgnored();
        }
        pathsRun += 1;
      });
    }
  });
}

describe('transition coverage', () => {
  afterAll(() => {
    const missing = allTransitions.filter((t) => !taken.has(t.key));
    console.log(
      `model-based: ${generated.join(', ')}; ran ${pathsRun} paths, ${stepsRun} steps; transitions taken on the runtime ${allTransitions.length - missing.length}/${allTransitions.length}` +
        (missing.length ? `\n  never taken: ${missing.map((t) => t.key).join(', ')}` : ''),
    );
  });

  it('every transition of the SessionActor is taken by some path', () => {
    const missing = allTransitions.filter((t) => !taken.has(t.key) && !batchedOnTheRuntime(t)).map((t) => `${t.key} (${t.guard ?? 'no guard'})`);
    expect(missing).toEqual([]);
  });

  it('the handlers of output the runtime batches are taken by the walk (and only there)', () => {
    const handlers = allTransitions.filter(batchedOnTheRuntime);
    expect(handlers.map((t) => t.event).sort()).toEqual([...BATCHED_OUTPUT_TYPES].sort());
    expect(handlers.filter((t) => !walkTaken.has(t.key)).map((t) => t.key)).toEqual([]);
    expect(handlers.filter((t) => taken.has(t.key)).map((t) => t.key)).toEqual([]);
  });
});
