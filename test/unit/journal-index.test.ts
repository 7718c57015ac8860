/**
 * FileJournal reads by seq through its sparse index (src/effects/journal/seq-index.ts): every range
 * read must equal what a naive whole-file parse and `selectRange` give, across checkpoints, with
 * lines from before seqs existed, seqs that jump, another journal instance appending (another host),
 * a torn tail, a file deleted and written again, and a corrupt line in the middle.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAseError } from '../../src/errors.js';
import type { TranscriptEntry } from '../../src/events/transcript-entry.js';
import { FileJournal } from '../../src/effects/journal/file-journal.js';
import { CHECKPOINT_EVERY } from '../../src/effects/journal/seq-index.js';
import { selectRange, type JournalRange } from '../../src/effects/journal/transcript-journal.js';
import { rejection } from '../support/async.js';

const entry = (n: number, text = `m${n}`): TranscriptEntry => ({ ts: 1000 + n, sessionId: 's1', agent: 'fake', gen: 1, eventId: `1-${n}`, type: 'agent_message', payload: { text } });

let tmp: string;
const journals: FileJournal[] = [];
beforeEach(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-journal-index-'));
});
afterEach(async () => {
  await Promise.all(journals.splice(0).map((j) => j.close()));
  await fs.rm(tmp, { recursive: true, force: true });
});
const open = (): FileJournal => {
  const journal = new FileJournal({ dir: path.join(tmp, 'transcripts') });
  journals.push(journal);
  return journal;
};
const file = (): string => path.join(tmp, 'transcripts', 's1.jsonl');

/** The file parsed whole, the way FileJournal read it before it had an index. */
async function naive(): Promise<(TranscriptEntry & { seq: number })[]> {
  const lines = (await fs.readFile(file(), 'utf8')).split('\n');
  if (lines.at(-1) === '') lines.pop();
  const out: (TranscriptEntry & { seq: number })[] = [];
  let last = 0;
  for (const [i, line] of lines.entries()) {
    let data: TranscriptEntry;
    try {
      data = JSON.parse(line) as TranscriptEntry;
    } catch {
      if (i === lines.length - 1) break;
      throw new Error('corrupt');
    }
    const seq = typeof data.seq === 'number' && data.seq > last ? data.seq : last + 1;
    last = seq;
    out.push({ ...data, seq });
  }
  return out;
}

/** Ranges around every interesting place: the ends, checkpoint edges, gaps. */
function ranges(lastSeq: number): JournalRange[] {
  const points = [0, 1, 2, CHECKPOINT_EVERY - 1, CHECKPOINT_EVERY, CHECKPOINT_EVERY + 1, 2 * CHECKPOINT_EVERY, Math.floor(lastSeq / 2), lastSeq - 1, lastSeq, lastSeq + 1, lastSeq + 50];
  const out: JournalRange[] = [{}, { limit: 0 }];
  for (const p of points) {
    for (const limit of [undefined, 1, 7, CHECKPOINT_EVERY, 3 * CHECKPOINT_EVERY + 5, 500]) {
      out.push({ afterSeq: p, ...(limit !== undefined && { limit }) });
      out.push({ beforeSeq: p, ...(limit !== undefined && { limit }) });
      out.push({ afterSeq: Math.max(0, p - 40), beforeSeq: p, ...(limit !== undefined && { limit }) });
    }
  }
  return out;
}

async function expectMatchesNaive(journal: FileJournal): Promise<void> {
  const all = await naive();
  const lastSeq = all.at(-1)?.seq ?? 0;
  for (const range of ranges(lastSeq)) {
    const expected = selectRange(all, range);
    expect(await journal.read('s1', range), JSON.stringify(range)).toEqual(expected);
    // The same entries as JSON text (what an event stream sends), one line each.
    const json = await journal.readJson('s1', range);
    expect(json.map((e) => ({ ...(JSON.parse(e.json) as object), seq: e.seq })), `readJson ${JSON.stringify(range)}`).toEqual(expected);
    for (const e of json) expect(e.json).not.toMatch(/[\r\n]/);
  }
  expect(await journal.bounds('s1')).toEqual({ firstSeq: all[0]?.seq ?? 0, lastSeq });
}

