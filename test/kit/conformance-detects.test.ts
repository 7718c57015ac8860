/**
 * The kit fails engines that break the contract (a check that cannot fail proves nothing): our ACP
 * engine against the kit's ACP stand-in, wrapped so that it (a) reports every turn end twice, (b)
 * reports a tool result before its call, (c) leaves a process running after stop. Each wrapper
 * must fail the check that covers it, with the rule it broke; the ordering rules also hold as plain
 * functions.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { acpEngine } from '../../src/acp.js';
import type { AgentEvent } from '../../src/events/agent-event.js';
import type { AgentEngine, AgentEventListener, EngineFactory } from '../../src/engines/core/engine.js';
import { ConformanceFailure, engineConformance, eventOrderingViolations, standInAgent, standInDriver } from '../../src/testing.js';
import { isAseError } from '../../src/errors.js';

const root = mkdtempSync(join(tmpdir(), 'ase-kit-detects-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const { command, args } = standInAgent('acp');

/** The ACP engine with its events rewritten by `rewrite` (and `onStop` run when it is stopped). */
function broken(rewrite: (event: AgentEvent, emit: (e: AgentEvent) => void) => void, onStop?: () => void): EngineFactory {
  const inner = acpEngine();
  return {
    name: 'broken',
    capabilities: inner.capabilities,
    create(context) {
      const engine = inner.create(context);
      const listeners = new Set<AgentEventListener>();
      engine.onEvent((event) => rewrite(event, (e) => listeners.forEach((l) => l(e))));
      const wrapped: AgentEngine = Object.create(engine) as AgentEngine;
      wrapped.onEvent = (listener) => (listeners.add(listener), () => listeners.delete(listener));
      wrapped.start = (spec) => engine.start(spec);
      wrapped.send = (m) => engine.send(m);
      wrapped.abort = () => engine.abort();
      wrapped.answerPermission = (id, d) => engine.answerPermission(id, d);
      wrapped.stop = async () => {
        await engine.stop();
        onStop?.();
      };
      return wrapped;
    },
  };
}

async function failureOf(factory: EngineFactory, check: string): Promise<string> {
  const suite = engineConformance(factory, { workDir: root, engineOptions: { command, args, home: join(root, 'home') }, driver: standInDriver() });
  const found = suite.checks.find((c) => c.name === check)!;
  try {
    await found.run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConformanceFailure);
    // An AseError like every failure of the library: the engine under test misbehaved.
    expect(isAseError(error, 'ENGINE_ERROR') && error.details?.check, String(error)).toBe(check);
    expect((error as Error).message.startsWith(`${check}: `)).toBe(true);
    return (error as Error).message;
  }
  throw new Error(`${check} passed a broken engine`);
}

describe('the conformance checks fail broken engines', () => {
  it('two turn ends for one turn', async () => {
    const message = await failureOf(broken((e, emit) => (emit(e), e.type === 'turn_complete' ? emit(e) : undefined)), 'text_turn');
    expect(message).toMatch(/turn_complete for .* turn/);
  }, 120_000);

  it('a tool result before its call', async () => {
    let held: AgentEvent | undefined;
    const factory = broken((e, emit) => {
      if (e.type === 'tool_call') held = e;
      else emit(e);
      if (e.type === 'tool_result' && held) emit(held);
    });
    expect(await failureOf(factory, 'tool_turn')).toMatch(/tool_result for .* before \(or without\) its tool_call/);
  }, 120_000);

  it('a process left running after stop', async () => {
    const orphans: number[] = [];
    const factory = broken(
      (e, emit) => emit(e),
      () => {
        const child = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
        child.unref();
        orphans.push(child.pid!);
      },
    );
    const suite = engineConformance(factory, { workDir: root, engineOptions: { command, args, home: join(root, 'home') }, driver: standInDriver(), leftovers: () => orphans.filter((pid) => { try { process.kill(pid, 0); return true; } catch { return false; } }) });
    try {
      await expect(suite.checks.find((c) => c.name === 'stop')!.run()).rejects.toThrow(/processes left behind/);
    } finally {
      for (const pid of orphans) process.kill(pid, 'SIGKILL');
    }
  }, 120_000);
});

describe('eventOrderingViolations', () => {
  const at = 1;
  it('names each broken rule', () => {
    const events: AgentEvent[] = [
      { type: 'ready', gen: 1, at },
      { type: 'tool_result', gen: 1, at, callId: 'c1', status: 'completed', isError: false },
      { type: 'tool_call', gen: 2, at, callId: 'c1', toolName: 'x', input: {} },
      { type: 'exited', gen: 1, at, code: 0, signal: null },
      { type: 'turn_complete', gen: 1, at, status: 'completed', usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 } },
    ];
    const problems = eventOrderingViolations(events, { gen: 1, turns: 2 });
    expect(problems.join('\n')).toMatch(/before \(or without\) its tool_call/);
    expect(problems.join('\n')).toMatch(/carries gen 2/);
    expect(problems.join('\n')).toMatch(/after `exited`/);
    expect(problems.join('\n')).toMatch(/1 turn_complete for 2 turn/);
    expect(eventOrderingViolations(events.slice(0, 1), { gen: 1, turns: 0 })).toEqual([]);
  });
});
