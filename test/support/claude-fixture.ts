/** Fixture placeholders for Claude engine recordings (see engine-fixture.ts). */
import { projectSlug } from '../../src/engines/claude/translate.js';
import type { FixtureVars } from './engine-fixture.js';

/**
 * The test root, and the CLI's project slug of it (the transcript path holds
 * `projects/<slug of root/work>/`): both differ from run to run.
 */
export function claudeFixtureVars(root: string): FixtureVars {
  return { '<ROOT>': root, '<ROOT_SLUG>': projectSlug(root) };
}
