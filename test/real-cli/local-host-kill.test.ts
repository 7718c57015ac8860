/**
 * A host SIGKILLed while a session runs in LOCAL mode, with the real pinned Codex terminal UI (mock
 * Responses API, loopback only): the host (support/local-host.mjs) typed a prompt, and the model's
 * command (`sleep`) runs as the terminal UI's child. Then the host is killed, so no code of ours
 * runs: the terminal UI dies of its parent-death signal at once, and Codex's command with it
 * (observed on 0.169.0: Codex ends the commands it runs when it dies; a Claude Code stand-in's
 * children outlive it, integration/host-processes.test.ts). The process record stays until the
 * data dir is opened again, which reaps whatever is still alive and clears it; the host's hook
 * directory goes when the next local engine starts. Nothing is left.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSession } from '../../src/index.js';
import { execCommandCall, startOpenAIResponsesMock, type OpenAIResponsesMock } from '../mocks/openai-responses-mock.js';
import { hermeticCodex } from '../support/codex-hermetic.js';
import { CODEX_TUI_SEEN_TOML } from '../support/headless-screen.js';
import { startHostProcess } from '../support/host-process.js';
import { hookDirOf, isAlive, processesUnder, waitUntil } from '../support/processes.js';
import { removeAbandonedHookDirs } from '../../src/engines/transport/hook-dir.js';

const HOST = fileURLToPath(new URL('../support/local-host.mjs', import.meta.url));



describe.runIf(process.platform === 'linux')('a host killed during local mode (real codex terminal UI)', () => {
  let root: string;
  let mock: OpenAIResponsesMock;
  const markers: string[] = [];

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'ase-local-host-'));
    mock = await startOpenAIResponsesMock();
  });
  afterEach(async () => {
    await mock.close();
    rmSync(root, { recursive: true, force: true });
  });
  afterAll(() => {
    // Whatever a failed test left: killed here so the suite's orphan check stays about real leaks.
    for (const marker of markers) for (const pid of processesUnder(marker)) process.kill(pid, 'SIGKILL');
  });

  it('SIGKILL: the terminal UI and its command die at once; opening the data dir again clears the record', async () => {
    const marker = `ase-local-host-${randomUUID()}`;
    markers.push(marker);
    const h = hermeticCodex({ root, baseUrl: mock.providerBaseUrl, extraToml: CODEX_TUI_SEEN_TOML, extraEnv: { ASE_HOST_PROBE: marker } });
    const pidFile = join(root, 'command.pid');
    mock.enqueue(execCommandCall(`echo $$ > ${pidFile}; exec sleep 120`, { yield_time_ms: 30_000 }));
    const dataDir = join(root, 'data');
    const config = { dataDir, workDir: h.workDir, bin: h.bin, env: h.env, model: 'gpt-5.5', prompt: 'start the long command', pidFile };
    const { child, ready: pids, exit } = await startHostProcess<{ terminalUi: number; command: number }>(HOST, config, 45_000);
    expect(pids.terminalUi).toBeGreaterThan(0);
    expect(isAlive(pids.terminalUi) && isAlive(pids.command)).toBe(true);
    expect(readdirSync(join(dataDir, 'processes'))).toHaveLength(1);
    const hookDir = hookDirOf(pids.terminalUi, 'ase-cx-');

    child.kill('SIGKILL');
    await exit;
    // The terminal UI: killed by the kernel (setpriv --pdeathsig KILL), not by any handler of ours.
    expect(await waitUntil(() => !isAlive(pids.terminalUi), 2_000)).toBe(true);
    expect(await waitUntil(() => !isAlive(pids.command), 2_000)).toBe(true);
    expect(processesUnder(marker)).toEqual([]);
    // Nobody could clear the host's process record: the next open does (and would reap a survivor).
    expect(readdirSync(join(dataDir, 'processes'))).toHaveLength(1);
    const session = await createSession({ agent: 'fake', workDir: h.workDir, dataDir });
    expect(readdirSync(join(dataDir, 'processes'))).toEqual([]);
    await session.stop();
    // Its hook directory too: the next local engine's start removes those of hosts that are gone.
    expect(existsSync(hookDir)).toBe(true);
    expect(await removeAbandonedHookDirs('ase-cx-')).toContain(hookDir);
    expect(existsSync(hookDir)).toBe(false);
  }, 90_000);
});
