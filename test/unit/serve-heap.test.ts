/**
 * `ase serve`'s launcher flag (src/cli/serve-heap.ts): only `serve` is started again, with the flag
 * after Node's own options and before the script and its arguments; a young-generation size the
 * user chose (command line or NODE_OPTIONS) is left alone, so the relaunch never loops.
 */
import { describe, expect, it } from 'vitest';
import { SERVE_SEMI_SPACE_FLAG, serveRelaunchArgv } from '../../src/cli/serve-heap.js';

describe('serveRelaunchArgv', () => {
  it('starts `serve` again with the flag, keeping Node options, script and arguments in order', () => {
    expect(serveRelaunchArgv('/n', ['--enable-source-maps'], ['/n', '/bin/ase', 'serve', '--port', '0'], undefined)).toEqual(['/n', '--enable-source-maps', SERVE_SEMI_SPACE_FLAG, '/bin/ase', 'serve', '--port', '0']);
  });

  it('leaves other commands, and a size already chosen, as they are', () => {
    expect(serveRelaunchArgv('/n', [], ['/n', '/bin/ase', 'run', 'serve'], undefined)).toBeUndefined();
    expect(serveRelaunchArgv('/n', [], ['/n', '/bin/ase'], undefined)).toBeUndefined();
    expect(serveRelaunchArgv('/n', [SERVE_SEMI_SPACE_FLAG], ['/n', '/bin/ase', 'serve'], undefined)).toBeUndefined();
    expect(serveRelaunchArgv('/n', ['--max_semi_space_size=32'], ['/n', '/bin/ase', 'serve'], undefined)).toBeUndefined();
    expect(serveRelaunchArgv('/n', [], ['/n', '/bin/ase', 'serve'], '--trace-warnings  --max-semi-space-size=64')).toBeUndefined();
    // A look-alike is not a choice.
    expect(serveRelaunchArgv('/n', ['--max-semi-space-size-x=1'], ['/n', '/bin/ase', 'serve'], '--max-old-space-size=512')).toEqual(['/n', '--max-semi-space-size-x=1', SERVE_SEMI_SPACE_FLAG, '/bin/ase', 'serve']);
  });
});
