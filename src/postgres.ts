/**
 * `agent-session-engine/postgres`: a SessionStore and a TranscriptJournal in PostgreSQL, for sessions
 * shared by several hosts (docs/multi-host.md). A subpath of its own: the driver `pg` is an optional
 * peer dependency, installed only by those who use it (`npm install pg`).
 */
export { PostgresStore, type PostgresStoreOptions } from './effects/postgres/postgres-store.js';
export { PostgresJournal, type PostgresJournalOptions } from './effects/postgres/postgres-journal.js';
export { PostgresCommandRouter, type PostgresCommandRouterOptions } from './effects/postgres/command-router.js';
export { PostgresLiveRelay, type PostgresLiveRelayOptions } from './effects/postgres/live-relay.js';
export type { PostgresConnectionOptions } from './effects/postgres/pool.js';
export type { SessionCommand, CommandOutcome, SessionCommandRouter } from './effects/session-commands.js';
export type { SessionLiveRelay, LiveFrame } from './effects/session-live-relay.js';
export { SCHEMA_VERSION } from './effects/postgres/schema.js';
