/**
 * The rollout tailer against the REAL pinned Codex binaries (loopback mock only):
 * - legacy dialect: codex 0.153.4 `mcp-server`; paginated dialect: codex 0.169.0 `app-server`;
 * - the tailer follows the live rollout from the moment its path is known (the file does not
 *   exist yet), through five turns (text + reasoning, three tool calls, an interrupted turn, a
 *   text turn, a failed turn);
 * - it must report exactly the events a one-shot read of the final file reports, and exactly the
 *   dedupe keys (and texts) of the live protocol stream, so EventDeduper suppresses every tailed copy.
 *
 * Fixtures: `UPDATE_CODEX_ROLLOUT_FIXTURES=1` (or a missing file) writes the run's rollout and
 * JSON-RPC traffic, paths anonymised to /ROOT, to test/fixtures/codex/rollout/ — the files the
 * unit tests replay (test/unit/codex-rollout-*.test.ts).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dedupeKeyString, EventDeduper, readRollout, tailRollout, type RolloutTailer, type TailedEvent } from '../../src/engines/codex/rollout/index.js';
import { startOpenAIResponsesMock, type OpenAIResponsesMock } from '../mocks/openai-responses-mock.js';
import { hermeticCodex, type CodexVersion } from '../support/codex-hermetic.js';
import { liveKeysFromAppServer, liveKeysFromMcp, type LiveKeys } from '../support/codex-live-keys.js';
import { runLegacyScenario, runPaginatedScenario, type ScenarioRun } from '../support/codex-rollout-scenarios.js';
import type { TrafficEntry } from '../support/jsonrpc-child.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const ROLLOUT_FIXTURE_DIR = join(repoRoot, 'test', 'fixtures', 'codex', 'rollout');
const UPDATE = process.env.UPDATE_CODEX_ROLLOUT_FIXTURES === '1';

interface DialectCase {
  dialect: 'legacy' | 'paginated';
  version: CodexVersion;
  fixture: string;
  run: typeof runLegacyScenario;
  liveKeys: (traffic: TrafficEntry[]) => LiveKeys;
}

const CASES: DialectCase[] = [
  { dialect: 'legacy', version: '0.153.4', fixture: 'legacy-mcp-server-0.153.4', run: runLegacyScenario, liveKeys: liveKeysFromMcp },
  { dialect: 'paginated', version: '0.169.0', fixture: 'paginated-app-server-0.169.0', run: runPaginatedScenario, liveKeys: liveKeysFromAppServer },
];

/** Path-anonymised copy of a run's text (the temp root becomes /ROOT). */
function anonymise(text: string, root: string): string {
  return text.split(root).join('/ROOT');
}

function textOf(event: TailedEvent): string {
  const e = event.event;
  return e.type === 'message' ? e.blocks.map((b) => ('text' in b ? b.text : '')).join('') : '';
}

describe('rollout tailer on real codex rollouts', () => {
  let mock: OpenAIResponsesMock;
  let root: string;
  let tailer: RolloutTailer | undefined;

  beforeEach(async () => {
    mock = await startOpenAIResponsesMock();
    root = mkdtempSync(join(tmpdir(), 'ase-codex-rollout-'));
  });

  afterEach(async () => {
    await tailer?.close();
    tailer = undefined;
    await mock.close();
    rmSync(root, { recursive: true, force: true });
  });

  it.each(CASES.map((c) => [c.dialect, c] as const))('%s: live tail = final file = live protocol stream', async (_name, c) => {
    const h = hermeticCodex({ root, baseUrl: mock.providerBaseUrl, target: c.version });
    const tailed: TailedEvent[] = [];
    const waiters: Array<() => void> = [];
    let existedAtStart: boolean | undefined;
    const started = performance.now();

    const run: ScenarioRun = await c.run({
      mock,
      h,
      onRolloutPath: (path) => {
        existedAtStart = existsSync(path);
        tailer = tailRollout({
          path,
          pollIntervalMs: 50,
          onEvent: (event) => {
            tailed.push(event);
            for (const w of waiters.splice(0)) w();
          },
        });
      },
    });
    const scenarioMs = performance.now() - started;
    // app-server returns thread.path before the first turn creates the file: the tailer waited for it.
    // (MCP's session_configured races the file's creation, so either is possible there.)
    if (c.dialect === 'paginated') expect(existedAtStart).toBe(false);
    expect(existedAtStart).toBeDefined();

    // Rollout lines land ~10–20 ms after the live event: wait for the last turn's end, not a timer.
    const lastTurnEnded = () => tailed.filter((e) => e.event.type === 'turn_complete').length === 5;
    const deadline = Date.now() + 10_000;
    while (!lastTurnEnded() && Date.now() < deadline) {
      await new Promise<void>((r) => {
        const t = setTimeout(r, 500);
        waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
    expect(lastTurnEnded()).toBe(true);
    await tailer!.catchUp();
    await tailer!.close();

    // 1. Following the live file = reading the finished file once.
    const final = await readRollout(run.rolloutPath);
    expect(final.dialect).toBe(c.dialect);
    expect(final.threadId).toBe(run.threadId);
    expect(tailed.map((e) => [e.key, e.event, e.cursor])).toEqual(final.events.map((e) => [e.key, e.event, e.cursor]));
    expect(tailer!.diagnostics).toEqual(final.diagnostics);

    // 2. The tail reports exactly the live stream's keys and texts (deltas/approvals are never persisted).
    const live = c.liveKeys(run.traffic);
    const liveSet = new Set(live.keys.map(dedupeKeyString));
    const tailSet = new Set(tailed.map((e) => dedupeKeyString(e.key)));
    expect([...tailSet].sort()).toEqual([...liveSet].sort());
    for (const event of tailed) {
      if (event.event.type === 'message') expect(textOf(event), event.event.id).toBe(live.texts.get(event.event.id));
    }
    // Turn ids agree too (not compared by the deduper, but both sides know them here).
    const liveTurns = new Map(live.keys.map((k) => [dedupeKeyString(k), k.turnId]));
    for (const event of tailed) if (event.key.kind !== 'session_identified') expect(event.key.turnId).toBe(liveTurns.get(dedupeKeyString(event.key)));

    // 3. With the live stream first, the deduper lets no tailed copy through.
    const deduper = new EventDeduper<TailedEvent>({ graceMs: 0 });
    for (const key of live.keys) deduper.offerLive(key);
    const leaked: TailedEvent[] = [];
    for (const event of tailed) deduper.offerTailed(event.key, event, (e) => leaked.push(e));
    expect(leaked).toEqual([]);

    console.info(`[codex-rollout] ${c.dialect}: 5 turns in ${Math.round(scenarioMs)} ms, ${tailed.length} tailed events, ${final.diagnostics.length} diagnostics`);

    const rolloutFixture = join(ROLLOUT_FIXTURE_DIR, `${c.fixture}.rollout.jsonl`);
    if (UPDATE || !existsSync(rolloutFixture)) {
      mkdirSync(ROLLOUT_FIXTURE_DIR, { recursive: true });
      writeFileSync(rolloutFixture, anonymise(readFileSync(run.rolloutPath, 'utf8'), root));
      writeFileSync(join(ROLLOUT_FIXTURE_DIR, `${c.fixture}.traffic.jsonl`), anonymise(run.traffic.map((t) => JSON.stringify(t)).join('\n') + '\n', root));
    }
  });
});
