/**
 * Protocol agreement for the Codex engines:
 * - the committed app-server types (src/engines/codex/app-server/protocol/generated/) are exactly
 *   what the pinned 0.169.0 binary generates (`codex app-server generate-ts`, a local code
 *   generator: no model, no network);
 * - every recorded server message (test/fixtures/codex/*.jsonl) that the engines read passes the
 *   engines' runtime schemas, so the schemas describe the real traffic, not a guess.
 * (The schemas' agreement with the generated TYPES is checked by tsc: app-server/messages.ts PROTOCOL_AGREEMENT.)
 */
import { readdirSync } from 'node:fs';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { diffProtocol, generateProtocol, PROTOCOL_DIR, readProtocolDir } from '../../scripts/codex-app-server-protocol.js';
import * as as from '../../src/engines/codex/app-server/messages.js';
import * as mcp from '../../src/engines/codex/mcp/messages.js';
import { CODEX_APP_SERVER_PROTOCOL_VERSION } from '../../src/engines/codex/index.js';
import { CODEX_FIXTURE_DIR, loadFixture } from '../support/codex-engine-kit.js';
import { codexBinary } from '../support/codex-hermetic.js';

const fixtures = readdirSync(CODEX_FIXTURE_DIR)
  .filter((f) => /^(app-server|mcp)-.*\.jsonl$/.test(f))
  .map((f) => f.replace(/\.jsonl$/, ''));

function inbound(prefix: string): Record<string, unknown>[] {
  return fixtures.filter((f) => f.startsWith(prefix)).flatMap((f) => loadFixture(f).entries.filter((e) => e.dir === 'in').map((e) => e.msg as Record<string, unknown>));
}

function expectParses(schema: z.ZodType, value: unknown, what: string): void {
  const parsed = schema.safeParse(value);
  expect(parsed.success, `${what}: ${parsed.success ? '' : JSON.stringify(parsed.error.issues)} in ${JSON.stringify(value).slice(0, 300)}`).toBe(true);
}

describe('codex app-server protocol types', () => {
  it('are what the pinned binary generates (run scripts/codex-app-server-protocol.ts after a pin change)', () => {
    const generated = generateProtocol(codexBinary('0.169.0').bin);
    expect(diffProtocol(generated, readProtocolDir(PROTOCOL_DIR))).toEqual([]);
    expect(CODEX_APP_SERVER_PROTOCOL_VERSION).toBe('0.169.0');
  });
});

