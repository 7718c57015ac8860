/**
 * Codex rollout JSONL tailer: follows `$CODEX_HOME/sessions/…/rollout-*.jsonl` (both the legacy
 * and the paginated dialect) and reports AgentEvent bodies with dedupe keys and resumable
 * cursors. See docs/engines/codex-rollout.md.
 */
export { tailRollout, RolloutTailer, type RolloutTailerOptions, type TailerTimers } from './tailer.js';
export { readRollout, readRolloutBytes, type RolloutSnapshot } from './read-rollout.js';
export { RolloutReader, type RolloutReaderOptions } from './rollout-reader.js';
export { initialCursor, type RolloutCursor, type TailedEvent, type RolloutDiagnostic, type RolloutDiagnosticKind } from './cursor.js';
export { EventDeduper, dedupeKeyString, type DedupeKey, type DedupeKind, type DeduperOptions, type DeduperTimers } from './dedupe.js';
export { dialectOf, type RolloutDialect } from './dialect.js';
export { RolloutTranslator, type TranslatedEvent, type Translation } from './translate.js';
export { TurnUsageAccumulator, turnUsageFromCodex } from '../usage.js';
export { parseRolloutLine, type RolloutLine } from './rollout-line.js';
