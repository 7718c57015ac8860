/**
 * `agent-session-engine/postgres`: a SessionStore and a TranscriptJournal in PostgreSQL, for sessions
 * shared by several hosts (docs/multi-host.md). A subpath of its own: the driver `pg` is an optional
 * peer dependency, installed only by those who use it (`npm install pg`).
 */
export { PostgresStore, type PostgresStoreOptions } from './runtime/postgres/postgres-store.js';
export { PostgresJournal, type PostgresJournalOptions } from './runtime/postgres/postgres-journal.js';
export { PostgresCommandRouter, type PostgresCommandRouterOptions } from './runtime/postgres/command-router.js';
export { PostgresLiveRelay, type PostgresLiveRelayOptions } from './runtime/postgres/live-relay.js';
export type { PostgresConnectionOptions } from './runtime/postgres/pool.js';
export type { SessionCommand, CommandOutcome, SessionCommandRouter } from './runtime/session-commands.js';
export type { SessionLiveRelay, LiveFrame } from './runtime/session-live-relay.js';
export { SCHEMA_VERSION } from './runtime/postgres/schema.js';
