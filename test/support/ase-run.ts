/**
 * `ase run` as a user runs it, for the CLI tests against real agents: the built bin in its own
 * process with a throwaway HOME and nothing of ours in its env (the agent gets only the engine's
 * allow-list plus `--env`), `--json` output parsed as AgentEvents.
 */
import { join } from 'node:path';
import { execa } from 'execa';
import { AgentEventSchema, type AgentEvent } from '../../src/events/agent-event.js';
import { ASE_BIN } from './built-cli.js';
import { findProcesses } from './processes.js';
import { testRunEnv } from './orphan-check.js';
import { pinnedAgentEnv } from './pinned-agents.js';

/**
 * Runs `ase run --json --data-dir <root>/data --env K=V… <args>` in `cwd`; returns the exit code,
 * the session id (the `session <id>` line ase prints first on stderr), the rest of stderr, and the
 * NDJSON events.
 */
export async function aseRun(root: string, cwd: string, args: string[], agentEnv: Record<string, string>) {
  const envArgs = Object.entries(agentEnv).flatMap(([key, value]) => ['--env', `${key}=${value}`]);
  const run = await execa(process.execPath, [ASE_BIN, 'run', '--json', '--data-dir', join(root, 'data'), ...envArgs, ...args], {
    cwd,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: join(root, 'ase-home'), NO_COLOR: '1', ...pinnedAgentEnv(), ...testRunEnv() },
    extendEnv: false,
    stdin: 'ignore',
    reject: false,
    timeout: 60_000,
  });
  const events: AgentEvent[] = run.stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => AgentEventSchema.parse(JSON.parse(line)));
  const idLine = /^session (\S+)\n?/.exec(run.stderr);
  return { exitCode: run.exitCode, sessionId: idLine?.[1], stderr: idLine ? run.stderr.slice(idLine[0].length) : run.stderr, events };
}

/** pids whose environment mentions `marker` (the ase process and the agent it started carry the test's root). */
export function processesMarked(marker: string): number[] {
  return findProcesses((proc) => proc.environ().includes(marker));
}
