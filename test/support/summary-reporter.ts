/**
 * Prints the slowest test files with their durations, then one plain closing line,
 * `N passed, N failed, N skipped`, after vitest's own summary: CI logs show where the suite's time
 * goes, and CI tools that read a run's last line (not vitest's format) count the tests.
 */
import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/** How many of the slowest files the closing block lists. */
const SLOWEST_FILES_SHOWN = 15;

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failed += 1;
        else skipped += 1;
      }
      // A file that failed to load has no tests but is a failure.
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0) failed += 1;
    }
    failed += unhandledErrors.length;
    const closingLine = `${passed} passed, ${failed} failed, ${skipped} skipped`;
    process.stdout.write(`\n${slowestFilesBlock(testModules)}\n${closingLine}\n`);
  }
}

/** The slowest files, slowest first: the time their tests and hooks took plus their import time. */
function slowestFilesBlock(testModules: ReadonlyArray<TestModule>): string {
  const timed = testModules
    .map((module) => {
      const diagnostic = module.diagnostic();
      return {
        file: relative(process.cwd(), module.moduleId),
        seconds: (diagnostic.duration + diagnostic.collectDuration) / 1000,
      };
    })
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, SLOWEST_FILES_SHOWN);
  const lines = timed.map(({ file, seconds }) => `${seconds.toFixed(1).padStart(7)} s  ${file}`);
  return [`Slowest ${timed.length} test files (tests, hooks and import):`, ...lines, ''].join('\n');
}