describe('recorded traffic passes the runtime schemas', () => {
  it('has fixtures for both engines', () => {
    expect(fixtures.filter((f) => f.startsWith('app-server-')).length).toBeGreaterThanOrEqual(5);
    expect(fixtures.filter((f) => f.startsWith('mcp-')).length).toBeGreaterThanOrEqual(5);
  });

  it('app-server: every notification and approval request the engine reads', () => {
    // The per-token notifications are read by hand (as.readDelta, as.readItemNotification).
    const reader = (read: (params: unknown) => unknown): z.ZodType => z.custom((params) => read(params) !== undefined);
    const byMethod: Record<string, z.ZodType> = {
      'item/started': reader(as.readItemNotification),
      'item/completed': reader(as.readItemNotification),
      'item/agentMessage/delta': reader(as.readDelta),
      'item/reasoning/summaryTextDelta': reader(as.readDelta),
      'thread/tokenUsage/updated': as.TokenUsageUpdatedSchema,
      'turn/completed': as.TurnNotificationSchema,
      'turn/started': as.TurnNotificationSchema,
      error: as.ErrorNotificationSchema,
      'serverRequest/resolved': as.ServerRequestResolvedSchema,
      'item/commandExecution/requestApproval': as.CommandApprovalParamsSchema,
      'item/fileChange/requestApproval': as.FileChangeApprovalParamsSchema,
    };
    const byItem: Record<string, z.ZodType> = {
      userMessage: as.UserMessageItemSchema,
      agentMessage: as.AgentMessageItemSchema,
      reasoning: as.ReasoningItemSchema,
      commandExecution: as.CommandExecutionItemSchema,
      fileChange: as.FileChangeItemSchema,
    };
    const seen = new Set<string>();
    for (const msg of inbound('app-server-')) {
      const method = msg['method'];
      if (typeof method !== 'string') continue;
      const schema = byMethod[method];
      if (!schema) continue;
      seen.add(method);
      expectParses(schema, msg['params'], method);
      const item = (msg['params'] as { item?: { type: string } }).item;
      if (item && byItem[item.type]) {
        seen.add(`item:${item.type}`);
        expectParses(byItem[item.type]!, item, `${method} ${item.type}`);
      }
    }
    // The recordings exercise every schema (so this test cannot pass vacuously).
    for (const method of Object.keys(byMethod).filter((m) => m !== 'error')) expect(seen).toContain(method);
    for (const type of Object.keys(byItem)) expect(seen).toContain(`item:${type}`);
  });

  it('app-server: thread and turn responses', () => {
    for (const name of fixtures.filter((f) => f.startsWith('app-server-'))) {
      const { entries } = loadFixture(name);
      const requests = new Map<unknown, string>();
      for (const { dir, msg } of entries) {
        const m = msg as { id?: unknown; method?: string; result?: unknown };
        if (dir === 'out' && m.method) requests.set(m.id, m.method);
        if (dir !== 'in' || m.method || !('result' in m)) continue;
        const method = requests.get(m.id);
        if (method === 'thread/start' || method === 'thread/resume') expectParses(as.ThreadStartResponseSchema, m.result, method);
        if (method === 'turn/start') expectParses(as.TurnStartResponseSchema, m.result, method);
      }
    }
  });

  it('mcp-server: every codex/event envelope, each consumed msg type, elicitations and tool results', () => {
    const byType: Record<string, z.ZodType> = {
      session_configured: mcp.SessionConfiguredSchema,
      task_started: mcp.TaskStartedSchema,
      item_started: mcp.ItemEventSchema,
      item_completed: mcp.ItemEventSchema,
      agent_message_content_delta: mcp.DeltaSchema,
      exec_approval_request: mcp.ExecApprovalRequestSchema,
      exec_command_begin: mcp.ExecCommandBeginSchema,
      exec_command_end: mcp.ExecCommandEndSchema,
      patch_apply_begin: mcp.PatchBeginSchema,
      apply_patch_approval_request: mcp.PatchApprovalRequestSchema,
      patch_apply_end: mcp.PatchEndSchema,
      token_count: mcp.TokenCountSchema,
      task_complete: mcp.TaskCompleteSchema,
      turn_aborted: mcp.TurnAbortedSchema,
    };
    const seen = new Set<string>();
    for (const msg of inbound('mcp-')) {
      if (msg['method'] === 'codex/event') {
        expectParses(mcp.CodexEventParamsSchema, msg['params'], 'codex/event');
        const event = (msg['params'] as { msg: { type: string; item?: { type: string } } }).msg;
        const schema = byType[event.type];
        if (schema) {
          seen.add(event.type);
          expectParses(schema, event, event.type);
        }
        if (event.type === 'item_completed' && event.item) {
          const itemSchema = { UserMessage: mcp.UserMessageItemSchema, AgentMessage: mcp.AgentMessageItemSchema, Reasoning: mcp.ReasoningItemSchema }[event.item.type as 'UserMessage'];
          if (itemSchema) {
            seen.add(`item:${event.item.type}`);
            expectParses(itemSchema, event.item, event.item.type);
          }
        }
      } else if (msg['method'] === 'elicitation/create') {
        seen.add('elicitation/create');
        expectParses(mcp.ElicitationParamsSchema, msg['params'], 'elicitation/create');
      } else if ('result' in msg && (msg['result'] as { structuredContent?: unknown }).structuredContent) {
        seen.add('tools/call result');
        expectParses(mcp.ToolCallResultSchema, msg['result'], 'tools/call result');
      }
    }
    for (const type of [...Object.keys(byType), 'item:UserMessage', 'item:AgentMessage', 'item:Reasoning', 'elicitation/create', 'tools/call result']) expect(seen).toContain(type);
  });
});
