/**
 * Thin adapters from the kit's plain async checks to a test runner, which the caller passes in: the
 * kit never imports vitest or node:test itself, so using it forces no runner on anyone.
 *
 *   import { describe, it } from 'vitest';          registerWithVitest(suite, { describe, it });
 *   import { describe, it } from 'node:test';       registerWithNodeTest(suite, { describe, it });
 *
 * A check that skips (a hook or capability missing) is reported as skipped by the runner, with its
 * reason; a failure is the check's ConformanceFailure.
 */
import type { CheckOutcome } from './conformance.js';

/** What both the conformance suite and the model-based harness are: named cases that run on their own. */
export interface TestPlan {
  readonly name: string;
  readonly checks: readonly { readonly name: string; readonly title: string; run(): Promise<CheckOutcome> }[];
}

export interface AdapterOptions {
  /** Per case. Default 300 s: a check may start several agent processes on a loaded machine. */
  timeoutMs?: number;
}

/** vitest's `describe` and `it` (or anything of their shape: jest, mocha with a context `skip`). */
export interface VitestFunctions {
  describe(name: string, body: () => void): unknown;
  it(name: string, body: (context: { skip(note?: string): void }) => Promise<void>, timeout?: number): unknown;
}

/** node:test's `describe` and `it`. */
export interface NodeTestFunctions {
  describe(name: string, body: () => void): unknown;
  it(name: string, options: { timeout?: number }, body: (context: { skip(message?: string): void }) => Promise<void>): unknown;
}

const DEFAULT_TIMEOUT_MS = 300_000;

/** One vitest test per check, in a `describe` named after the plan. */
export function registerWithVitest(plan: TestPlan, runner: VitestFunctions, options: AdapterOptions = {}): void {
  runner.describe(plan.name, () => {
    for (const check of plan.checks) {
      runner.it(`${check.name}: ${check.title}`, async (context) => {
        const outcome = await check.run();
        if (outcome.status === 'skipped') context.skip(outcome.reason);
      }, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    }
  });
}

/** One node:test test per check, in a `describe` named after the plan. */
export function registerWithNodeTest(plan: TestPlan, runner: NodeTestFunctions, options: AdapterOptions = {}): void {
  runner.describe(plan.name, () => {
    for (const check of plan.checks) {
      runner.it(`${check.name}: ${check.title}`, { timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS }, async (context) => {
        const outcome = await check.run();
        if (outcome.status === 'skipped') context.skip(outcome.reason);
      });
    }
  });
}
