/**
 * `agent-session-engine/client`: a typed client of `ase serve` for Node and browsers
 * (`connect({ url, token })`). A subpath of its own that loads nothing of the library but the
 * client and `eventsource-parser`: no `node:` module, so a bundler can put it in a web page.
 */
export { connect, type AseClient, type ConnectOptions, type RemoteCreateOptions, type RemoteSendResult, type RemoteSessionInfo } from './client/connect.js';
export type { RemoteEvent, RemoteEventsOptions, RemoteFrameType } from './client/remote-events.js';
export { RemoteError, type ServerErrorCode } from './client/remote-transport.js';
