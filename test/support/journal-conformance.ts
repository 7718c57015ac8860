/**
 * The conformance suite every TranscriptJournal passes (File and Memory in test/unit/journal.test.ts,
 * Postgres in test/integration/postgres-store.test.ts): seqs numbered per session from 1, ranges and
 * backward paging, bounds, call order under concurrency, read-your-writes, copies, watchers, delete,
 * and `appendMany` (or its fallback, `appendEntries`, for a journal without it).
 *
 * `make()` builds a fresh, empty journal.
 */
import { describe, expect, it } from 'vitest';
import { isAseError } from '../../src/errors.js';
import type { TranscriptEntry } from '../../src/events/transcript-entry.js';
import { appendEntries, readJsonEntries, type TranscriptJournal } from '../../src/effects/journal/transcript-journal.js';

export function journalEntry(n: number, overrides: Partial<TranscriptEntry> = {}): TranscriptEntry {
  return { ts: 1000 + n, sessionId: 's1', agent: 'fake', gen: 1, eventId: `1-${n}`, type: 'agent_message', payload: { text: `m${n}` }, ...overrides };
}

type WatchingJournal = TranscriptJournal & Required<Pick<TranscriptJournal, 'watch' | 'watchStarted' | 'bounds' | 'delete'>>;

export function describeJournalConformance(name: string, make: () => WatchingJournal): void {
  describe(`${name} (TranscriptJournal conformance)`, () => {
    it('numbers each session from 1, replaces a seq given, and reads ranges', async () => {
      const journal = make();
      for (let i = 1; i <= 10; i++) expect(await journal.append({ ...journalEntry(i), seq: 99 })).toBe(i);
      expect(await journal.append(journalEntry(1, { sessionId: 's2' }))).toBe(1);
      const seqs = async (range: Parameters<typeof journal.read>[1]) => (await journal.read('s1', range)).map((e) => e.seq);
      expect(await seqs(undefined)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(await seqs({ afterSeq: 7 })).toEqual([8, 9, 10]);
      expect(await seqs({ afterSeq: 2, limit: 3 })).toEqual([3, 4, 5]);
      expect(await seqs({ beforeSeq: 4 })).toEqual([1, 2, 3]);
      // Backward paging: the newest before the cursor, still ascending.
      expect(await seqs({ beforeSeq: 9, limit: 2 })).toEqual([7, 8]);
      expect(await seqs({ afterSeq: 3, beforeSeq: 6 })).toEqual([4, 5]);
      expect(await seqs({ afterSeq: 10 })).toEqual([]);
      expect(await journal.bounds('s1')).toEqual({ firstSeq: 1, lastSeq: 10 });
      expect(await journal.bounds('none')).toEqual({ firstSeq: 0, lastSeq: 0 });
    });

    it('reads back exactly what was appended, with its seq', async () => {
      const journal = make();
      const odd = journalEntry(1, { payload: { text: 'nul \u0000, emoji \u{1F600}, quote " and \\ backslash', nested: { list: [1, 2.5, null, true] } } });
      await journal.append(odd);
      expect(await journal.read('s1')).toEqual([{ ...odd, seq: 1 }]);
    });

    it('as JSON text (readJsonEntries: the journal\'s readJson, else read and stringify): the same entries, one line each', async () => {
      const journal = make();
      await journal.append(journalEntry(1, { payload: { text: 'two\nlines\r\n, emoji \u{1F600}, \u2028' } }));
      for (let i = 2; i <= 6; i++) await journal.append(journalEntry(i));
      for (const range of [undefined, { afterSeq: 2, limit: 2 }, { beforeSeq: 6, limit: 3 }]) {
        const json = await readJsonEntries(journal, 's1', range);
        expect(json.map((e) => ({ ...(JSON.parse(e.json) as object), seq: e.seq }))).toEqual(await journal.read('s1', range));
        for (const e of json) expect(e.json).not.toMatch(/[\r\n]/);
      }
    });

    it('preserves call order under 100 concurrent appends, and reads include appends not yet awaited', async () => {
      const journal = make();
      const pending = Array.from({ length: 100 }, (_, i) => journal.append(journalEntry(i)));
      const ids = (await journal.read('s1')).map((e) => e.eventId);
      expect(ids).toEqual(Array.from({ length: 100 }, (_, i) => `1-${i}`));
      expect(await Promise.all(pending)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
      await journal.flush();
    });

    it('writes the entry as it was when append was called', async () => {
      const journal = make();
      const e = journalEntry(1);
      const pending = journal.append(e);
      e.type = 'mutated';
      await pending;
      expect((await journal.read('s1'))[0]?.type).toBe('agent_message');
    });

    it('tells watchers each entry once it is durable, with its seq, per session', async () => {
      const journal = make();
      const heard: [string, number | undefined][] = [];
      const stop = journal.watch('s1', (e) => heard.push([e.eventId, e.seq]));
      await journal.append(journalEntry(1));
      await journal.append(journalEntry(2, { sessionId: 's2' }));
      await journal.append(journalEntry(3));
      stop();
      await journal.append(journalEntry(4));
      expect(heard).toEqual([['1-1', 1], ['1-3', 2]]);
    });

    it('watchStarted resolves for a watched session and one nobody watches; what is appended after it is heard', async () => {
      const journal = make();
      await journal.append(journalEntry(1));
      await journal.watchStarted('nobody-watches');
      const heard: number[] = [];
      const stop = journal.watch('s1', (e) => heard.push(e.seq));
      await journal.watchStarted('s1');
      await journal.append(journalEntry(2));
      stop();
      expect(heard).toEqual([2]);
    });

    it('appendMany: entries in call order among single appends, their seqs once durable, as they were when called; watchers hear each', async () => {
      const journal = make();
      expect(journal.appendMany, 'every journal of ours has appendMany').toBeTypeOf('function');
      const heard: (number | undefined)[] = [];
      const stop = journal.watch('s1', (e) => heard.push(e.seq));
      const many = Array.from({ length: 5 }, (_, i) => journalEntry(i + 2, { seq: 99 }));
      const first = journal.append(journalEntry(1));
      const batch = journal.appendMany!(many);
      const last = journal.append(journalEntry(7));
      many[0]!.type = 'mutated';
      many.push(journalEntry(100)); // added after the call: not part of it
      expect(await batch).toEqual([2, 3, 4, 5, 6]);
      expect([await first, await last]).toEqual([1, 7]);
      expect(await journal.appendMany!([])).toEqual([]);
      const read = await journal.read('s1');
      expect(read.map((e) => [e.eventId, e.seq])).toEqual(Array.from({ length: 7 }, (_, i) => [`1-${i + 1}`, i + 1]));
      expect(read[1]?.type).toBe('agent_message');
      stop();
      expect(heard).toEqual([1, 2, 3, 4, 5, 6, 7]);
    });

    it('appendMany refuses entries of two sessions, or one its append refuses, with INVALID_INPUT and appends none of them', async () => {
      const journal = make();
      await journal.append(journalEntry(1));
      const refused = async (call: () => Promise<unknown>) => {
        let error: unknown;
        try {
          await call();
        } catch (e) {
          error = e;
        }
        return isAseError(error, 'INVALID_INPUT');
      };
      expect(await refused(() => journal.appendMany!([journalEntry(2), journalEntry(3, { sessionId: 's2' })]))).toBe(true);
      // An entry the journal's own append refuses (a BigInt: not JSON) refuses the whole call; the
      // MemoryJournal keeps any value, and then so may appendMany.
      const bad = journalEntry(3, { payload: { n: 1n } });
      if (await refused(() => journal.append({ ...bad, sessionId: 'probe' }))) expect(await refused(() => journal.appendMany!([journalEntry(2), bad]))).toBe(true);
      expect(await refused(() => journal.appendMany!('not entries' as never))).toBe(true);
      expect((await journal.read('s1')).map((e) => e.seq)).toEqual([1]);
      expect(await journal.read('s2')).toEqual([]);
      expect(await journal.appendMany!([journalEntry(2)])).toEqual([2]);
    });

    it('appendEntries falls back to one append per entry for a journal without appendMany, in call order', async () => {
      const journal = make();
      const plain: TranscriptJournal = { append: (e, o) => journal.append(e, o), read: (id, r) => journal.read(id, r), flush: () => journal.flush() };
      const batch = appendEntries(plain, [journalEntry(1), journalEntry(2)]);
      const next = plain.append(journalEntry(3));
      expect(await batch).toEqual([1, 2]);
      expect(await next).toBe(3);
      expect(await appendEntries(journal, [journalEntry(4), journalEntry(5)])).toEqual([4, 5]);
    });

    it('delete removes one session after the appends already called; a later append starts afresh', async () => {
      const journal = make();
      await journal.append(journalEntry(1, { sessionId: 's2' }));
      void journal.append(journalEntry(1));
      void journal.append(journalEntry(2));
      await journal.delete('s1');
      expect(await journal.read('s1')).toEqual([]);
      expect(await journal.bounds('s1')).toEqual({ firstSeq: 0, lastSeq: 0 });
      expect(await journal.append(journalEntry(3))).toBe(1);
      expect((await journal.read('s2')).map((e) => e.seq)).toEqual([1]);
      await journal.delete('never-written');
    });
  });
}
