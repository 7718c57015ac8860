/** When a new app-server thread counts as resumable: its rollout holds a complete first line. */
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { rolloutStarted } from '../../src/engines/codex/app-server/rollout-started.js';

const dir = mkdtempSync(join(tmpdir(), 'ase-rollout-started-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('rolloutStarted', () => {
  it('is false while the file is missing, empty or its first line incomplete; true once the line ends', () => {
    const path = join(dir, 'rollout-x.jsonl');
    expect(rolloutStarted(path)).toBe(false);
    writeFileSync(path, '');
    expect(rolloutStarted(path)).toBe(false);
    appendFileSync(path, '{"type":"session_meta","payload":{"id":"th"');
    expect(rolloutStarted(path)).toBe(false);
    appendFileSync(path, '}}\n');
    expect(rolloutStarted(path)).toBe(true);
  });
});
