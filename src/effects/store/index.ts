export type { AcquireOptions, Lease, LeaseOwner, SaveResult, SessionStore } from './session-store.js';
export { MemoryStore, type MemoryStoreOptions } from './memory-store.js';
export { FileStore, type FileStoreOptions } from './file-store.js';
