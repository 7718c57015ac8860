/**
 * Client-side `fs/read_text_file` and `fs/write_text_file` for ACP agents, confined to the
 * granted roots (see confinement.ts for the path rules and docs/engines/acp-client.md).
 *
 * Reads:
 * - A path inside a root that does not exist answers `{ content: "" }`: gemini-cli reads the target
 *   before every write and cannot create files otherwise (Zed does the same).
 * - The file is opened O_RDONLY|O_NOFOLLOW|O_NONBLOCK (a FIFO opens without blocking), then
 *   fstat'ed: only regular files are read. `line` (1-based start) and `limit` (line count) select
 *   lines; the result may not exceed `maxReadBytes` (a file larger than that can still be read in
 *   slices with `limit`).
 *
 * Writes:
 * - Missing parent directories INSIDE a root are created (one mkdir per component, never through
 *   an existing symlink): agents write new files into new folders and have no mkdir method.
 * - The final component is opened with O_NOFOLLOW, so a symlink put there after the check is
 *   refused (ELOOP) instead of followed. An existing in-root symlink at the leaf was already
 *   resolved by realpath, so its in-root target is written; a leaf symlink pointing outside is
 *   refused by the root check. The file is truncated and rewritten in place (keeps its inode,
 *   mode and owner; not atomic on crash). A file with more than one hard link is refused: its
 *   other names may be outside the roots, and writing the inode would change them too.
 * - Residual risk (documented): another process that can write inside a root can race us by
 *   swapping a directory we just checked or created for a symlink to the outside. The fd re-check
 *   (/proc/self/fd) then refuses the write before any content is written, but the race can leave
 *   an EMPTY new file or directory outside the roots. Node has no openat2(RESOLVE_BENEATH).
 */
import { constants } from 'node:fs';
import { lstat, mkdir, open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { AseError, errorMessage } from '../../errors.js';
import { assertOpenedWithin, confinePath, denied, errnoOf, failed, resolveRoots } from './confinement.js';

export interface ConfinedFsOptions {
  /** The session's working directory; always a root. */
  workDir: string;
  /** Further directories the agent may touch (e.g. ACP `additionalDirectories`). */
  extraRoots?: readonly string[];
  /** Largest content a read may return, in bytes. Default 10 MiB. */
  maxReadBytes?: number;
  /** Largest content a write may store, in bytes (UTF-8). Default 10 MiB. */
  maxWriteBytes?: number;
}

export const DEFAULT_MAX_READ_BYTES = 10 * 1024 * 1024;
export const DEFAULT_MAX_WRITE_BYTES = 10 * 1024 * 1024;

const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
const WRITE_FLAGS = constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
const CHUNK_BYTES = 64 * 1024;

/** Validates the 1-based `line` (null/undefined/0 → 1, as Zed does) and `limit` (null → all). */
export function lineRange(line: unknown, limit: unknown): { first: number; count: number } {
  const first = line === null || line === undefined || line === 0 ? 1 : line;
  if (typeof first !== 'number' || !Number.isSafeInteger(first) || first < 1) throw denied(`line must be a positive integer (1-based): ${String(line)}`, { line });
  const count = limit === null || limit === undefined ? Number.POSITIVE_INFINITY : limit;
  if (typeof count !== 'number' || (count !== Number.POSITIVE_INFINITY && (!Number.isSafeInteger(count) || count < 0))) {
    throw denied(`limit must be a non-negative integer: ${String(limit)}`, { limit });
  }
  return { first, count };
}

/**
 * Collects the bytes of lines `first … first+count-1` (1-based; each with its '\n') from chunks
 * fed in file order. Splitting bytes at 0x0A is safe for UTF-8 (it never occurs inside a
 * multi-byte character). Throws -32602 once the selection exceeds `maxBytes`.
 */
export class LineWindow {
  private line = 1;
  private readonly parts: Buffer[] = [];
  private bytes = 0;
  private readonly last: number;

  constructor(
    private readonly first: number,
    count: number,
    private readonly maxBytes: number,
  ) {
    this.last = first + count - 1; // Infinity when count is Infinity
  }

  /** True once every requested line is complete (no more input needed). */
  get done(): boolean {
    return this.line > this.last;
  }

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length && !this.done) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl < 0 ? chunk.length : nl + 1;
      if (this.line >= this.first) this.keep(chunk.subarray(start, end));
      if (nl < 0) break;
      this.line++;
      start = end;
    }
  }

  result(): string {
    return Buffer.concat(this.parts, this.bytes).toString('utf8');
  }

  private keep(slice: Buffer): void {
    if (slice.length === 0) return;
    this.bytes += slice.length;
    if (this.bytes > this.maxBytes) {
      throw denied(`the requested lines are larger than the read limit of ${this.maxBytes} bytes; read fewer lines with line/limit`, { maxReadBytes: this.maxBytes });
    }
    this.parts.push(Buffer.from(slice)); // copy: the chunk buffer is reused
  }
}

