/**
 * Vitest global setup: every test process (and what it spawns) finds the pinned agent CLIs
 * through the engines' discovery variables, never a CLI on the machine's PATH (pinned-agents.ts).
 * A variable already set by the person running the suite is kept: that is a deliberate choice.
 */
import { pinnedAgentEnv } from './pinned-agents.js';

export default function setup(): void {
  for (const [name, path] of Object.entries(pinnedAgentEnv())) process.env[name] ??= path;
}
