import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAseError } from '../../src/errors.js';
import type { TranscriptEntry } from '../../src/events/transcript-entry.js';
import { FileJournal } from '../../src/effects/journal/file-journal.js';
import { MemoryJournal } from '../../src/effects/journal/memory-journal.js';
import { rejection } from '../support/async.js';
import { describeJournalConformance } from '../support/journal-conformance.js';

function entry(seq: number, overrides: Partial<TranscriptEntry> = {}): TranscriptEntry {
  return { ts: 1000 + seq, sessionId: 's1', agent: 'fake', gen: 1, eventId: `1-${seq}`, type: 'agent_message', payload: { text: `m${seq}` }, ...overrides };
}

/** `entry(n)` as the journal returns it: numbered `seq` (its place in the session's journal). */
function at(seq: number, e: TranscriptEntry): TranscriptEntry {
  return { ...e, seq };
}

let tmp: string;
const journals: FileJournal[] = [];
beforeEach(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-journal-'));
});
afterEach(async () => {
  await Promise.all(journals.splice(0).map((j) => j.close()));
  await fs.rm(tmp, { recursive: true, force: true });
});

function open(): FileJournal {
  const journal = new FileJournal({ dir: path.join(tmp, 'transcripts') });
  journals.push(journal);
  return journal;
}
const file = (id = 's1'): string => path.join(tmp, 'transcripts', `${id}.jsonl`);

