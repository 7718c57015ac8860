/**
 * The claude local engine's `ready` with host tools, against a stand-in terminal UI
 * (test/support/claude-tui-stand-in.mjs: our real hook script and loopback server, a scripted MCP
 * client): `ready` waits for the client's `tools/list`; a client that never lists gets `ready` at
 * `hostToolsConnectTimeoutMs` with a `host_tools_not_connected` warning; a UI that exits during the
 * wait gets no `ready` at all (and its timer is cleared); a message sent during the wait is typed
 * after it. Without host tools nothing waits. (The real CLI, typing at `ready`:
 * test/real-cli/host-tools-local.test.ts.)
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claudeEngine } from '../../src/engines/claude/index.js';
import type { AgentEngine } from '../../src/engines/core/engine.js';
import type { AgentEvent } from '../../src/events/agent-event.js';
import { realEngineContext } from '../support/engine-context.js';
import { hostToolKit } from '../support/host-tools-kit.js';

const STAND_IN = fileURLToPath(new URL('../support/claude-tui-stand-in.mjs', import.meta.url));

describe('claude local engine: ready once the host tools are listed', () => {
  let root: string;
  let engine: AgentEngine | undefined;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'ase-tools-ready-'));
  });
  afterEach(async () => {
    await engine?.stop().catch(() => undefined);
    engine = undefined;
    rmSync(root, { recursive: true, force: true });
  });

  /** Starts the engine on the stand-in; the events, stamped with when they came (ms after start). */
  async function start(standIn: Record<string, string>, options: { hostToolsConnectTimeoutMs?: number; tools?: boolean } = {}) {
    const events: { event: AgentEvent; ms: number; at: number }[] = [];
    const { tools = true, ...engineOptions } = options;
    // The engine's timers, to see the wait's own one cleared.
    const timers = new Map<number, { ms: number; cleared: boolean }>();
    const real = realEngineContext({ bin: STAND_IN, ...(tools && { hostTools: hostToolKit().toolbox }) });
    const context = {
      ...real,
      setTimeout: (fn: () => void, ms: number) => {
        const handle = real.setTimeout(fn, ms);
        timers.set(handle.id, { ms, cleared: false });
        return handle;
      },
      clearTimeout: (handle: { readonly id: number }) => {
        const timer = timers.get(handle.id);
        if (timer) timer.cleared = true;
        real.clearTimeout(handle);
      },
    };
    engine = claudeEngine({ env: { HOME: root, ...standIn }, ...engineOptions }).create(context);
    const t0 = performance.now();
    engine.onEvent((event) => events.push({ event, ms: performance.now() - t0, at: Date.now() }));
    await engine.start({ gen: 1, mode: 'local', workDir: root, options: {} });
    const until = async (type: AgentEvent['type'], withinMs = 30_000) => {
      const deadline = Date.now() + withinMs;
      for (;;) {
        const found = events.find((e) => e.event.type === type);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no ${type}; events: ${events.map((e) => e.event.type).join(',')}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    return { events, until, timers, types: () => events.map((e) => e.event.type) };
  }

  it('a client that never lists the tools: ready at the timeout, with the warning just before it', { timeout: 60_000 }, async () => {
    const run = await start({ STANDIN_MCP: 'connect' }, { hostToolsConnectTimeoutMs: 600 });
    const identified = await run.until('session_identified');
    const ready = await run.until('ready');
    expect(ready.ms - identified.ms).toBeGreaterThanOrEqual(590);
    const types = run.types();
    expect(types.indexOf('warning')).toBe(types.indexOf('ready') - 1);
    expect(run.events.find((e) => e.event.type === 'warning')!.event).toMatchObject({
      code: 'host_tools_not_connected',
      message: expect.stringContaining('did not list the host tools within 0.6 s'),
    });
  });

  it('a client that lists the tools: ready then, long before the timeout, no warning', { timeout: 60_000 }, async () => {
    const run = await start({ STANDIN_MCP: 'list' }, { hostToolsConnectTimeoutMs: 20_000 });
    await run.until('ready', 15_000);
    expect(run.types().filter((t) => t === 'warning')).toEqual([]);
  });

  it('a message sent while ready waits is typed when the wait ends, after ready', { timeout: 60_000 }, async () => {
    const keys = join(root, 'keys.jsonl');
    const run = await start({ STANDIN_MCP: 'connect', STANDIN_KEYS: keys }, { hostToolsConnectTimeoutMs: 800 });
    await run.until('session_identified');
    const sent = engine!.send({ localId: 'early', text: 'typed early' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(existsSync(keys)).toBe(false); // nothing typed during the wait
    await sent;
    const readyAt = (await run.until('ready')).at;
    const deadline = Date.now() + 10_000;
    while (!(existsSync(keys) && readFileSync(keys, 'utf8').includes('typed early')) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    const first = JSON.parse(readFileSync(keys, 'utf8').split('\n')[0]!) as { at: number; text: string };
    expect(first.text).toContain('typed early');
    expect(first.at).toBeGreaterThanOrEqual(readyAt);
  });

  it('a UI that exits while ready waits: no ready, no warning, exited; the wait\'s timer is cleared with it', { timeout: 60_000 }, async () => {
    const run = await start({ STANDIN_MCP: 'none', STANDIN_EXIT_MS: '300' }, { hostToolsConnectTimeoutMs: 45_000 });
    await run.until('exited');
    expect(run.types()).not.toContain('ready');
    expect(run.types()).not.toContain('warning');
    const waits = [...run.timers.values()].filter((t) => t.ms === 45_000);
    expect(waits).toEqual([{ ms: 45_000, cleared: true }]);
  });

  it('without host tools nothing waits: ready with session_identified, even from a UI that never connects', { timeout: 60_000 }, async () => {
    const run = await start({ STANDIN_MCP: 'none' }, { hostToolsConnectTimeoutMs: 20_000, tools: false });
    const identified = await run.until('session_identified');
    const ready = await run.until('ready', 5_000);
    expect(run.types().indexOf('ready')).toBe(run.types().indexOf('session_identified') + 1);
    expect(ready.ms - identified.ms).toBeLessThan(1_000);
  });
});