function ioError(error: unknown, path: string, action: string): AseError {
  if (error instanceof AseError) return error;
  const code = errnoOf(error);
  if (code === 'ELOOP') return denied(`${path} became a symlink while it was being opened`, { path });
  if (code === 'EISDIR') return denied(`${path} is a directory, not a regular file`, { path });
  if (code === 'ENXIO') return denied(`${path} is not a regular file`, { path });
  if (code === 'ENOTDIR') return denied(`a component of ${path} is not a directory`, { path });
  if (code === 'EACCES' || code === 'EPERM') return denied(`permission denied to ${action} ${path}`, { path, errno: code });
  return failed(`cannot ${action} ${path}: ${errorMessage(error)}`, { path, ...(code !== undefined && { errno: code }) });
}

function describeType(st: { isDirectory(): boolean; isFIFO(): boolean; isSocket(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean }): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

function sessionIdOf(params: { sessionId: unknown }): void {
  if (typeof params.sessionId !== 'string' || params.sessionId.length === 0) throw denied('sessionId must be a non-empty string', { sessionId: params.sessionId });
}

export class ConfinedFs {
  /** Canonical (realpath) roots, resolved once at construction. */
  readonly roots: readonly string[];
  readonly maxReadBytes: number;
  readonly maxWriteBytes: number;

  constructor(options: ConfinedFsOptions) {
    this.roots = resolveRoots(options.workDir, options.extraRoots);
    this.maxReadBytes = options.maxReadBytes ?? DEFAULT_MAX_READ_BYTES;
    this.maxWriteBytes = options.maxWriteBytes ?? DEFAULT_MAX_WRITE_BYTES;
  }

  async readTextFile(params: { sessionId: string; path: string; line?: number | null; limit?: number | null }): Promise<{ content: string }> {
    sessionIdOf(params);
    const { first, count } = lineRange(params.line, params.limit);
    const confined = await confinePath(params.path, this.roots);
    if (confined.namesDirectory) throw denied(`${params.path} names a directory, not a file`, { path: params.path });
    if (confined.missing.length > 0) return { content: '' };
    let handle: FileHandle;
    try {
      handle = await open(confined.target, READ_FLAGS);
    } catch (error) {
      if (errnoOf(error) === 'ENOENT') return { content: '' }; // deleted since the check
      throw ioError(error, params.path, 'read');
    }
    try {
      await assertOpenedWithin(handle.fd, this.roots, params.path);
      const st = await handle.stat();
      if (!st.isFile()) throw denied(`${params.path} is ${describeType(st)}, not a regular file`, { path: params.path });
      if (count === Number.POSITIVE_INFINITY && first === 1 && st.size > this.maxReadBytes) {
        throw denied(`${params.path} is ${st.size} bytes, larger than the read limit of ${this.maxReadBytes} bytes; read it in slices with line/limit`, {
          path: params.path,
          size: st.size,
          maxReadBytes: this.maxReadBytes,
        });
      }
      return { content: await readLines(handle, new LineWindow(first, count, this.maxReadBytes)) };
    } catch (error) {
      throw ioError(error, params.path, 'read');
    } finally {
      await handle.close();
    }
  }

  async writeTextFile(params: { sessionId: string; path: string; content: string }): Promise<Record<string, never>> {
    sessionIdOf(params);
    if (typeof params.content !== 'string') throw denied('content must be a string', { path: params.path });
    const bytes = Buffer.from(params.content, 'utf8');
    if (bytes.length > this.maxWriteBytes) {
      throw denied(`content is ${bytes.length} bytes, larger than the write limit of ${this.maxWriteBytes} bytes`, { path: params.path, size: bytes.length, maxWriteBytes: this.maxWriteBytes });
    }
    const confined = await confinePath(params.path, this.roots);
    if (confined.namesDirectory) throw denied(`${params.path} names a directory, not a file`, { path: params.path });
    let handle: FileHandle;
    try {
      handle = confined.missing.length === 0 ? await open(confined.target, WRITE_FLAGS) : await this.create(confined.existing, confined.missing, params.path);
    } catch (error) {
      throw ioError(error, params.path, 'write');
    }
    try {
      await assertOpenedWithin(handle.fd, this.roots, params.path);
      const st = await handle.stat();
      if (!st.isFile()) throw denied(`${params.path} is ${describeType(st)}, not a regular file`, { path: params.path });
      // Another name of the same inode may live outside the roots (a planted hard link, a pnpm
      // store file): writing would change it there too, and no path check can see that.
      if (st.nlink > 1) throw denied(`${params.path} has ${st.nlink} hard links; another of its names may be outside the allowed directories, so it is not written`, { path: params.path, nlink: st.nlink });
      await handle.truncate(0);
      let written = 0;
      while (written < bytes.length) {
        const { bytesWritten } = await handle.write(bytes, written, bytes.length - written, written);
        written += bytesWritten;
      }
      return {};
    } catch (error) {
      throw ioError(error, params.path, 'write');
    } finally {
      await handle.close();
    }
  }

  /**
   * Creates the missing parent directories one by one below the (checked) existing directory,
   * then the file itself with O_CREAT|O_EXCL|O_NOFOLLOW. An entry that shows up meanwhile is
   * accepted only if it is a real directory (parents) or, for the file, opened O_NOFOLLOW.
   */
  private async create(existing: string, missing: readonly string[], requested: string): Promise<FileHandle> {
    let dir = existing;
    for (const name of missing.slice(0, -1)) {
      dir = join(dir, name);
      try {
        await mkdir(dir);
      } catch (error) {
        if (errnoOf(error) !== 'EEXIST') throw error;
        const st = await lstat(dir);
        if (!st.isDirectory()) throw denied(`${dir} appeared while ${requested} was being created and is not a directory`, { path: requested });
      }
    }
    const file = join(dir, missing[missing.length - 1]!);
    try {
      return await open(file, WRITE_FLAGS | constants.O_CREAT | constants.O_EXCL, 0o666);
    } catch (error) {
      if (errnoOf(error) !== 'EEXIST') throw error;
      return await open(file, WRITE_FLAGS); // created concurrently: O_NOFOLLOW still applies
    }
  }
}

/** Feeds the file from the start into `window` until it has every requested line or EOF. */
async function readLines(handle: FileHandle, window: LineWindow): Promise<string> {
  const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  let position = 0;
  while (!window.done) {
    const { bytesRead } = await handle.read(chunk, 0, CHUNK_BYTES, position);
    if (bytesRead === 0) break;
    window.push(chunk.subarray(0, bytesRead));
    position += bytesRead;
  }
  return window.result();
}
