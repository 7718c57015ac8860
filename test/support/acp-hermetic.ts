/**
 * Helpers for running the real, pinned ACP agents hermetically (reference "acp.md" §4): a per-test
 * root with HOME/tmp/work below it, environments built from scratch (never a copy of
 * process.env) pointing the agent at OUR mock on 127.0.0.1, and the suite's orphan-check marker.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentEvent } from '../../src/events/agent-event.js';
import { hermeticClaudeEnv } from './claude-hermetic.js';
import { testRunEnv } from './orphan-check.js';

export const GEMINI_PINNED_VERSION = '0.61.0';
export const CLAUDE_CODE_ACP_PINNED_VERSION = '0.16.2';
export const OPENCODE_PINNED_VERSION = '1.18.33';
export const QWEN_PINNED_VERSION = '0.24.4';
export const COPILOT_PINNED_VERSION = '1.0.102';

export interface AcpHermetic {
  root: string;
  home: string;
  work: string;
  env: Record<string, string>;
}

function dirs(root: string): { home: string; tmp: string; work: string } {
  const d = { home: join(root, 'home'), tmp: join(root, 'tmp'), work: join(root, 'work') };
  for (const dir of Object.values(d)) mkdirSync(dir, { recursive: true });
  return d;
}

/**
 * An agent's whole environment, from scratch: a fixed PATH, its own HOME and TMPDIR, C.UTF-8, the
 * variables pointing it at the mock, and the suite's orphan-check marker.
 */
function agentEnv({ home, tmp }: { home: string; tmp: string }, own: Record<string, string>): Record<string, string> {
  return { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, TMPDIR: tmp, LANG: 'C.UTF-8', ...own, ...testRunEnv() };
}

/**
 * Writes `<home>/<dir>/settings.json` with no usage statistics, no telemetry and no update checks
 * (gemini-cli and Qwen Code, its fork, read the same keys), plus the agent's own `extra` settings.
 */
function writeQuietSettings(home: string, dir: string, extra: Record<string, unknown> = {}): void {
  mkdirSync(join(home, dir), { recursive: true });
  writeFileSync(
    join(home, dir, 'settings.json'),
    JSON.stringify({
      ...extra,
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      general: { disableAutoUpdate: true, disableUpdateNag: true },
    }),
  );
}

/** gemini-cli 0.61.0 `--acp` against the Gemini mock (`GOOGLE_GEMINI_BASE_URL` = auth type gateway). */
export function hermeticGemini({ port, root }: { port: number; root: string }): AcpHermetic {
  const { home, tmp, work } = dirs(root);
  writeQuietSettings(home, '.gemini');
  const env = agentEnv({ home, tmp }, {
    GOOGLE_GEMINI_BASE_URL: `http://127.0.0.1:${port}`,
    GEMINI_API_KEY: 'mock-key',
    GEMINI_CLI_TRUST_WORKSPACE: 'true',
    GEMINI_CLI_NO_RELAUNCH: 'true',
  });
  return { root, home, work, env };
}

/**
 * opencode 1.18.33 (`opencode acp`) against the Anthropic mock: a provider `mock` of opencode's
 * bundled `@ai-sdk/anthropic` with the mock as `baseURL` and its one model declared inline (so
 * nothing is fetched from models.dev), given as OPENCODE_CONFIG_CONTENT; bash and edits ask.
 */
export function hermeticOpencode({ port, root }: { port: number; root: string }): AcpHermetic {
  const { home, tmp, work } = dirs(root);
  const config = {
    $schema: 'https://opencode.ai/config.json',
    autoupdate: false,
    share: 'disabled',
    model: 'mock/mock-model',
    small_model: 'mock/mock-model',
    provider: {
      mock: {
        npm: '@ai-sdk/anthropic',
        name: 'Mock',
        options: { baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'mock-key' },
        models: { 'mock-model': { name: 'Mock model', tool_call: true, limit: { context: 200_000, output: 8_192 } } },
      },
    },
    permission: { bash: 'ask', edit: 'ask' },
  };
  const env = agentEnv({ home, tmp }, {
    OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
    OPENCODE_DISABLE_SHARE: '1',
  });
  return { root, home, work, env };
}

/** opencode's turns carry its tools; its title request (after the first prompt) carries none and must not take a scripted answer. */
export function isMainOpencodeRequest(request: { body?: { tools?: unknown } }): boolean {
  return Array.isArray(request.body?.tools) && request.body.tools.length > 0;
}

