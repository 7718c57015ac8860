/**
 * The tool has one name, `toolName`, on events, notices, transcript entries and the permission
 * ledger. Files written before that rename (`tool` in a state file's open requests, `name` in a
 * journal's `tool_call` entries) must still load, read as if written today.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileJournal, FileStore, PersistedSessionSchema } from '../../src/index.js';
import { session } from '../support/store-conformance.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ase-legacy-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Rewrites every file under `sub` with `edit` (to make it look written by the older version). */
function rewrite(sub: string, edit: (text: string) => string): number {
  let changed = 0;
  for (const entry of readdirSync(join(dir, sub), { withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = join(dir, sub, entry.name);
    const before = readFileSync(file, 'utf8');
    const after = edit(before);
    if (after !== before) changed++;
    writeFileSync(file, after);
  }
  return changed;
}

describe('files written before the toolName rename', () => {
  it('a state file whose open request names its tool `tool` loads with `toolName`', async () => {
    const store = new FileStore({ dir: join(dir, 'sessions') });
    await store.save('s1', session(), 0);
    expect(rewrite('sessions', (t) => t.replace('"toolName":"Bash"', '"tool":"Bash"'))).toBe(1);
    const loaded = await store.load('s1');
    expect(loaded?.state.requests['r1']).toEqual({ toolName: 'Bash', input: { command: 'ls' }, gen: 1, createdAt: 5 });
  });

  it('the schema takes both spellings and writes only the new one', () => {
    const old = { ...session(), requests: { r1: { tool: 'Edit', input: {}, gen: 2, createdAt: 7 } } };
    expect(PersistedSessionSchema.parse(old).requests['r1']).toEqual({ toolName: 'Edit', input: {}, gen: 2, createdAt: 7 });
    // A request with neither is still refused (the rename accepts the old field, not a missing one).
    expect(PersistedSessionSchema.safeParse({ ...session(), requests: { r1: { input: {}, gen: 2, createdAt: 7 } } }).success).toBe(false);
  });

  it('a journal whose tool_call entries name the tool `name` reads them with `toolName`', async () => {
    const journal = new FileJournal({ dir: join(dir, 'journal') });
    const base = { sessionId: 's1', agent: 'claude', gen: 1 };
    await journal.append({ ...base, ts: 1, eventId: 'i.1-1', type: 'tool_call', payload: { callId: 'c1', toolName: 'Bash', input: { command: 'ls' } } });
    await journal.append({ ...base, ts: 2, eventId: 'i.1-2', type: 'permission_request', payload: { requestId: 'p1', toolName: 'Bash', input: {} } });
    await journal.close();
    expect(rewrite('journal', (t) => t.replace('"callId":"c1","toolName":"Bash"', '"callId":"c1","name":"Bash"'))).toBe(1);
    const entries = await new FileJournal({ dir: join(dir, 'journal') }).read('s1');
    expect(entries.map((e) => e.payload)).toEqual([
      { callId: 'c1', toolName: 'Bash', input: { command: 'ls' } },
      { requestId: 'p1', toolName: 'Bash', input: {} },
    ]);
  });
});
