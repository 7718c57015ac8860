/**
 * Host tools in local mode, on the REAL pinned CLIs' own terminal UIs (PTY, read through a headless
 * terminal), hermetic (mock model APIs, loopback only): the session's tools reach the agent through
 * the loopback MCP server, the scripted model calls one, the handler runs, and the model gets its
 * answer; a thrown handler is an error result to the model, never a crash. Reported as
 * `tool_call` / `tool_result` named after the tool. The server's token is on no command line, and
 * its port is closed when the engine stops. Claude's `ready` waits until Claude Code listed the
 * tools, so a prompt typed at `ready` has them on its first model request even when the MCP
 * connection is slow (a proxy holds its `initialize` 3 s, as a loaded CI machine did). (Claude's local mode also runs `spawn_session` this way
 * in test/real-cli/ase-sub-agent-tmux.test.ts.)
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claudeEngine } from '../../src/engines/claude/index.js';
import { codexEngine } from '../../src/engines/codex/index.js';
import { HostToolbox } from '../../src/engines/core/host-tools.js';
import type { AgentEngine } from '../../src/engines/core/engine.js';
import type { AgentEvent } from '../../src/events/agent-event.js';
import { startAnthropicMock, type AnthropicMock, type RecordedRequest } from '../mocks/anthropic-mock.js';
import { startOpenAIResponsesMock, toolOutputsSinceLastUser, type OpenAIResponsesMock } from '../mocks/openai-responses-mock.js';
import { claudeBinary, hermeticClaudeEnv } from '../support/claude-hermetic.js';
import { hermeticCodex } from '../support/codex-hermetic.js';
import { realEngineContext } from '../support/engine-context.js';
import { CODEX_TUI_SEEN_TOML, HeadlessScreen, seedClaudeTuiConfig } from '../support/headless-screen.js';
import { hostToolKit, portClosed, TICKET_ANSWER } from '../support/host-tools-kit.js';
import { findProcesses } from '../support/processes.js';
import { startSlowMcpProxy } from '../support/slow-mcp-proxy.js';

const WAIT_MS = 60_000;

/** The text of the tool_result blocks in an Anthropic request's latest user message that has any (Claude Code may add a message after it). */
function claudeToolResults(request: RecordedRequest): string {
  const messages: any[] = request.body?.messages ?? [];
  const last = [...messages].reverse().find((m) => m.role === 'user' && Array.isArray(m.content) && m.content.some((b: any) => b.type === 'tool_result'));
  const blocks: any[] = last ? last.content.filter((b: any) => b.type === 'tool_result') : [];
  return blocks.map((b) => (typeof b.content === 'string' ? b.content : (b.content ?? []).map((c: any) => c.text ?? '').join(''))).join(' | ');
}

