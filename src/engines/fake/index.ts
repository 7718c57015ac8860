/** The `fake` engine factory: a scripted agent for tests, the model-based harness and demos. */
import { AseError } from '../../errors.js';
import type { EngineFactory } from '../core/engine.js';
import { FAKE_CAPABILITIES, FakeEngine } from './fake-engine.js';
import { FakeScriptSchema, type FakeScript } from './script.js';

export { FAKE_CAPABILITIES, FakeEngine } from './fake-engine.js';
export { echoTurn, FakeScriptSchema, FakeStepSchema, SMALL_USAGE } from './script.js';
export type { FakeAsk, FakeScript, FakeStep, FakeTurn } from './script.js';

/** A factory whose engines all play `script` (default: echo every message). */
export function fakeEngine(script: FakeScript = {}): EngineFactory {
  // Validate once up front so a bad script (often from JSON) fails at setup, not mid-session.
  const parsed = FakeScriptSchema.safeParse(script);
  if (!parsed.success) {
    throw new AseError('INVALID_OPTIONS', `fake engine: invalid script: ${parsed.error.message}`, { cause: parsed.error });
  }
  return {
    name: 'fake',
    capabilities: FAKE_CAPABILITIES,
    create: (context) => new FakeEngine(context, script),
  };
}
