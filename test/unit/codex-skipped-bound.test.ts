/**
 * What the Codex translators skip is kept for diagnostics, but only the newest entries: a session
 * runs for hours and app-server streams every chunk of command output as its own notification
 * (`item/commandExecution/outputDelta`, 36 for a 40-line command on codex 0.169.0), which was
 * kept whole, as an "unknown notification", for the life of the engine.
 */
import { describe, expect, it } from 'vitest';
import { AppServerTranslator } from '../../src/engines/codex/app-server/translate.js';
import { McpTranslator } from '../../src/engines/codex/mcp/translate.js';
import { MAX_SKIPPED } from '../../src/engines/core/skipped-inputs.js';

describe('skipped input is bounded', () => {
  it('app-server: streamed command output is ignored, not recorded; other skips keep only the newest', () => {
    const t = new AppServerTranslator();
    t.setThread('th');
    t.beginTurn();
    for (let i = 0; i < 5_000; i++) {
      expect(t.translate('item/commandExecution/outputDelta', { threadId: 'th', turnId: 'tu', itemId: 'call_1', delta: `line ${i}\n` })).toEqual([]);
    }
    expect(t.skipped).toEqual([]);
    for (let i = 0; i < 5_000; i++) t.translate('some/future/notification', { n: i });
    expect(t.skipped).toHaveLength(MAX_SKIPPED);
    expect(t.skipped.at(-1)).toMatchObject({ reason: 'unknown notification', raw: { params: { n: 4_999 } } });
  });

  it('mcp-server: unknown event types keep only the newest', () => {
    const t = new McpTranslator();
    t.beginTurn();
    for (let i = 0; i < 5_000; i++) t.translate({ type: 'some_future_event', n: i } as { type: string });
    expect(t.skipped).toHaveLength(MAX_SKIPPED);
    expect(t.skipped.at(-1)).toMatchObject({ raw: { n: 4_999 } });
  });
});
