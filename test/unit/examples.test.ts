/**
 * The examples are documentation that runs: each one's `main()` is executed here and its final
 * snapshot checked, so an API change that breaks an example breaks the build.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main as basicSession } from '../../examples/basic-session.js';
import { main as remotePermissions } from '../../examples/remote-permissions.js';

describe('examples', () => {
  let log: string[];

  beforeEach(() => {
    log = [];
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
      log.push(args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' '));
    });
  });

  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('basic-session: one echoed turn, then a clean stop', async () => {
    const final = await basicSession();
    expect(final.done).toBe(true);
    expect(final.phase).toBe('stopped');
    expect(final.state).toBe('stopped');
    expect(final.mode).toBe('remote');
    expect(final.gen).toBe(1);
    expect(final.liveGen).toBeNull();
    expect(final.queue).toEqual([]);
    expect(final.requests).toEqual({});
    expect(final.usage.turns).toBe(1);
    expect(final.resumeToken).toEqual(expect.any(String));
    expect(log).toContain('agent: echo: hello');
    expect(log.some((line) => line.startsWith('stored phase=stopped'))).toBe(true);
    expect(log.some((line) => line.startsWith('error'))).toBe(false);
  });

  it('remote-permissions: the Bash request is approved with the updated input, the turn completes, the session stops', async () => {
    const final = await remotePermissions();
    expect(final.done).toBe(true);
    expect(final.phase).toBe('stopped');
    expect(final.requests).toEqual({});
    expect(Object.keys(final.completed)).toEqual(['perm-1']);
    expect(final.completed['perm-1']).toMatchObject({ status: 'approved', gen: 1 });
    expect(final.usage.turns).toBe(1);
    expect(final.usage.costUsd).toBeCloseTo(0.0042);
    expect(log).toContain('permission perm-1: approved');
    expect(log).toContain('a second answer is refused: PERMISSION_ALREADY_DECIDED');
    expect(log.some((line) => line.startsWith('tool result completed'))).toBe(true);
  });
});
