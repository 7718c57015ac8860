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
  'test/real-cli/acp-opencode.test.ts': 129.7,
  'test/real-cli/acp-qwen.test.ts': 102.7,
  'test/integration/cli.test.ts': 73.3,
  'test/real-cli/claude-local-session.test.ts': 61.5,
  'test/real-cli/ase-serve-attach-tmux.test.ts': 60.4,
  'test/model-based/session.model.test.ts': 52.0,
  'test/integration/consumer.test.ts': 42.0,
  'test/integration/engine-template.test.ts': 41.5,
  'test/real-cli/claude-engine.test.ts': 38.1,
  'test/real-cli/ase-serve-codex-tmux.test.ts': 37.2,
  'test/real-cli/host-tools-acp.test.ts': 35.2,
};

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