describe('host tools in local mode (the agents\' own terminal UIs)', () => {
  let root: string;
  let engine: AgentEngine | undefined;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'ase-local-tools-'));
  });
  afterEach(async () => {
    await engine?.stop().catch(() => undefined);
    engine = undefined;
    rmSync(root, { recursive: true, force: true });
  });

  /** Runs the engine in a headless terminal; `until` waits for an event. */
  function run(created: AgentEngine, screen: HeadlessScreen) {
    const events: AgentEvent[] = [];
    engine = created;
    created.onEvent((event) => events.push(event));
    const until = async (match: (e: AgentEvent) => boolean, what: string): Promise<AgentEvent> => {
      const deadline = Date.now() + WAIT_MS;
      for (;;) {
        const found = events.find(match);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no ${what}; events: ${events.map((e) => e.type).join(',')}\n${screen.text()}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    const typeTurn = async (text: string) => {
      screen.type(text);
      await screen.waitFor(new RegExp(text));
      await new Promise((resolve) => setTimeout(resolve, 250));
      screen.type('\r');
    };
    return { events, until, typeTurn };
  }

  /** The agent process's command line (it must carry no loopback token). */
  function argvOf(pid: number): string {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  }

  it('claude: a prompt typed at ready has the tools; a trusted tool runs without a dialog, a thrown handler is an error result', { timeout: 180_000 }, async () => {
    const mock: AnthropicMock = await startAnthropicMock();
    const slow = await startSlowMcpProxy(3_000);
    try {
      const work = join(root, 'work');
      const env: Record<string, string> = { ...hermeticClaudeEnv({ port: mock.port, root }), HTTP_PROXY: slow.url, http_proxy: slow.url };
      seedClaudeTuiConfig(env.CLAUDE_CONFIG_DIR!, work);
      await import('node:fs').then((fs) => fs.mkdirSync(work, { recursive: true }));
      const kit = hostToolKit();
      const screen = new HeadlessScreen();
      const r = run(claudeEngine({ env, permissionMode: 'default' }).create(realEngineContext({ bin: claudeBinary(), terminal: screen, hostTools: kit.toolbox })), screen);
      mock.enqueue(
        { kind: 'tool_use', id: 'toolu_t42', name: 'mcp__host__lookup_ticket', input: { id: 'T-42' } },
        (request) => ({ kind: 'text', text: `Observed: ${claudeToolResults(request)}` }),
        { kind: 'tool_use', id: 'toolu_boom', name: 'mcp__host__explode', input: {} },
        (request) => ({ kind: 'text', text: `Failed: ${claudeToolResults(request)}` }),
      );
      // Typed the moment `ready` comes, as ase types a remote message or a sub-agent's result: no
      // wait for ❯. Claude Code connects its MCP servers ~0.9 s after its UI is up (here 3 s more:
      // the proxy), and takes a prompt before that: `ready` waits for its tools/list.
      const prompt = 'what about T-42?';
      engine!.onEvent((e) => {
        if (e.type === 'ready') void engine!.send({ localId: 'first', text: prompt });
      });
      await engine!.start({ gen: 1, mode: 'local', workDir: work, options: {} });
      await screen.waitFor(/Observed: T-42 is open/, WAIT_MS);
      await r.until((e) => e.type === 'turn_complete', 'turn_complete');
      const call = r.events.find((e) => e.type === 'tool_call');
      expect(call).toMatchObject({ toolName: 'lookup_ticket', callId: 'toolu_t42' });
      expect(r.events.find((e) => e.type === 'tool_result')).toMatchObject({ callId: 'toolu_t42', status: 'completed' });
      expect(r.events.filter((e) => e.type === 'permission_request')).toEqual([]);
      expect(kit.calls[0]).toEqual({ name: 'lookup_ticket', args: { id: 'T-42' }, ctx: { sessionId: 'host-tools-test', callId: 'toolu_t42' } });
      // Always loaded (not deferred behind ToolSearch), and there from the FIRST model request of the
      // prompt typed at `ready` (before ready waited for Claude Code's tools/list, it often lacked them).
      const asked = mock.requests.find((q) => q.body?.stream === true && JSON.stringify(q.body.messages).includes(prompt))!;
      expect((asked.body.tools as { name: string }[]).map((t) => t.name)).toContain('mcp__host__lookup_ticket');
      expect(r.events.filter((e) => e.type === 'warning')).toEqual([]);
      expect(slow.held).toBe(1);

      await r.typeTurn('now break it');
      await screen.waitFor(/Failed: host tool "explode" failed: kaboom from the host/, WAIT_MS);
      await r.until((e) => e.type === 'tool_result' && e.callId === 'toolu_boom', 'the failed tool_result');
      expect(r.events.find((e) => e.type === 'tool_result' && e.callId === 'toolu_boom')).toMatchObject({ status: 'failed' });
      const pid = (engine as unknown as { pid: number }).pid;
      expect(argvOf(pid)).not.toMatch(/\/mcp\/[A-Za-z0-9_-]{43}/);
      await engine!.stop();
      expect(findProcesses((p) => p.environ().includes(root))).toEqual([]);
    } finally {
      await slow.close();
      await mock.close();
    }
  });

  it('codex: a prompt typed at ready has the tools; the model calls the tool in namespace mcp__host, the handler answers it; the port closes at stop', { timeout: 180_000 }, async () => {
    const mock: OpenAIResponsesMock = await startOpenAIResponsesMock();
    const slow = await startSlowMcpProxy(3_000);
    try {
      const proxied = { HTTP_PROXY: slow.url, http_proxy: slow.url };
      const h = hermeticCodex({ root, baseUrl: mock.providerBaseUrl, approvalPolicy: 'on-request', extraToml: CODEX_TUI_SEEN_TOML, extraEnv: proxied });
      const kit = hostToolKit();
      // Trusted tools only: with one that requiresPermission, Codex asks for every tool of the server (its approval is per server).
      const toolbox = new HostToolbox(kit.tools.filter((t) => t.name !== 'deploy'), { sessionId: 'host-tools-test' });
      const screen = new HeadlessScreen();
      const r = run(codexEngine({ env: h.env }).create(realEngineContext({ bin: h.bin, terminal: screen, hostTools: toolbox })), screen);
      mock.enqueue(
        { kind: 'tool_call', name: 'lookup_ticket', namespace: 'mcp__host', arguments: { id: 'T-42' } },
        (request) => ({ kind: 'text', text: `Observed: ${toolOutputsSinceLastUser(request.body).map((o) => o.output).join(' | ')}` }),
      );
      // Typed the moment `ready` comes (as for claude above): Codex takes input ~1.1 s before it
      // connects its MCP servers (here 3 s more: the proxy); `ready` waits for its tools/list.
      const prompt = 'what about T-42?';
      engine!.onEvent((e) => {
        if (e.type === 'ready') void engine!.send({ localId: 'first', text: prompt });
      });
      await engine!.start({ gen: 1, mode: 'local', workDir: h.workDir, options: {}, model: 'gpt-5.5' });
      await r.until((e) => e.type === 'turn_complete', 'turn_complete');
      const pid = (engine as unknown as { pid: number }).pid;
      const argv = argvOf(pid);
      expect(argv).toContain('mcp_servers.host.url');
      expect(argv).not.toMatch(/\/mcp\/[A-Za-z0-9_-]{43}/);
      const port = Number(/127\.0\.0\.1:(\d+)\/mcp/.exec(argv)?.[1]);
      // Codex defers MCP tools behind tool_search: the FIRST request of the prompt names the namespace.
      const asked = mock.requests.find((q) => JSON.stringify(q.body?.input ?? '').includes(prompt))!;
      expect(JSON.stringify(asked.body.input)).toMatch(/Deferred tool namespaces:[^<]*mcp__host/);
      expect(r.events.filter((e) => e.type === 'warning' && e.code === 'host_tools_not_connected')).toEqual([]);
      expect(slow.held).toBeGreaterThanOrEqual(1); // Codex may initialize more than once
      expect(kit.calls).toEqual([{ name: 'lookup_ticket', args: { id: 'T-42' }, ctx: { sessionId: 'host-tools-test', callId: expect.any(String) } }]);
      const call = r.events.find((e) => e.type === 'tool_call');
      expect(call).toMatchObject({ toolName: 'lookup_ticket' });
      expect(r.events.find((e) => e.type === 'tool_result')).toMatchObject({ status: 'completed' });
      expect(r.events.filter((e) => e.type === 'permission_request')).toEqual([]);
      const answer = r.events.filter((e): e is Extract<AgentEvent, { type: 'message' }> => e.type === 'message' && e.role === 'assistant').at(-1);
      expect(answer?.blocks[0]).toMatchObject({ text: expect.stringContaining(TICKET_ANSWER) });
      expect(await portClosed(port)).toBe(false);
      await engine!.stop();
      expect(await portClosed(port)).toBe(true);
    } finally {
      await slow.close();
      await mock.close();
    }
  });
});
