/**
 * ConfinedFs (ACP fs/read_text_file, fs/write_text_file) and the confinement rules, rule by rule,
 * on a real temp tree: every denial must be an AseError INVALID_INPUT answered as -32602 and leave the outside untouched.
 */
import { execFileSync } from 'node:child_process';
import { linkSync, lstatSync, mkdirSync, mkdtempSync, openSync, closeSync, readFileSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AseError } from '../../src/errors.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfinedFs, LineWindow, lineRange } from '../../src/engines/acp/client-fs.js';
import { assertOpenedWithin, confineDirectory, confinePath, isWithin, resolveRoots } from '../../src/engines/acp/confinement.js';
import { isAseError } from '../../src/errors.js';
import { rejection } from '../support/async.js';

const SECRET = 'OUTSIDE-SECRET\n';
let base: string; // realpath'd temp dir holding work/ and outside/
let work: string;
let outside: string;
let fs: ConfinedFs;
const sessionId = 'sess-1';

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'acp-fs-')));
  work = join(base, 'work');
  outside = join(base, 'outside');
  mkdirSync(join(work, 'sub', 'deep'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), SECRET);
  writeFileSync(join(base, 'secret.txt'), SECRET);
  writeFileSync(join(work, 'a.txt'), 'one\ntwo\nthree\nfour\n');
  writeFileSync(join(work, 'sub', 'a.txt'), 'sub-a\n');
  fs = new ConfinedFs({ workDir: work });
});

afterEach(() => {
  rmSync(base, { recursive: true, force: true });
});

async function expectDenied(promise: Promise<unknown>, message?: RegExp): Promise<AseError> {
  const error = await rejection(promise);
  expect(error).toBeInstanceOf(AseError);
  expect(error).toMatchObject({ code: 'INVALID_INPUT', details: { rpcCode: -32602 } });
  if (message) expect((error as AseError).message).toMatch(message);
  return error as AseError;
}

const read = (path: string, extra: { line?: number | null; limit?: number | null } = {}) => fs.readTextFile({ sessionId, path, ...extra });
const write = (path: string, content: string) => fs.writeTextFile({ sessionId, path, content });
const outsideIntact = () => {
  expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe(SECRET);
  expect(readFileSync(join(base, 'secret.txt'), 'utf8')).toBe(SECRET);
};

