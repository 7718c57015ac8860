/**
 * The SIGKILL soak: one session, driven by a chain of real host processes
 * (test/support/durable-host.mjs, the library from dist/ on a FileStore and FileJournal), each
 * SIGKILLed at a random moment: at a random time, right after a send's promise resolved, while a
 * permission request waits for its answer, or right after it opened the session. Each next host
 * restores the session from what the dead one left (its lock and lease are taken at once: the pid
 * is dead). A last host lets everything queued go out and stops cleanly. Then, from the files alone:
 * - lost: a send whose promise resolved that never reached the agent;
 * - duplicated: a message the agent was handed twice (or journaled twice without a confirmed
 *   non-delivery in between);
 * - unclosed: a `user_message` in the transcript without a later `turn_complete`/`turn_ended`;
 * all three must be 0. The agent is the fake engine with a durable log of what it was handed (what
 * a resume token gives a real agent), so "reached the agent" is a fact, not a guess.
 *
 * SOAK_KILLS sets the number of kills (default 15: each moment three times, random six; 20 s
 * alone at load 4 on 2 cores); `npm run soak` runs 300. Under load it is far slower: 24 kills took 182 s
 * at load 15 and 230 s at load 38 on 2 cores, hence the budget of 20 s a kill (a bound on a
 * failure, not a wait).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileJournal, FileStore, type TranscriptEntry } from '../../src/index.js';
import { Host } from '../support/durable-host.js';

const KILLS = Number(process.env['SOAK_KILLS'] ?? 15);
const MOMENTS = ['random', 'after-resolve', 'at-ask', 'random', 'at-open'] as const;
type Moment = (typeof MOMENTS)[number];

/** What the hosts' random clients may be told (a decision racing an abort, an abort with no turn): not failures. */
const REFUSALS = new Set(['PERMISSION_ALREADY_DECIDED', 'PERMISSION_NOT_FOUND', 'NOTHING_TO_ABORT']);

let dataDir: string;
let failed = true;
afterAll(async () => {
  // A failed soak keeps its files (the path is printed) to be read afterwards.
  if (dataDir && !failed) await fs.rm(dataDir, { recursive: true, force: true });
  else if (dataDir) console.log(`SIGKILL soak: files kept in ${dataDir}`);
});

const lines = async (file: string) =>
  (await fs.readFile(file, 'utf8').catch(() => ''))
    .split('\n')
    .filter((l) => l !== '');

/** Runs one host until the chosen moment, then SIGKILLs it. Returns what the moment turned out to be. */
async function runAndKill(i: number, moment: Moment): Promise<string> {
  const h = await Host.start('soak', { dataDir, sessionId: 'soak', tag: `h${i}` });
  try {
    // A host is a fresh node process loading dist/: on a loaded 2-core machine that alone took
    // longer than waitFor's default 15 s. The wait ends as soon as the host reports.
    await h.waitFor((r) => r['ready'] === true || 'fatal' in r, 'the session to open', 60_000);
    const fatal = h.reports.find((r) => 'fatal' in r);
    if (fatal) throw new Error(`host ${i} failed to open the session: ${String(fatal['fatal'])}`);
    let landed: string = moment;
    if (moment === 'random') {
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 300));
    } else if (moment === 'after-resolve') {
      const k = 1 + Math.floor(Math.random() * 3);
      let seen = 0;
      const resolved = new Promise<void>((resolve) => h.onReport((r) => r['resolved'] !== undefined && ++seen === k && (h.signal('SIGKILL'), resolve())));
      await Promise.race([resolved, new Promise((resolve) => setTimeout(resolve, 2_000)).then(() => (landed = 'after-resolve (timed out: random)'))]);
    } else if (moment === 'at-ask') {
      const asked = new Promise<void>((resolve) => h.onReport((r) => r['prompt'] !== undefined && (h.signal('SIGKILL'), resolve())));
      await Promise.race([asked, new Promise((resolve) => setTimeout(resolve, 2_000)).then(() => (landed = 'at-ask (timed out: random)'))]);
    }
    await h.kill();
    const unexpected = h.reports.filter((r) => (r['error'] !== undefined && !REFUSALS.has(String(r['error']))) || 'fatal' in r);
    expect(unexpected, `host ${i} reported failures`).toEqual([]);
    return landed;
  } finally {
    await h.kill();
  }
}