describe('FileJournal', () => {
  it('reads back what was appended, one JSON line per entry', async () => {
    const journal = open();
    expect(await journal.read('s1')).toEqual([]);
    await journal.append(entry(1));
    // Durable on resolve: the line is already in the file.
    expect(await fs.readFile(file(), 'utf8')).toBe(`${JSON.stringify(at(1, entry(1)))}\n`);
    expect(await journal.append(entry(2))).toBe(2);
    expect(await journal.read('s1')).toEqual([at(1, entry(1)), at(2, entry(2))]);
  });

  it('preserves call order under 100 concurrent appends', async () => {
    const journal = open();
    const pending = Array.from({ length: 100 }, (_, i) => journal.append(entry(i)));
    await Promise.all(pending);
    const ids = (await journal.read('s1')).map((e) => e.eventId);
    expect(ids).toEqual(Array.from({ length: 100 }, (_, i) => `1-${i}`));
    // And on disk, for a fresh reader.
    await journal.close();
    expect((await open().read('s1')).map((e) => e.eventId)).toEqual(ids);
  });

  it('group-commits a burst: one datasync per batch, and each append resolves only after its batch was synced', async () => {
    const journal = open();
    await journal.append(entry(0)); // the file exists and its handle is open
    // Count the datasyncs of Node's FileHandle (not our code): the batch's sync must finish before its appends resolve.
    const handle = await fs.open(path.join(tmp, 'probe'), 'w');
    const proto = Object.getPrototypeOf(handle) as { datasync(): Promise<void> };
    await handle.close();
    const original = proto.datasync;
    let synced = 0;
    proto.datasync = async function (this: unknown) {
      await original.call(this);
      synced++;
    };
    try {
      const seenAtResolve: number[] = [];
      const pending = Array.from({ length: 200 }, (_, i) =>
        journal.append(entry(i + 1)).then(() => {
          seenAtResolve.push(synced);
        }),
      );
      await Promise.all(pending);
      expect(seenAtResolve.every((n) => n >= 1), 'no append resolved before a datasync finished').toBe(true);
      expect(synced, `${synced} datasyncs for 200 appends`).toBeLessThanOrEqual(3);
      const ids = (await journal.read('s1')).map((e) => e.eventId);
      expect(ids).toEqual(Array.from({ length: 201 }, (_, i) => `1-${i}`));
    } finally {
      proto.datasync = original;
    }
  });

  it('encodes every batch apart: large then small batches, sessions writing at once, one batch beyond the kept buffer', async () => {
    // The journal keeps the buffer a batch was encoded in for the next one (file-journal.ts, #spare):
    // a smaller batch after a larger one, or another session's batch while one is in flight, must
    // never write bytes of another batch.
    const journal = open();
    const sizes = [300_000, 10, 5_000, 1_200_000, 40, 120_000, 1, 400_000, 64];
    const ids = ['s1', 's2', 's3', 's4', 's5', 's6'];
    const text = (id: string, i: number, size: number): string => `${id}:${i}:`.padEnd(size, id);
    const write = async (id: string): Promise<void> => {
      for (const [i, size] of sizes.entries()) {
        // A burst per step (one batch), awaited before the next one, the sessions interleaving.
        await Promise.all([0, 1, 2].map((k) => journal.append(entry(i * 3 + k, { sessionId: id, payload: { text: text(id, i * 3 + k, size) } }))));
      }
    };
    await Promise.all(ids.map(write));
    for (const id of ids) {
      const expected = sizes.flatMap((size, i) => [0, 1, 2].map((k) => `${JSON.stringify(at(i * 3 + k + 1, entry(i * 3 + k, { sessionId: id, payload: { text: text(id, i * 3 + k, size) } })))}\n`));
      expect(await fs.readFile(file(id), 'utf8')).toBe(expected.join(''));
    }
  });

  it('keeps sessions in separate files', async () => {
    const journal = open();
    await Promise.all([journal.append(entry(1)), journal.append(entry(2, { sessionId: 's2' })), journal.append(entry(3))]);
    expect((await journal.read('s1')).map((e) => e.eventId)).toEqual(['1-1', '1-3']);
    expect((await journal.read('s2')).map((e) => e.eventId)).toEqual(['1-2']);
    expect((await fs.readdir(path.join(tmp, 'transcripts'))).sort()).toEqual(['s1.jsonl', 's2.jsonl']);
  });

  it('includes appends that were called but not awaited in read and flush', async () => {
    const journal = open();
    void journal.append(entry(1));
    void journal.append(entry(2));
    expect(await journal.read('s1')).toHaveLength(2);
    void journal.append(entry(3));
    await journal.flush();
    expect((await fs.readFile(file(), 'utf8')).trim().split('\n')).toHaveLength(3);
  });

  it('writes the entry as it was when append was called', async () => {
    const journal = open();
    const e = entry(1);
    const pending = journal.append(e);
    e.type = 'mutated';
    await pending;
    expect((await journal.read('s1'))[0]?.type).toBe('agent_message');
  });

  it('skips a torn last line', async () => {
    await fs.mkdir(path.dirname(file()), { recursive: true });
    const torn = JSON.stringify(entry(3)).slice(0, 20);
    await fs.writeFile(file(), `${JSON.stringify(entry(1))}\n${JSON.stringify(entry(2))}\n${torn}`);
    expect(await open().read('s1')).toEqual([at(1, entry(1)), at(2, entry(2))]);
  });

  it('trims a torn last line before appending after it', async () => {
    await fs.mkdir(path.dirname(file()), { recursive: true });
    await fs.writeFile(file(), `${JSON.stringify(entry(1))}\n{"ts":10`);
    const journal = open();
    await journal.append(entry(2));
    // The old line has no seq (written before seqs existed): it counts by position.
    expect(await journal.read('s1')).toEqual([at(1, entry(1)), at(2, entry(2))]);
    expect(await fs.readFile(file(), 'utf8')).toBe(`${JSON.stringify(entry(1))}\n${JSON.stringify(at(2, entry(2)))}\n`);
  });

  it('rejects an unparseable line in the middle with STORE_CORRUPT', async () => {
    await fs.mkdir(path.dirname(file()), { recursive: true });
    await fs.writeFile(file(), `${JSON.stringify(entry(1))}\nnot json\n${JSON.stringify(entry(3))}\n`);
    const error = await rejection(open().read('s1'));
    expect(isAseError(error, 'STORE_CORRUPT')).toBe(true);
    expect((error as Error).message).toContain(`${file()}:2`);
  });

  it('rejects a valid JSON line that is not a transcript entry', async () => {
    await fs.mkdir(path.dirname(file()), { recursive: true });
    await fs.writeFile(file(), `${JSON.stringify(entry(1))}\n{"hello":"world"}\n`);
    expect(isAseError(await rejection(open().read('s1')), 'STORE_CORRUPT')).toBe(true);
  });

  it('rejects invalid session ids', async () => {
    const journal = open();
    for (const id of ['../x', 'a/b', '', '..']) {
      expect(isAseError(await rejection(journal.append(entry(1, { sessionId: id }))), 'INVALID_INPUT'), `append ${JSON.stringify(id)}`).toBe(true);
      expect(isAseError(await rejection(journal.read(id)), 'INVALID_INPUT'), `read ${JSON.stringify(id)}`).toBe(true);
    }
    expect(await fs.readdir(tmp)).toEqual([]);
  });

  it('rejects with JOURNAL_IO when the file cannot be written, and recovers afterwards', async () => {
    const dir = path.join(tmp, 'transcripts');
    await fs.writeFile(dir, 'a file where the directory should be');
    const journal = open();
    expect(isAseError(await rejection(journal.append(entry(1))), 'JOURNAL_IO')).toBe(true);
    await fs.rm(dir);
    await journal.append(entry(2));
    expect(await journal.read('s1')).toEqual([at(1, entry(2))]);
  });

  it('delete removes one session file after the appends already called; a later append starts afresh', async () => {
    const journal = open();
    await journal.append(entry(1, { sessionId: 's2' }));
    const pending = [journal.append(entry(1)), journal.append(entry(2))];
    await journal.delete('s1');
    await Promise.all(pending);
    await expect(fs.stat(file())).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await journal.read('s1')).toEqual([]);
    expect(await journal.read('s2')).toHaveLength(1);
    await journal.delete('s1'); // nothing there: not an error
    await journal.delete('never'); // dir exists, file does not
    await new FileJournal({ dir: path.join(tmp, 'absent') }).delete('s1'); // no dir at all
    await journal.append(entry(3));
    expect(await journal.read('s1')).toEqual([at(1, entry(3))]);
    expect(isAseError(await rejection(journal.delete('../x')), 'INVALID_INPUT')).toBe(true);
  });

  it('reopens after close', async () => {
    const journal = open();
    await journal.append(entry(1));
    await journal.close();
    await journal.append(entry(2));
    expect(await journal.read('s1')).toEqual([at(1, entry(1)), at(2, entry(2))]);
  });
});

