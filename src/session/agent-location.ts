/**
 * What locates a session's agent CLI: the session's `bin` and the engine options that pick the
 * executable (`bin`, an ACP `preset`, `command` and its `args`). They are stored with the session,
 * so `open(id)` after a restart runs the same agent instead of whatever `claude` is on PATH then;
 * and they are checked when the session is created, so a missing agent rejects `createSession`
 * with AGENT_NOT_FOUND before anything is stored, not later as a failed turn.
 */
import type { EngineFactory } from '../engines/core/engine.js';
import type { AgentLocator } from '../events/session-state.js';

/** Engine option keys that say which executable runs (JSON values only: they are stored). */
const LOCATING_KEYS = ['bin', 'preset', 'command', 'args'] as const;

/** The stored locator under what this call gives: an explicit `bin` or locating option wins over the stored one. */
export function resolveLocator(
  given: { bin?: string; engineOptions?: Record<string, unknown> },
  stored: AgentLocator | undefined,
): { bin?: string; engineOptions: Record<string, unknown>; locator: AgentLocator | undefined } {
  const engineOptions: Record<string, unknown> = { ...stored?.options, ...given.engineOptions };
  const bin = given.bin ?? stored?.bin;
  const options: Record<string, unknown> = {};
  for (const key of LOCATING_KEYS) {
    const value = engineOptions[key];
    if (typeof value === 'string' || (Array.isArray(value) && value.every((v) => typeof v === 'string'))) options[key] = value;
  }
  const hasOptions = Object.keys(options).length > 0;
  const locator: AgentLocator | undefined = bin !== undefined || hasOptions ? { ...(bin !== undefined && { bin }), ...(hasOptions && { options }) } : undefined;
  return { ...(bin !== undefined && { bin }), engineOptions, locator };
}

/** Rejects (AGENT_NOT_FOUND, naming the four places) when the engine would find no agent CLI. */
export async function assertAgentFound(factory: EngineFactory, launch: { bin?: string; engineOptions: Record<string, unknown> }): Promise<void> {
  await factory.locateAgent?.(launch);
}