describe('SIGKILL soak', () => {
  it(`${KILLS} hosts killed at random moments: 0 lost, 0 duplicated, every turn closed`, { timeout: Math.max(480_000, KILLS * 20_000) }, async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-soak-'));
    const started = Date.now();
    const moments = new Map<string, number>();
    for (let i = 0; i < KILLS; i++) {
      const landed = await runAndKill(i, MOMENTS[i % MOMENTS.length]!);
      moments.set(landed, (moments.get(landed) ?? 0) + 1);
    }

    // The last host: sends nothing, lets the queue and any unconfirmed message go out, stops.
    const last = await Host.start('soak', { dataDir, sessionId: 'soak', tag: 'final', final: true });
    const done = await last.waitFor((r) => r['done'] === true || r['stuck'] !== undefined || 'fatal' in r, 'the last host to finish', 120_000);
    expect(done, JSON.stringify(last.reports.slice(-5))).toMatchObject({ done: true, phase: 'stopped', queue: 0, requests: 0 });
    expect(last.reports.filter((r) => r['error'] !== undefined && !REFUSALS.has(String(r['error'])))).toEqual([]);
    await last.exited;
    const elapsed = Date.now() - started;

    // ---- what the files say
    const resolved = await lines(path.join(dataDir, 'resolved.log'));
    const handed = await lines(path.join(dataDir, 'agent.log'));
    const timesHanded = new Map<string, number>();
    for (const id of handed) timesHanded.set(id, (timesHanded.get(id) ?? 0) + 1);
    const journal = new FileJournal({ dir: path.join(dataDir, 'transcripts') });
    const entries = await journal.read('soak');
    const payload = (e: TranscriptEntry) => e.payload as { localId?: string; status?: string; received?: boolean | null };

    const lost = resolved.filter((id) => !timesHanded.has(id));
    const duplicatedAtAgent = [...timesHanded].filter(([, n]) => n > 1).map(([id]) => id);
    // In the transcript a message may be journaled twice only if a check in between found the agent never got it.
    const journaled = new Map<string, number>();
    for (const e of entries) {
      const id = payload(e).localId;
      if (id === undefined) continue;
      if (e.type === 'user_message') journaled.set(id, (journaled.get(id) ?? 0) + 1);
      if (e.type === 'delivery_checked' && payload(e).received === false) journaled.set(id, (journaled.get(id) ?? 0) - 1);
    }
    const duplicatedInJournal = [...journaled].filter(([, n]) => n > 1).map(([id]) => id);
    const unclosed = entries.flatMap((e, i) => {
      if (e.type !== 'user_message') return [];
      const id = payload(e).localId;
      const closed = entries.slice(i + 1).some((later) => (later.type === 'turn_complete' || later.type === 'turn_ended') && payload(later).localId === id);
      return closed ? [] : [`${id} (${e.eventId})`];
    });
    const ids = new Set(entries.map((e) => e.eventId));

    const stored = (await new FileStore({ dir: path.join(dataDir, 'sessions') }).load('soak'))!.state;
    const count = (type: string, match: (e: TranscriptEntry) => boolean = () => true) => entries.filter((e) => e.type === type && match(e)).length;
    const checks = (received: boolean | null) => count('delivery_checked', (e) => payload(e).received === received);
    console.log(
      `SIGKILL soak: ${KILLS} kills in ${(elapsed / 1000).toFixed(1)} s (${[...moments].map(([m, n]) => `${m} ${n}`).join(', ')}); ` +
        `${resolved.length} sends resolved, ${handed.length} handed to the agent, ${count('turn_complete')} turns completed, ` +
        `${count('turn_ended', (e) => payload(e).status === 'interrupted')} interrupted by a kill, ${count('permission_request')} permission asks; ` +
        `delivery checks: ${checks(true)} received, ${checks(false)} not received (sent again), ${checks(null)} unknown; ` +
        `generation ${stored.gen}; lost ${lost.length}, duplicated ${duplicatedAtAgent.length} (agent) / ${duplicatedInJournal.length} (journal), unclosed ${unclosed.length}`,
    );

    // The soak exercised what it is about: sends got through, and kills landed mid-turn.
    expect(resolved.length, 'the hosts got sends through').toBeGreaterThanOrEqual(KILLS / 4);
    expect(count('turn_ended', (e) => payload(e).status === 'interrupted'), 'turns interrupted by a kill').toBeGreaterThan(0);
    expect(lost, 'resolved sends that never reached the agent').toEqual([]);
    expect(duplicatedAtAgent, 'messages handed to the agent twice').toEqual([]);
    expect(duplicatedInJournal, 'messages journaled twice').toEqual([]);
    expect(unclosed, 'turns without an end').toEqual([]);
    expect(ids.size, 'transcript ids are unique').toBe(entries.length);
    expect(stored).toMatchObject({ phase: 'stopped', queue: [], requests: {} });
    expect(stored.turn).toBeUndefined();
    expect(stored.unconfirmed).toBeUndefined();
    // Every resolved send was delivered exactly once, and nothing is left to deliver.
    for (const id of resolved) expect(timesHanded.get(id), id).toBe(1);
    failed = false;
  });
});
