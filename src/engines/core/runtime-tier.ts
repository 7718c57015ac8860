/**
 * Runtime tiers: how much of an agent's run an engine can observe and steer, declared per engine in
 * its capability manifest (`EngineCapabilities.tier`) so clients can gate features on it and a
 * turn is only taken as complete on an authoritative signal.
 *
 * - `hooked`: the agent calls back into us (permission callbacks, hooks, a protocol that ends each
 *   turn with a result): Claude Code over stream-json with `can_use_tool`, Codex app-server, ACP.
 * - `driven`: a CLI we wrap whose only signals are its process and a JSON stream it prints
 *   (`codex exec --json`, `claude -p --output-format stream-json`): no callbacks, one process a turn.
 * - `delegated`: an external orchestrator owns the sessions; we only see what it reports.
 */

export const RUNTIME_TIERS = ['hooked', 'driven', 'delegated'] as const;
export type RuntimeTier = (typeof RUNTIME_TIERS)[number];

/**
 * How far a signal can be trusted:
 * - `authoritative`: produced by the runtime or protocol for every occurrence (a `result` message,
 *   process exit, a permission callback the agent blocks on);
 * - `cooperative`: reported only as far as the agent chooses (the model saying "done", edits that
 *   are visible when made through the agent's edit tool but not through a shell);
 * - `absent`: not reported at all.
 */
export const SIGNAL_AUTHORITIES = ['authoritative', 'cooperative', 'absent'] as const;
export type SignalAuthority = (typeof SIGNAL_AUTHORITIES)[number];

/** The signals every engine rates: turn end, tool use, permission prompts, cost (USD), file changes. */
export const TIER_SIGNALS = ['turnEnd', 'toolUse', 'permission', 'cost', 'fileChanges'] as const;
export type TierSignal = (typeof TIER_SIGNALS)[number];

export interface EngineTier {
  tier: RuntimeTier;
  signals: Readonly<Record<TierSignal, SignalAuthority>>;
}

/** What an engine that declares no tier (a third-party engine written before tiers) counts as. */
export const UNDECLARED_TIER: EngineTier = Object.freeze({
  tier: 'delegated',
  signals: Object.freeze({ turnEnd: 'absent', toolUse: 'absent', permission: 'absent', cost: 'absent', fileChanges: 'absent' }),
});

/** Builds a frozen tier declaration (so a shared manifest cannot be changed by a client). */
export function engineTier(tier: RuntimeTier, signals: Record<TierSignal, SignalAuthority>): EngineTier {
  return Object.freeze({ tier, signals: Object.freeze({ ...signals }) });
}

/** The declared tier of an engine's capabilities, or `UNDECLARED_TIER`. */
export function tierOf(capabilities: { tier?: EngineTier }): EngineTier {
  return capabilities.tier ?? UNDECLARED_TIER;
}

/** Whether `signal` is authoritative for this engine: the only kind a turn's completion may rest on. */
export function isAuthoritative(capabilities: { tier?: EngineTier }, signal: TierSignal): boolean {
  return tierOf(capabilities).signals[signal] === 'authoritative';
}