describe('reading inside the root', () => {
  it('reads a whole file by absolute path', async () => {
    expect(await read(join(work, 'a.txt'))).toEqual({ content: 'one\ntwo\nthree\nfour\n' });
  });

  it('slices 1-based line/limit, keeping line endings', async () => {
    expect((await read(join(work, 'a.txt'), { line: 2, limit: 2 })).content).toBe('two\nthree\n');
    expect((await read(join(work, 'a.txt'), { line: 1, limit: 1 })).content).toBe('one\n');
    expect((await read(join(work, 'a.txt'), { line: 4 })).content).toBe('four\n');
    expect((await read(join(work, 'a.txt'), { line: 5 })).content).toBe('');
    expect((await read(join(work, 'a.txt'), { line: 99, limit: 3 })).content).toBe('');
    expect((await read(join(work, 'a.txt'), { limit: 0 })).content).toBe('');
    expect((await read(join(work, 'a.txt'), { line: null, limit: null })).content).toBe('one\ntwo\nthree\nfour\n');
    // claude-code-acp always sends line 1, limit 2000
    expect((await read(join(work, 'a.txt'), { line: 1, limit: 2000 })).content).toBe('one\ntwo\nthree\nfour\n');
  });

  it('treats line 0 as line 1 (as Zed does) and refuses negative or fractional values', async () => {
    expect((await read(join(work, 'a.txt'), { line: 0, limit: 1 })).content).toBe('one\n');
    await expectDenied(read(join(work, 'a.txt'), { line: -1 }), /line must be a positive integer/);
    await expectDenied(read(join(work, 'a.txt'), { line: 1.5 }), /line/);
    await expectDenied(read(join(work, 'a.txt'), { limit: -2 }), /limit must be a non-negative integer/);
  });

  it('keeps a last line without newline and multi-byte text intact', async () => {
    writeFileSync(join(work, 'u.txt'), 'héllo\nwörld\n日本語');
    expect((await read(join(work, 'u.txt'), { line: 2 })).content).toBe('wörld\n日本語');
    expect((await read(join(work, 'u.txt'), { line: 3, limit: 1 })).content).toBe('日本語');
  });

  it('resolves . and .. that stay inside, and .. after an in-root symlink the way the kernel does', async () => {
    expect((await read(`${work}/sub/../a.txt`)).content).toBe('one\ntwo\nthree\nfour\n');
    expect((await read(`${work}/./sub/./a.txt`)).content).toBe('sub-a\n');
    // inner -> sub/deep; inner/.. is sub (kernel), not work (lexical)
    symlinkSync(join(work, 'sub', 'deep'), join(work, 'inner'));
    expect((await read(`${work}/inner/../a.txt`)).content).toBe('sub-a\n');
  });

  it('follows in-root symlinks (leaf and middle) to in-root targets', async () => {
    symlinkSync('a.txt', join(work, 'alias.txt'));
    symlinkSync('sub', join(work, 'subdir-link'));
    expect((await read(join(work, 'alias.txt'))).content).toBe('one\ntwo\nthree\nfour\n');
    expect((await read(join(work, 'subdir-link', 'a.txt'))).content).toBe('sub-a\n');
  });

  it('answers "" for a missing file inside the root, also below missing directories', async () => {
    expect(await read(join(work, 'missing.txt'))).toEqual({ content: '' });
    expect(await read(join(work, 'no', 'such', 'dir', 'f.txt'))).toEqual({ content: '' });
  });

  it('works when workDir itself is given through a symlink', async () => {
    symlinkSync(work, join(base, 'work-link'));
    const viaLink = new ConfinedFs({ workDir: join(base, 'work-link') });
    expect(viaLink.roots).toEqual([work]);
    expect((await viaLink.readTextFile({ sessionId, path: join(base, 'work-link', 'a.txt'), limit: 1 })).content).toBe('one\n');
    expect((await viaLink.readTextFile({ sessionId, path: join(work, 'a.txt'), limit: 1 })).content).toBe('one\n');
    await expectDenied(viaLink.readTextFile({ sessionId, path: join(base, 'work-link', '..', 'secret.txt') }), /outside/);
  });
});

describe('reads that escape are denied with -32602', () => {
  it('.. out of the root', async () => {
    await expectDenied(read(`${work}/../secret.txt`), /outside the allowed directories/);
    await expectDenied(read(`${work}/sub/../../outside/secret.txt`), /outside/);
    await expectDenied(read(`${work}/../outside/missing.txt`), /outside/); // missing outside: still denied, not ""
  });

  it('an absolute path elsewhere', async () => {
    await expectDenied(read('/etc/passwd'), /outside/);
    await expectDenied(read(join(outside, 'secret.txt')), /outside/);
    await expectDenied(read('/'), /outside/);
  });

  it('a sibling directory whose name starts with the root name', async () => {
    mkdirSync(`${work}2`);
    writeFileSync(`${work}2/x.txt`, SECRET);
    await expectDenied(read(`${work}2/x.txt`), /outside/);
  });

  it('a symlink at the leaf pointing outside', async () => {
    symlinkSync(join(outside, 'secret.txt'), join(work, 'leak.txt'));
    await expectDenied(read(join(work, 'leak.txt')), /outside/);
  });

  it('a symlink in the middle pointing outside', async () => {
    symlinkSync(outside, join(work, 'out'));
    await expectDenied(read(join(work, 'out', 'secret.txt')), /outside/);
    await expectDenied(read(join(work, 'out', 'missing.txt')), /outside/);
  });

  it('.. after a symlink (kernel semantics: the parent of the target)', async () => {
    symlinkSync(outside, join(work, 'out'));
    symlinkSync(join(outside, 'secret.txt'), join(work, 'f'));
    await expectDenied(read(`${work}/out/../secret.txt`), /outside/);
    await expectDenied(read(`${work}/out/../outside/secret.txt`), /outside/);
  });

  it('a relative path, an empty path, a NUL byte, an overlong path', async () => {
    await expectDenied(read('a.txt'), /must be absolute/);
    await expectDenied(read('../secret.txt'), /must be absolute/);
    await expectDenied(read(''), /non-empty/);
    await expectDenied(read(`${work}/a.txt\0`), /NUL/);
    await expectDenied(read(`${work}/${'x/'.repeat(3000)}`), /longer than/);
  });

  it('a dangling symlink (even to a target that would be inside) and a symlink loop', async () => {
    symlinkSync(join(outside, 'nope.txt'), join(work, 'dangling'));
    await expectDenied(read(join(work, 'dangling')), /symlink whose target does not exist/);
    symlinkSync('loop', join(work, 'loop'));
    await expectDenied(read(join(work, 'loop')), /symlink loop/);
  });

  it('a path that can only name a directory (trailing /, /. or /..)', async () => {
    await expectDenied(read(`${work}/a.txt/`), /names a directory/);
    await expectDenied(write(`${work}/new.txt/`, 'x'), /names a directory/);
    await expectDenied(write(`${work}/sub/.`, 'x'), /names a directory/);
    await expectDenied(write(`${work}/sub/deep/..`, 'x'), /names a directory/);
    expect(existsSync(join(work, 'new.txt'))).toBe(false);
  });

  it('a path continuing below a regular file', async () => {
    await expectDenied(read(join(work, 'a.txt', 'x')), /non-directory/);
    await expectDenied(read(`${work}/a.txt/.`), /non-directory/);
  });

  it('the sessionId must be present', async () => {
    await expectDenied(fs.readTextFile({ sessionId: '', path: join(work, 'a.txt') }), /sessionId/);
  });
});