/** Qwen Code 0.24.4 (`--acp`) against the OpenAI chat-completions mock (`OPENAI_BASE_URL`, auth type `openai`). */
export function hermeticQwen({ baseUrl, root }: { baseUrl: string; root: string }): AcpHermetic {
  const { home, tmp, work } = dirs(root);
  writeQuietSettings(home, '.qwen', { security: { auth: { selectedType: 'openai' } } });
  const env = agentEnv({ home, tmp }, {
    OPENAI_API_KEY: 'mock-key',
    OPENAI_BASE_URL: baseUrl,
    OPENAI_MODEL: 'mock-model',
  });
  return { root, home, work, env };
}

/**
 * Qwen Code's turn requests offer its whole tool set (with `agent`). Besides them it makes requests
 * of its own that must not take a scripted answer: managed-memory extraction (a few file tools
 * only) and, after a turn, a next-prompt suggestion (whole tool set, its text starts
 * `[SUGGESTION MODE`).
 */
export function isMainQwenRequest(request: { body?: { tools?: { function?: { name?: string } }[]; messages?: { content?: unknown }[] } }): boolean {
  if (!(request.body?.tools ?? []).some((t) => t.function?.name === 'agent')) return false;
  return !JSON.stringify(request.body?.messages?.at(-1)?.content ?? '').includes('[SUGGESTION MODE');
}

/**
 * GitHub Copilot CLI 1.0.102 (`copilot --acp`) against the OpenAI chat-completions mock through its
 * BYOK variables (`COPILOT_PROVIDER_BASE_URL`, type `openai` by default) with `COPILOT_OFFLINE=true`:
 * no GitHub sign-in, telemetry, GitHub MCP server or update check. The binary unpacks its bundle
 * (about 235 MB, 5-8 s) into a package cache on first start: `pkgCache`, shared by the tests of a
 * file, so only the first start pays for it (it is only the pinned version's own files).
 */
export function hermeticCopilot({ baseUrl, root, pkgCache }: { baseUrl: string; root: string; pkgCache: string }): AcpHermetic {
  const { home, tmp, work } = dirs(root);
  const env: Record<string, string> = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    TMPDIR: tmp,
    LANG: 'C.UTF-8',
    COPILOT_OFFLINE: 'true',
    COPILOT_PROVIDER_BASE_URL: baseUrl,
    COPILOT_PROVIDER_API_KEY: 'mock-key',
    COPILOT_MODEL: 'mock-model',
    COPILOT_PKG_CACHE_HOME: pkgCache,
    ...testRunEnv(),
  };
  return { root, home, work, env };
}

/** claude-code-acp 0.16.2 against the Anthropic mock (the agent passes its env on to Claude Code). */
export function hermeticClaudeCodeAcp({ port, root }: { port: number; root: string }): AcpHermetic {
  const { work } = dirs(root);
  const env = hermeticClaudeEnv({ port, root });
  return { root, home: env['HOME']!, work, env };
}

/**
 * claude-code-acp's Claude Code also makes small `haiku` calls of its own (e.g. "Files modified by
 * user…") at moments that depend on timing; only the main model's requests take scripted answers.
 */
export function isMainClaudeRequest(request: { body?: { model?: unknown } }): boolean {
  return !String(request.body?.model ?? '').includes('haiku');
}

/** Collects an engine's events and resolves waits on them. */
export class EventLog {
  readonly events: AgentEvent[] = [];
  #waiters: Array<{ pred: (e: AgentEvent) => boolean; resolve: (e: AgentEvent) => void; from: number }> = [];

  readonly push = (event: AgentEvent): void => {
    this.events.push(event);
    this.#waiters = this.#waiters.filter((w) => {
      if (!w.pred(event)) return true;
      w.resolve(event);
      return false;
    });
  };

  /** The next event (after the current end of the log) matching `pred`. */
  next<T extends AgentEvent['type']>(type: T, what: string = type, ms = 90_000, pred: (e: Extract<AgentEvent, { type: T }>) => boolean = () => true): Promise<Extract<AgentEvent, { type: T }>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; got ${this.events.map((e) => e.type).join(',')}`)), ms);
      this.#waiters.push({
        from: this.events.length,
        pred: (e) => e.type === type && pred(e as Extract<AgentEvent, { type: T }>),
        resolve: (e) => {
          clearTimeout(timer);
          resolve(e as Extract<AgentEvent, { type: T }>);
        },
      });
    });
  }

  of<T extends AgentEvent['type']>(type: T): Extract<AgentEvent, { type: T }>[] {
    return this.events.filter((e): e is Extract<AgentEvent, { type: T }> => e.type === type);
  }

  text(): string {
    return this.of('text_delta').map((e) => e.text).join('');
  }
}
