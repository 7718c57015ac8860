export * from './agent-event.js';
export * from './session-input.js';
export * from './session-state.js';
export * from './runtime-event.js';