describe('non-regular files and size caps', () => {
  it('refuses a directory', async () => {
    await expectDenied(read(join(work, 'sub')), /is a directory/);
    await expectDenied(write(join(work, 'sub'), 'x'), /directory/);
  });

  it('refuses a FIFO for reading and writing without blocking', async () => {
    execFileSync('mkfifo', [join(work, 'pipe')]);
    const started = Date.now();
    await expectDenied(read(join(work, 'pipe')), /FIFO/);
    await expectDenied(write(join(work, 'pipe'), 'x'), /not a regular file/);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('refuses a device (in a granted extra root)', async () => {
    const withDev = new ConfinedFs({ workDir: work, extraRoots: ['/dev'] });
    await expectDenied(withDev.readTextFile({ sessionId, path: '/dev/null' }), /device/);
    await expectDenied(withDev.readTextFile({ sessionId, path: '/dev/zero', line: 1, limit: 1 }), /device/);
  });

  it('refuses a whole file above maxReadBytes but serves line slices of it', async () => {
    const small = new ConfinedFs({ workDir: work, maxReadBytes: 1000 });
    const lines = Array.from({ length: 500 }, (_, i) => `line ${i + 1}`).join('\n');
    writeFileSync(join(work, 'big.txt'), lines);
    await expectDenied(small.readTextFile({ sessionId, path: join(work, 'big.txt') }), /larger than the read limit of 1000 bytes/);
    expect((await small.readTextFile({ sessionId, path: join(work, 'big.txt'), line: 400, limit: 2 })).content).toBe('line 400\nline 401\n');
    await expectDenied(small.readTextFile({ sessionId, path: join(work, 'big.txt'), line: 1, limit: 2000 }), /larger than the read limit/);
  });

  it('reads a slice from a file larger than one read chunk', async () => {
    const lines = Array.from({ length: 30_000 }, (_, i) => `row-${i + 1}`).join('\n') + '\n';
    writeFileSync(join(work, 'huge.txt'), lines);
    expect((await read(join(work, 'huge.txt'), { line: 29_999, limit: 5 })).content).toBe('row-29999\nrow-30000\n');
  });

  it('refuses a write above maxWriteBytes (counted in UTF-8 bytes) and leaves the file as it was', async () => {
    const small = new ConfinedFs({ workDir: work, maxWriteBytes: 10 });
    await expectDenied(small.writeTextFile({ sessionId, path: join(work, 'a.txt'), content: 'ééééééé' }), /14 bytes, larger than the write limit of 10/);
    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('one\ntwo\nthree\nfour\n');
    await small.writeTextFile({ sessionId, path: join(work, 'a.txt'), content: 'éééé' });
    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('éééé');
  });
});

describe('writing', () => {
  it('overwrites an existing file (truncating longer old content)', async () => {
    expect(await write(join(work, 'a.txt'), 'new')).toEqual({});
    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('new');
  });

  it('creates a new file and missing parent directories inside the root', async () => {
    await write(join(work, 'x', 'y', 'z.txt'), 'deep');
    expect(readFileSync(join(work, 'x', 'y', 'z.txt'), 'utf8')).toBe('deep');
    await write(`${work}/sub/./new.txt`, 'dot');
    expect(readFileSync(join(work, 'sub', 'new.txt'), 'utf8')).toBe('dot');
  });

  it('writes through an in-root leaf symlink to its in-root target, keeping the link', async () => {
    symlinkSync('a.txt', join(work, 'alias.txt'));
    await write(join(work, 'alias.txt'), 'via alias');
    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('via alias');
    expect(lstatSync(join(work, 'alias.txt')).isSymbolicLink()).toBe(true);
  });

  it('an empty write creates an empty file; a read of it answers ""', async () => {
    await write(join(work, 'empty.txt'), '');
    expect(readFileSync(join(work, 'empty.txt'), 'utf8')).toBe('');
    expect(await read(join(work, 'empty.txt'))).toEqual({ content: '' });
  });
});

describe('writes that escape are denied and change nothing outside', () => {
  it('.. out of the root', async () => {
    await expectDenied(write(`${work}/../secret.txt`, 'pwned'), /outside/);
    await expectDenied(write(`${work}/../new.txt`, 'pwned'), /outside/);
    await expectDenied(write(`${work}/sub/../../outside/new.txt`, 'pwned'), /outside/);
    expect(existsSync(join(base, 'new.txt'))).toBe(false);
    expect(existsSync(join(outside, 'new.txt'))).toBe(false);
    outsideIntact();
  });

  it('.. below a directory that does not exist yet', async () => {
    await expectDenied(write(`${work}/newdir/../../new.txt`, 'pwned'), /'\.\.' below a directory that does not exist/);
    expect(existsSync(join(work, 'newdir'))).toBe(false);
    expect(existsSync(join(base, 'new.txt'))).toBe(false);
  });

  it('an absolute path elsewhere', async () => {
    await expectDenied(write(join(outside, 'secret.txt'), 'pwned'), /outside/);
    await expectDenied(write(join(outside, 'new', 'file.txt'), 'pwned'), /outside/);
    expect(existsSync(join(outside, 'new'))).toBe(false);
    outsideIntact();
  });

  it('a symlink at the leaf pointing to an existing file outside', async () => {
    symlinkSync(join(outside, 'secret.txt'), join(work, 'leak.txt'));
    await expectDenied(write(join(work, 'leak.txt'), 'pwned'), /outside/);
    outsideIntact();
  });

  it('a dangling symlink at the leaf pointing to a missing file outside (would create it)', async () => {
    symlinkSync(join(outside, 'created.txt'), join(work, 'dangling.txt'));
    await expectDenied(write(join(work, 'dangling.txt'), 'pwned'), /symlink whose target does not exist/);
    expect(existsSync(join(outside, 'created.txt'))).toBe(false);
    expect(readlinkSync(join(work, 'dangling.txt'))).toBe(join(outside, 'created.txt'));
  });

  it('a symlink in the middle pointing outside, existing and dangling', async () => {
    symlinkSync(outside, join(work, 'out'));
    await expectDenied(write(join(work, 'out', 'secret.txt'), 'pwned'), /outside/);
    await expectDenied(write(join(work, 'out', 'new', 'f.txt'), 'pwned'), /outside/);
    symlinkSync(join(outside, 'newdir'), join(work, 'dangdir'));
    await expectDenied(write(join(work, 'dangdir', 'f.txt'), 'pwned'), /symlink whose target does not exist/);
    expect(existsSync(join(outside, 'newdir'))).toBe(false);
    expect(existsSync(join(outside, 'new'))).toBe(false);
    outsideIntact();
  });

  it('a hard link to a file outside (same inode) is not written', async () => {
    linkSync(join(outside, 'secret.txt'), join(work, 'hardlink.txt'));
    await expectDenied(write(join(work, 'hardlink.txt'), 'pwned'), /2 hard links/);
    outsideIntact();
  });

  it('.. after a symlink', async () => {
    symlinkSync(join(outside), join(work, 'out'));
    await expectDenied(write(`${work}/out/../secret.txt`, 'pwned'), /outside/);
    await expectDenied(write(`${work}/out/../created.txt`, 'pwned'), /outside/);
    expect(existsSync(join(base, 'created.txt'))).toBe(false);
    outsideIntact();
  });

  it('relative paths', async () => {
    await expectDenied(write('new.txt', 'x'), /must be absolute/);
    await expectDenied(write('../secret.txt', 'x'), /must be absolute/);
    outsideIntact();
  });
});

describe('extra roots', () => {
  it('grants exactly the listed directories', async () => {
    const extra = join(base, 'extra');
    mkdirSync(extra);
    writeFileSync(join(extra, 'e.txt'), 'extra\n');
    const withExtra = new ConfinedFs({ workDir: work, extraRoots: [extra] });
    expect((await withExtra.readTextFile({ sessionId, path: join(extra, 'e.txt') })).content).toBe('extra\n');
    await withExtra.writeTextFile({ sessionId, path: join(extra, 'n', 'new.txt'), content: 'ok' });
    expect(readFileSync(join(extra, 'n', 'new.txt'), 'utf8')).toBe('ok');
    await expectDenied(withExtra.readTextFile({ sessionId, path: join(outside, 'secret.txt') }), /outside/);
    await expectDenied(withExtra.writeTextFile({ sessionId, path: `${extra}/../secret.txt`, content: 'x' }), /outside/);
    // the plain fs without the extra root refuses it
    await expectDenied(read(join(extra, 'e.txt')), /outside/);
    outsideIntact();
  });

  it('refuses invalid roots at construction with AseError INVALID_OPTIONS', () => {
    for (const bad of ['relative/dir', join(base, 'missing'), join(work, 'a.txt')]) {
      let thrown: unknown;
      try {
        new ConfinedFs({ workDir: bad });
      } catch (error) {
        thrown = error;
      }
      expect(isAseError(thrown, 'INVALID_OPTIONS')).toBe(true);
    }
    expect(resolveRoots(work, [work, join(work, 'sub')])).toEqual([work, join(work, 'sub')]);
  });
});

describe('confinement primitives', () => {
  it('isWithin compares whole components', () => {
    expect(isWithin('/a/b', '/a/b')).toBe(true);
    expect(isWithin('/a/b', '/a/b/c')).toBe(true);
    expect(isWithin('/a/b', '/a/bc')).toBe(false);
    expect(isWithin('/a/b', '/a')).toBe(false);
    expect(isWithin('/', '/anything')).toBe(true);
  });

  it('confinePath reports the existing part and the missing tail', async () => {
    expect(await confinePath(`${work}/sub/new/./f.txt`, [work])).toEqual({
      requested: `${work}/sub/new/./f.txt`,
      existing: join(work, 'sub'),
      missing: ['new', 'f.txt'],
      target: join(work, 'sub', 'new', 'f.txt'),
      namesDirectory: false,
    });
  });

  it('confineDirectory accepts existing in-root directories only', async () => {
    symlinkSync(outside, join(work, 'out'));
    expect(await confineDirectory(join(work, 'sub'), [work])).toBe(join(work, 'sub'));
    await expectDenied(confineDirectory(join(work, 'out'), [work]), /outside/);
    await expectDenied(confineDirectory(join(work, 'nope'), [work]), /does not exist/);
    await expectDenied(confineDirectory(join(work, 'a.txt'), [work]), /not a directory/);
  });

  it('the fd re-check refuses a descriptor that leads outside (the TOCTOU backstop)', async () => {
    const fd = openSync(join(outside, 'secret.txt'), 'r');
    try {
      await expectDenied(assertOpenedWithin(fd, [work], join(work, 'x')), /changed while it was being opened/);
      await assertOpenedWithin(fd, [outside], join(outside, 'secret.txt'));
    } finally {
      closeSync(fd);
    }
  });

  it('LineWindow selects lines across chunk borders', () => {
    const window = new LineWindow(2, 2, 100);
    for (const piece of ['a\nb', 'b\ncc', 'c\n', 'd\n']) window.push(Buffer.from(piece));
    expect(window.result()).toBe('bb\nccc\n');
    expect(window.done).toBe(true);
    expect(lineRange(undefined, undefined)).toEqual({ first: 1, count: Number.POSITIVE_INFINITY });
  });
});
