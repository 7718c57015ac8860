/**
 * Claude Code transcript lines (`$CLAUDE_CONFIG_DIR/projects/<slug>/<id>.jsonl`) → AgentEvent
 * bodies, for local mode. The transcript's `assistant` and `user` lines carry the same `message`
 * objects as stream-json, so the remote engine's translator maps them: a message has the same id
 * (the API message id) and a tool call the same call id whichever mode produced it, and a
 * transcript never holds an entry twice across a switch. Added here: the prompts typed in the
 * terminal (`message`, role `user`, id = the line's `uuid`) and the usage of a turn (the transcript
 * has no `result` line; the Stop hook ends the turn). A turn the person interrupted (Esc, or a
 * dialog declined) may run no Stop hook: Claude Code only writes its marker line ("[Request
 * interrupted by user…]"), which ends the turn here (`turn_complete` cancelled), never a prompt.
 */
import type { AgentEventBody, TurnUsage } from '../../../events/agent-event.js';
import { ClaudeTranslator } from '../translate.js';

type Line = Record<string, unknown>;

/** The line Claude Code writes when the person interrupts a turn (`… for tool use` when a dialog is declined). */
const INTERRUPT_MARKER = /^\[Request interrupted by user\b[^\]]*\]$/;

/** Prompts of commands Claude Code runs itself (`/model`, `!cmd` output), not the user's words. */
const COMMAND_MARKUP = /^\s*<(command-|local-command-|bash-)/;

export class TranscriptTranslator {
  readonly #claude: ClaudeTranslator;
  readonly #seen = new Set<string>();
  /** The latest usage of every assistant message of the running turn (a message spans several lines). */
  #usage = new Map<string, TurnUsage>();

  /** `toolName`: the name a tool is reported under (host tools under their own name, not `mcp__host__…`). */
  constructor(options: { toolName?: (name: string) => string } = {}) {
    this.#claude = new ClaudeTranslator(options.toolName ? { toolName: options.toolName } : {});
  }

  /** Diagnostics of lines that could not be mapped. */
  get skipped() {
    return this.#claude.skipped;
  }

  translate(value: unknown): AgentEventBody[] {
    if (typeof value !== 'object' || value === null) return [];
    const line = value as Line;
    const uuid = typeof line['uuid'] === 'string' ? line['uuid'] : undefined;
    if (uuid !== undefined) {
      if (this.#seen.has(uuid)) return [];
      this.#seen.add(uuid);
    }
    if (line['isSidechain'] === true) return []; // A subagent's own conversation.
    if (line['type'] === 'assistant') {
      this.#noteUsage(line);
      return this.#claude.translate(value);
    }
    if (line['type'] === 'user') return [...this.#prompt(line, uuid), ...this.#claude.translate(value)];
    return [];
  }

  /** The usage of the turn that just ended (the Stop hook), and a fresh count for the next. */
  takeTurnUsage(): TurnUsage {
    const total: TurnUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
    for (const usage of this.#usage.values()) {
      total.inputTokens += usage.inputTokens;
      total.outputTokens += usage.outputTokens;
      total.cacheReadTokens += usage.cacheReadTokens;
      total.cacheWriteTokens += usage.cacheWriteTokens;
    }
    this.#usage = new Map();
    return total;
  }

  #prompt(line: Line, uuid: string | undefined): AgentEventBody[] {
    if (line['isMeta'] === true || uuid === undefined) return [];
    const message = line['message'] as { content?: unknown } | undefined;
    const content = message?.content;
    let text: string | undefined;
    if (typeof content === 'string') text = content;
    else if (Array.isArray(content) && content.every((b) => (b as { type?: unknown })?.type === 'text')) {
      text = content.map((b) => String((b as { text?: unknown }).text ?? '')).join('');
    }
    if (text === undefined || text === '' || COMMAND_MARKUP.test(text)) return [];
    if (INTERRUPT_MARKER.test(text.trim())) return [{ type: 'turn_complete', status: 'cancelled', usage: this.takeTurnUsage() }];
    return [{ type: 'message', role: 'user', id: uuid, blocks: [{ type: 'text', text }] }];
  }

  #noteUsage(line: Line): void {
    const message = line['message'] as { id?: unknown; usage?: Record<string, unknown> } | undefined;
    const usage = message?.usage;
    if (typeof message?.id !== 'string' || !usage) return;
    const n = (key: string) => (typeof usage[key] === 'number' ? (usage[key] as number) : 0);
    this.#usage.set(message.id, {
      inputTokens: n('input_tokens'),
      outputTokens: n('output_tokens'),
      cacheReadTokens: n('cache_read_input_tokens'),
      cacheWriteTokens: n('cache_creation_input_tokens'),
    });
  }
}