describe('MemoryJournal', () => {
  it('reads back appends in order, per session', async () => {
    const journal = new MemoryJournal();
    expect(await journal.read('s1')).toEqual([]);
    await Promise.all([journal.append(entry(1)), journal.append(entry(2, { sessionId: 's2' })), journal.append(entry(3))]);
    await journal.flush();
    expect(await journal.read('s1')).toEqual([at(1, entry(1)), at(2, entry(3))]);
    expect(await journal.read('s2')).toEqual([at(1, entry(2, { sessionId: 's2' }))]);
  });

  it('returns copies, so callers cannot rewrite history', async () => {
    const journal = new MemoryJournal();
    const e = entry(1);
    await journal.append(e);
    e.type = 'mutated';
    const read = await journal.read('s1');
    read[0]!.type = 'mutated too';
    read.push(entry(9));
    expect(await journal.read('s1')).toEqual([at(1, entry(1))]);
  });

  it('delete forgets a session', async () => {
    const journal = new MemoryJournal();
    await journal.append(entry(1));
    await journal.append(entry(2, { sessionId: 's2' }));
    await journal.delete('s1');
    expect(await journal.read('s1')).toEqual([]);
    expect(await journal.read('s2')).toHaveLength(1);
  });
});

describeJournalConformance('FileJournal', () => open());
describeJournalConformance('MemoryJournal', () => new MemoryJournal());

describe('FileJournal seq across restarts and hosts', () => {
  it('continues after a restart, and after another writer appended to the same file', async () => {
    const first = open();
    await first.append(entry(1));
    await first.append(entry(2));
    await first.close();
    const second = open();
    expect(await second.append(entry(3))).toBe(3);
    // Another host (another FileJournal on the same dir) takes over while `second` keeps its handle open.
    const other = open();
    expect(await other.append(entry(4))).toBe(4);
    expect(await other.append(entry(5))).toBe(5);
    expect(await second.append(entry(6))).toBe(6);
    expect((await open().read('s1')).map((e) => [e.eventId, e.seq])).toEqual([1, 2, 3, 4, 5, 6].map((n) => [`1-${n}`, n]));
  });

  it('numbers a line whose seq does not grow (two writers despite the lease) after its predecessor, as the writer does', async () => {
    await fs.mkdir(path.dirname(file()), { recursive: true });
    await fs.writeFile(file(), `${JSON.stringify(at(2, entry(1)))}\n${JSON.stringify(at(2, entry(2)))}\n`);
    const journal = open();
    expect((await journal.read('s1')).map((e) => e.seq)).toEqual([2, 3]);
    expect(await journal.append(entry(3))).toBe(4);
  });
});

describe('MemoryJournal retention', () => {
  it('drops the oldest beyond maxEntriesPerSession and never reuses their seqs', async () => {
    const journal = new MemoryJournal({ maxEntriesPerSession: 3 });
    for (let i = 1; i <= 5; i++) await journal.append(entry(i));
    expect((await journal.read('s1')).map((e) => e.seq)).toEqual([3, 4, 5]);
    expect(await journal.bounds('s1')).toEqual({ firstSeq: 3, lastSeq: 5 });
    expect(await journal.append(entry(6))).toBe(6);
  });
});
