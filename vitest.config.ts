import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import SlowestFirstSequencer from './test/support/slowest-first-sequencer.js';

export default defineConfig({
  resolve: {
    // The examples import the package by name, as a user's code does; under test that is the source
    // (plain `node examples/*.mjs` resolves it to the build through the package's own exports).
    alias: [
      { find: /^agent-session-engine$/, replacement: fileURLToPath(new URL('./src/index.ts', import.meta.url)) },
      { find: /^agent-session-engine\/server$/, replacement: fileURLToPath(new URL('./src/server.ts', import.meta.url)) },
      { find: /^agent-session-engine\/client$/, replacement: fileURLToPath(new URL('./src/client.ts', import.meta.url)) },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['./test/support/orphan-check.ts', './test/support/pinned-agents-setup.ts', './test/support/postgres-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Vitest's default is one worker fewer than the cores: ONE on a 2-core CI machine, which then
    // mostly waits (on agent CLIs starting, sockets, child processes) with a core idle. Two files at
    // a time there; as many as the default elsewhere. `--maxWorkers=1` restores the serial run.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    reporters: ['default', './test/support/summary-reporter.ts'],
    // Slowest files first (vitest's fallback without its cache, as on CI, is largest file first,
    // which started the two slowest files last): the two workers then end together.
    sequence: { sequencer: SlowestFirstSequencer },
  },
});
