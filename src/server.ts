/**
 * `agent-session-engine/server`: the remote-control server (`ase serve`) and the inspector's
 * pieces. A subpath of its own, so the root entry does not load the HTTP library.
 */
export { startServer, type ServerOptions, type RunningServer } from './server/serve.js';
export { createServerApp, type ServerApp, type ServerAppOptions } from './server/app.js';
export { createSessionHost, supervisorHost, type SessionHost, type SessionHostOptions, type HostCreateOptions, type HostSessionInfo } from './server/session-host.js';
export { ServerAuth, generateToken, isLoopback, type AuthResult } from './server/auth.js';
export { diagramSvg } from './server/diagram-svg.js';
export { TerminalMirror } from './server/terminal-mirror.js';
export { InspectionEncoder, redact, machineDefinition, type InspectionWire } from './server/inspection.js';
export { openApiDocument } from './server/openapi.js';
export { recoverSessions, LIVE_PHASES, type RecoveryReport, type RecoverSessionsOptions } from './server/recover-sessions.js';
