/**
 * The per-test bench of the real-Claude tests that drive supervisors (claude-spawn-session,
 * claude-session-tree): our Anthropic mock and a temp root, made before each test and torn down
 * after it even when an assertion failed: what the test owns is stopped first, then the mock is
 * closed, no process may be left under the root, and the root is removed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect } from 'vitest';
import { startAnthropicMock, type AnthropicMock } from '../mocks/anthropic-mock.js';
import { processesUnder } from './processes.js';

export interface ClaudeMockBench {
  /** The current test's mock. */
  readonly mock: AnthropicMock;
  /** The current test's temp root. */
  readonly root: string;
}

/** Registers the bench's hooks; `stopOwned` stops what the test started (its supervisor) at teardown. */
export function useClaudeMockBench(prefix: string, stopOwned: () => Promise<void>): ClaudeMockBench {
  let mock: AnthropicMock | undefined;
  let root: string | undefined;
  beforeEach(async () => {
    mock = await startAnthropicMock();
    root = mkdtempSync(join(tmpdir(), prefix));
  });
  afterEach(async () => {
    await stopOwned();
    await mock?.close();
    if (root === undefined) return;
    expect(processesUnder(root)).toEqual([]);
    rmSync(root, { recursive: true, force: true });
  });
  return {
    get mock() {
      if (!mock) throw new Error('claude-mock-bench: the mock exists only inside a test');
      return mock;
    },
    get root() {
      if (root === undefined) throw new Error('claude-mock-bench: the root exists only inside a test');
      return root;
    },
  };
}
