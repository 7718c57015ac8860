/**
 * `agent-session-engine/testing`: the engine kit (docs/testing.md). The conformance checks of the
 * AgentEngine contract and the model-based harness of the SessionActor, run over anyone's engine;
 * stand-in agents and the recording replayer for engine tests; thin adapters for vitest and
 * node:test (the kit imports neither).
 *
 * Any export added here becomes public API: list every name explicitly (named exports only, never
 * a star re-export), and document it in docs/api.md.
 */
export {
  engineConformance,
  ConformanceFailure,
  CONFORMANCE_CHECKS,
  BAD_OUTPUT_KINDS,
  type AgentDriver,
  type BadOutputKind,
  type CheckOutcome,
  type ConformanceCheck,
  type ConformanceCheckName,
  type ConformanceOptions,
  type ConformanceReport,
  type ConformanceSuite,
  type DriverPrompt,
} from './testing/conformance.js';
export { modelBasedHarness, DEFAULT_WALK_CONFIG, type ModelHarness, type ModelHarnessOptions, type HarnessReport } from './testing/model-harness.js';
export { effectLogViolations, sessionStateViolations, type SessionStateView } from './testing/invariants.js';
export { EventLog, type EventOfType } from './testing/event-log.js';
export { eventOrderingViolations, type OrderingExpectations } from './testing/event-order.js';
export { registerWithVitest, registerWithNodeTest, type TestPlan, type AdapterOptions, type VitestFunctions, type NodeTestFunctions } from './testing/runner-adapters.js';
export {
  standInAgent,
  standInExecutable,
  standInDriver,
  standInPrompt,
  STAND_IN_PROTOCOLS,
  type StandInDirective,
  type StandInProtocol,
} from './testing/stand-ins.js';
export { replayEngine, type ReplayEngineFactory, type ReplayEngineOptions } from './engines/replay-engine.js';
