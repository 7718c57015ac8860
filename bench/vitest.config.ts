import { defineConfig, type Plugin } from 'vitest/config';

/**
 * Vitest runs its workers with `--conditions development` (from Vite's `development|production`
 * resolve condition), which loads xstate's development build: extra checks, several times slower.
 * Users get the production build from plain Node, so the benchmarks drop that condition.
 */
const productionConditions: Plugin = {
  name: 'bench:production-conditions',
  configResolved(config) {
    for (const conditions of [config.ssr.resolve?.conditions, config.environments['ssr']?.resolve.conditions]) {
      if (!Array.isArray(conditions)) continue;
      for (let i = conditions.length - 1; i >= 0; i--) {
        if (conditions[i] === 'development|production' || conditions[i] === 'development') conditions.splice(i, 1);
      }
    }
  },
};

/**
 * `npm run bench`: the speed and memory benchmarks (never part of `npm test`). Files run one after
 * another in one forked worker each, so two benchmarks never compete for this machine's cores;
 * `--expose-gc` lets the memory benchmarks measure a settled heap. The global setup collects each
 * file's results and writes docs/benchmarks.md when the whole suite has run.
 */
export default defineConfig({
  plugins: [productionConditions],
  test: {
    include: ['bench/**/*.bench.test.ts'],
    globalSetup: ['bench/support/global-setup.ts', 'test/support/postgres-setup.ts'],
    pool: 'forks',
    fileParallelism: false,
    execArgv: ['--expose-gc'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
