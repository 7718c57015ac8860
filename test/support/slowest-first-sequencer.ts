/**
 * The suite's file order: the slowest files first, so the two workers of a 2-core CI machine end
 * together instead of one running a two-minute file alone at the end.
 *
 * Vitest's own order (BaseSequencer) runs the longest files first only when its results cache
 * (node_modules/.vite/vitest) knows every file's duration; a fresh CI checkout has none, and it
 * then orders by file SIZE, largest first. The slowest files here are tiny (acp-opencode.test.ts,
 * acp-qwen.test.ts: a 30-line call of a shared suite), so on CI they started last, and the run
 * ended with one worker idle for ~2 minutes. Here a file's duration comes from the cache when it
 * has one, else from KNOWN_SECONDS (measured on CI); files with neither follow, largest first.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Seconds per file of the last CI run (the summary reporter's "slowest files" block); only the
 * order matters, so a rough figure is enough. Update from a CI log when the slowest files change.
 */
export const KNOWN_SECONDS: Readonly<Record<string, number>> = {
  // The last CI run's figures, except the four files cut since (marked): their CI figure scaled by
  // the CPU time each took alone before/after the cut (test/support/acp-preset-suite.ts, the model
  // walk, the CLI's lazy command modules). Replace them from the next CI log.
  'test/integration/cli.test.ts': 64, // was 78
  'test/real-cli/claude-local-session.test.ts': 62,
  'test/real-cli/ase-serve-attach-tmux.test.ts': 54,
  'test/real-cli/acp-opencode.test.ts': 50, // was 109
  'test/real-cli/codex-local-session.test.ts': 47,
  'test/real-cli/claude-engine.test.ts': 42,
  'test/real-cli/record-replay.test.ts': 41,
  'test/integration/consumer.test.ts': 39,
  'test/real-cli/host-tools-acp.test.ts': 38,
  'test/real-cli/ase-serve-codex-tmux.test.ts': 37,
  'test/model-based/session.model.test.ts': 36, // was 61
  'test/real-cli/acp-qwen.test.ts': 36, // was 87
  'test/integration/crash-soak.test.ts': 35,
};

// Not listed: test/integration/engine-template.test.ts (41.5 s on CI). It uses the run's one packed
// and installed project that consumer.test.ts makes (consumer-install.ts): started next to it, it
// would hold a worker idle while the other packs; by size it runs late, when the install is ready.

export default class SlowestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    // Vitest's order first (groups, projects, cache, size); then a stable re-sort by known duration.
    const base = await super.sort(files);
    const root = this.ctx.config.root.replace(/\/$/, '');
    const seconds = (spec: TestSpecification): number | undefined => {
      const cached = this.ctx.cache.getTestSpecificationResult(spec);
      // A file that failed last time goes first, as in vitest's own order.
      if (cached?.failed) return Number.POSITIVE_INFINITY;
      if (cached?.duration !== undefined) return cached.duration / 1000;
      const relative = spec.moduleId.startsWith(`${root}/`) ? spec.moduleId.slice(root.length + 1) : spec.moduleId;
      return KNOWN_SECONDS[relative];
    };
    const rank = new Map(base.map((spec, i) => [spec, i]));
    return [...base].sort((a, b) => {
      if (a.project.name !== b.project.name) return rank.get(a)! - rank.get(b)!;
      const sa = seconds(a);
      const sb = seconds(b);
      if (sa !== undefined && sb !== undefined && sa !== sb) return sb - sa;
      if (sa !== undefined && sb === undefined) return -1;
      if (sa === undefined && sb !== undefined) return 1;
      return rank.get(a)! - rank.get(b)!;
    });
  }
}
