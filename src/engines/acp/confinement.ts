/**
 * Path confinement for the ACP client-side `fs/*` and `terminal/*` handlers.
 *
 * An ACP agent names files by absolute path. The client must only touch files inside the roots it
 * granted (the session's workDir plus optional extra roots), whatever `..`, `.` or symlinks the
 * path contains. The rules (see docs/engines/acp-client.md):
 *
 * 1. The path must be a non-empty absolute string without NUL bytes, at most 4096 bytes.
 * 2. It is resolved with KERNEL semantics, not lexically: the deepest prefix that exists is passed
 *    to realpath(3) (`fs.promises.realpath` is the native one), so `link/..` means "the parent of
 *    the link's target", exactly what open(2) would do. A lexical `path.resolve` first would check
 *    one file and let a later kernel call open another.
 * 3. The components below that prefix (the part that does not exist yet) may not contain `..`
 *    (the kernel could not resolve them either) and the first of them may not be a dangling
 *    symlink (it would make a later create follow the link wherever it points).
 * 4. The realpath of the existing prefix must be inside the realpath of a root.
 * 5. After opening, the fd's own path (/proc/self/fd/N) is re-checked against the roots, which
 *    closes the window between the check and the open for everything except creating entries
 *    (see client-fs.ts for the residual risk).
 *
 * Violations throw an AseError `INVALID_INPUT` carrying JSON-RPC code -32602 (invalid params) in its
 * details; the ACP client connection (client.ts) answers the agent's request with that error.
 */
import { realpathSync, statSync } from 'node:fs';
import { lstat, readlink, realpath } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { AseError } from '../../errors.js';
import { INTERNAL_ERROR, INVALID_PARAMS, rpcError, type RpcErrorDetails } from '../transport/json-rpc.js';

/** Linux PATH_MAX: longer paths cannot be opened anyway. */
export const MAX_PATH_BYTES = 4096;

/** A refusal (`INVALID_INPUT`, answered to the agent as -32602) with a readable reason and structured data for the agent. */
export function denied(reason: string, data: Record<string, unknown> = {}): AseError<RpcErrorDetails> {
  return rpcError(INVALID_PARAMS, reason, data, 'INVALID_INPUT');
}

/** A failure on our side (`ENGINE_ERROR`, answered to the agent as -32603). */
export function failed(reason: string, data: Record<string, unknown> = {}): AseError<RpcErrorDetails> {
  return rpcError(INTERNAL_ERROR, reason, data, 'ENGINE_ERROR');
}

/** Error code of a Node system error, if any. */
export function errnoOf(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}

/**
 * Canonical roots: realpath of the workDir and of each extra root. Synchronous because it runs
 * once in a constructor; throws `AseError('INVALID_OPTIONS')` when a root is not an absolute
 * path to an existing directory.
 */
export function resolveRoots(workDir: string, extraRoots: readonly string[] = []): string[] {
  const roots: string[] = [];
  for (const root of [workDir, ...extraRoots]) {
    if (typeof root !== 'string' || !isAbsolute(root)) throw new AseError('INVALID_OPTIONS', `confinement root must be an absolute path: ${String(root)}`);
    let real: string;
    try {
      real = realpathSync.native(root);
    } catch (error) {
      throw new AseError('INVALID_OPTIONS', `confinement root ${root} cannot be resolved: ${errnoOf(error) ?? String(error)}`, { cause: error });
    }
    if (!statSync(real).isDirectory()) throw new AseError('INVALID_OPTIONS', `confinement root ${root} is not a directory`);
    if (!roots.includes(real)) roots.push(real);
  }
  return roots;
}

/** True when the canonical path `candidate` is `root` itself or below it. */
export function isWithin(root: string, candidate: string): boolean {
  if (candidate === root) return true;
  const prefix = root.endsWith('/') ? root : `${root}/`;
  return candidate.startsWith(prefix);
}

export function isWithinAny(roots: readonly string[], candidate: string): boolean {
  return roots.some((root) => isWithin(root, candidate));
}

export interface ConfinedPath {
  /** The path as the agent sent it. */
  requested: string;
  /** realpath of the deepest existing prefix (the whole path when it exists); inside a root. */
  existing: string;
  /** Components below `existing` that do not exist (no '', '.' or '..'); empty when the path exists. */
  missing: string[];
  /** `existing` joined with `missing`: the canonical path to operate on. */
  target: string;
  /** The path ends in '/', '/.' or '/..', so it can only name a directory (never a file to read or write). */
  namesDirectory: boolean;
}

/** Checks the shape of the path (rule 1) and splits it into components, keeping '.' and '..'. */
function components(requested: unknown, what: string): string[] {
  if (typeof requested !== 'string' || requested.length === 0) throw denied(`${what} must be a non-empty string`, { path: requested });
  if (requested.includes('\0')) throw denied(`${what} contains a NUL byte`, { path: requested });
  if (Buffer.byteLength(requested) > MAX_PATH_BYTES) throw denied(`${what} is longer than ${MAX_PATH_BYTES} bytes`, { path: requested.slice(0, 256) });
  if (!isAbsolute(requested)) throw denied(`${what} must be absolute: ${requested}`, { path: requested });
  return requested.split('/').filter((c) => c.length > 0);
}

