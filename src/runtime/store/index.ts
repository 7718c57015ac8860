export type { SaveResult, SessionStore } from './session-store.js';
export { MemoryStore } from './memory-store.js';
export { FileStore, type FileStoreOptions } from './file-store.js';