describe('FileJournal: reads by seq through the index', () => {
  it('every range equals a whole-file parse, across checkpoints, as the file grows', async () => {
    const journal = open();
    for (let n = 1; n <= 5 * CHECKPOINT_EVERY + 3; n++) void journal.append(entry(n));
    await journal.flush();
    await expectMatchesNaive(journal);
    // Grown after the index was built: the new lines are indexed too.
    for (let n = 0; n < CHECKPOINT_EVERY + 1; n++) await journal.append(entry(1000 + n, `a line with "seq":${n}} inside and a newline\n in it`));
    await expectMatchesNaive(journal);
  });

  it('long lines get checkpoints by bytes too: a backward page of a few entries reads a few entries', async () => {
    const journal = open();
    for (let n = 1; n <= 200; n++) void journal.append(entry(n, n % 10 === 0 ? 'L'.repeat(200_000) : `m${n}`));
    await journal.flush();
    const all = await naive();
    for (const range of [{ beforeSeq: 201, limit: 3 }, { beforeSeq: 101, limit: 70 }, { afterSeq: 95, limit: 10 }, { afterSeq: 150, beforeSeq: 171 }, { beforeSeq: 12, limit: 500 }]) {
      expect(await journal.read('s1', range), JSON.stringify(range)).toEqual(selectRange(all, range));
    }
    expect(await journal.bounds('s1')).toEqual({ firstSeq: 1, lastSeq: 200 });
  });

  it('lines from before seqs existed, seqs that jump, and a seq not at the end of its line', async () => {
    const lines: string[] = [];
    for (let n = 1; n <= 100; n++) lines.push(JSON.stringify(entry(n))); // no seq: by position
    lines.push(JSON.stringify({ ...entry(101), seq: 500 })); // jumps
    lines.push(JSON.stringify({ seq: 501, ...entry(102) })); // seq first (not where the journal writes it)
    lines.push(JSON.stringify({ ...entry(103), seq: 7 })); // does not grow: counts as 502
    for (let n = 104; n <= 300; n++) lines.push(JSON.stringify(entry(n)));
    await fs.mkdir(path.dirname(file()), { recursive: true });
    await fs.writeFile(file(), `${lines.join('\n')}\n`);
    const journal = open();
    await expectMatchesNaive(journal);
    expect(await journal.append(entry(301))).toBe(700);
    await expectMatchesNaive(journal);
  });

  it('sees what another journal instance (another host) appended, and a torn tail', async () => {
    const mine = open();
    const theirs = open();
    for (let n = 1; n <= 150; n++) await mine.append(entry(n));
    await expectMatchesNaive(mine);
    for (let n = 151; n <= 300; n++) await theirs.append(entry(n));
    await expectMatchesNaive(mine);
    expect((await mine.read('s1', { beforeSeq: 301, limit: 2 })).map((e) => e.seq)).toEqual([299, 300]);
    // A crash mid-append of the other host: half a line at the end is skipped, not an error.
    await fs.appendFile(file(), JSON.stringify(entry(301)).slice(0, 30));
    await expectMatchesNaive(mine);
    expect((await mine.bounds('s1')).lastSeq).toBe(300);
    // The next writer (the host that takes the session over) trims it and goes on from 300.
    await theirs.close();
    await mine.close();
    const next = open();
    expect(await next.append(entry(302))).toBe(301);
    await expectMatchesNaive(mine);
    await expectMatchesNaive(next);
  });

  it('a file deleted and written again, or replaced by a shorter one, is indexed anew', async () => {
    const journal = open();
    for (let n = 1; n <= 200; n++) await journal.append(entry(n));
    expect((await journal.read('s1', { afterSeq: 150, limit: 1 }))[0]?.seq).toBe(151);
    await journal.delete('s1');
    for (let n = 1; n <= 3; n++) await journal.append(entry(n));
    await expectMatchesNaive(journal);
    // Replaced behind the journal's back by another file of a different length.
    const other = Array.from({ length: 70 }, (_, i) => JSON.stringify({ ...entry(i + 1), seq: i + 1 })).join('\n');
    await fs.writeFile(`${file()}.new`, `${other}\n`);
    await fs.rename(`${file()}.new`, file());
    await expectMatchesNaive(journal);
  });

  it('readJson hands over a line as stored when it is what read returns, else that entry stringified', async () => {
    const stored = (n: number, text: string) => `{"ts":1.5e3,"sessionId":"s1","agent":"fake","gen":1,"eventId":"1-${n}","type":"agent_message","payload":{"text":"${text}"},"seq":${n}}`;
    const lines = [
      stored(1, 'as stored'), // kept as it is: the number spelled 1.5e3 shows no stringify ran
      `{"ts":1,"sessionId":"s1","agent":"fake","gen":1,"eventId":"1-2","type":"agent_message","payload":{},"extra":"dropped","seq":2}`, // a key read drops
      `{"ts":1,"sessionId":"s1","agent":"fake","gen":1,"eventId":"1-3","type":"tool_call","payload":{"name":"Bash"},"seq":3}`, // upgraded by read
      `{"ts":1,"sessionId":"s1","agent":"fake","gen":1,"eventId":"1-4",\r"type":"agent_message","payload":{},"seq":4}`, // a CR: an SSE line break
      `{"ts":1,"sessionId":"s1","agent":"fake","gen":1,"eventId":"1-5","type":"agent_message","payload":{},"seq":2}`, // seq not growing: it is 5
      `{"ts":1,"sessionId":"s1","agent":"fake","gen":1,"eventId":"1-6","type":"agent_message","payload":{}}`, // no seq: 6 by position
      stored(7, 'as stored too'),
    ];
    await fs.mkdir(path.dirname(file()), { recursive: true });
    await fs.writeFile(file(), `${lines.join('\n')}\n`);
    const journal = open();
    const json = await journal.readJson('s1');
    expect(json.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(json[0]!.json).toBe(lines[0]);
    expect(json[6]!.json).toBe(lines[6]);
    const read = await journal.read('s1');
    for (const [i, e] of json.entries()) {
      expect(JSON.parse(e.json), `line ${i + 1}`).toEqual(read[i]);
      if (i >= 1 && i <= 5) expect(e.json, `line ${i + 1}`).toBe(JSON.stringify(read[i]));
    }
    expect(JSON.parse(json[2]!.json)).toMatchObject({ payload: { toolName: 'Bash' } });
    // A corrupt line inside the range is refused as read refuses it.
    await fs.appendFile(file(), `{"not json\n${stored(9, 'after')}\n`);
    const error = await rejection(open().readJson('s1', { afterSeq: 6 }));
    expect(isAseError(error, 'STORE_CORRUPT')).toBe(true);
    expect((error as Error).message).toContain('s1.jsonl:8');
  });

  it('a corrupt line in the middle is STORE_CORRUPT with its line number', async () => {
    const journal = open();
    for (let n = 1; n <= 100; n++) await journal.append(entry(n));
    await journal.close();
    const lines = (await fs.readFile(file(), 'utf8')).split('\n');
    lines[79] = '{"not json';
    await fs.writeFile(file(), lines.join('\n'));
    const error = await rejection(open().read('s1'));
    expect(isAseError(error, 'STORE_CORRUPT')).toBe(true);
    expect((error as Error).message).toContain('s1.jsonl:80');
  });
});