/** Finds the deepest prefix realpath(3) can resolve. ENOENT/ENOTDIR mean "does not exist (yet)". */
async function deepestExisting(parts: readonly string[], requested: string): Promise<{ existing: string; rest: string[] }> {
  for (let k = parts.length; k >= 0; k--) {
    const prefix = `/${parts.slice(0, k).join('/')}`;
    try {
      return { existing: await realpath(prefix), rest: parts.slice(k) };
    } catch (error) {
      const code = errnoOf(error);
      if (code === 'ENOENT' || code === 'ENOTDIR') continue;
      if (code === 'ELOOP') throw denied(`path has a symlink loop: ${requested}`, { path: requested });
      throw denied(`path cannot be resolved (${code ?? 'error'}): ${requested}`, { path: requested, errno: code });
    }
  }
  // realpath('/') cannot fail with ENOENT; reaching here means the filesystem is broken.
  throw denied(`path cannot be resolved: ${requested}`, { path: requested });
}

/**
 * Applies rules 1–4 to `requested` and returns where it leads. Throws -32602 when the path is
 * malformed, relative, escapes every root (through `..`, an absolute path or a symlink), has `..`
 * below its existing part, continues below a non-directory or starts its missing part with a
 * dangling symlink.
 */
export async function confinePath(requested: unknown, roots: readonly string[], what = 'path'): Promise<ConfinedPath> {
  const parts = components(requested, what);
  const path = requested as string;
  const namesDirectory = /\/(\.{0,2})$/.test(path);
  const { existing, rest } = await deepestExisting(parts, path);
  if (!isWithinAny(roots, existing)) {
    // For a path that does not exist (yet), `existing` is the deepest directory it would be created in.
    const where = rest.length === 0 ? `resolves to ${existing}` : `would be created below ${existing}`;
    throw denied(`${what} is outside the allowed directories: ${path} ${where}; allowed: ${roots.join(', ')}`, { path, resolved: existing, roots });
  }
  if (rest.length === 0) return { requested: path, existing, missing: [], target: existing, namesDirectory };
  if (rest.includes('..')) throw denied(`${what} has '..' below a directory that does not exist: ${path}`, { path });
  // The deepest existing part must be a directory for anything below it to make sense; this
  // also refuses "file.txt/." style paths that realpath(3) would reject with ENOTDIR.
  const existingStat = await lstat(existing);
  if (!existingStat.isDirectory()) throw denied(`${what} continues below a non-directory: ${path}`, { path, resolved: existing });
  const missing = rest.filter((c) => c !== '.');
  if (missing.length === 0) return { requested: path, existing, missing, target: existing, namesDirectory };
  // realpath failed below `existing`, so if the next entry exists at all it is a symlink whose
  // target is missing (or it appeared just now). Creating through it would follow the link.
  const first = join(existing, missing[0]!);
  const firstStat = await lstat(first).catch((error: unknown) => {
    if (errnoOf(error) === 'ENOENT') return undefined;
    throw denied(`path cannot be resolved (${errnoOf(error) ?? 'error'}): ${path}`, { path });
  });
  if (firstStat !== undefined) {
    const why = firstStat.isSymbolicLink() ? 'is a symlink whose target does not exist' : 'appeared while the path was being resolved';
    throw denied(`${what} component ${first} ${why}: ${path}`, { path, component: first });
  }
  return { requested: path, existing, missing, target: join(existing, ...missing), namesDirectory };
}

/**
 * Rule 5: the path the kernel actually opened (Linux `/proc/self/fd/N`) must be inside a root.
 * Catches a directory that was swapped for a symlink between `confinePath` and `open`. Where
 * /proc is unavailable (non-Linux) this check is skipped and the TOCTOU window stays open.
 */
export async function assertOpenedWithin(fd: number, roots: readonly string[], requested: string): Promise<void> {
  let opened: string;
  try {
    opened = await readlink(`/proc/self/fd/${fd}`);
  } catch {
    return;
  }
  if (opened.endsWith(' (deleted)') || !isWithinAny(roots, opened)) {
    throw denied(`path changed while it was being opened and now leads outside the allowed directories: ${requested}`, { path: requested, opened });
  }
}

/** Confines a directory (a terminal cwd): it must exist and be a directory inside a root. */
export async function confineDirectory(requested: unknown, roots: readonly string[], what = 'cwd'): Promise<string> {
  const confined = await confinePath(requested, roots, what);
  if (confined.missing.length > 0) throw denied(`${what} does not exist: ${confined.requested}`, { path: confined.requested });
  const st = await lstat(confined.target);
  if (!st.isDirectory()) throw denied(`${what} is not a directory: ${confined.requested}`, { path: confined.requested });
  return confined.target;
}
