/**
 * A headless terminal emulator (@xterm/headless) fed by a PTY, so tests read the agent's terminal
 * UI as a person would see it (the visible screen as text), and the TerminalHost a local-mode
 * engine attaches its PTY to.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import xterm from '@xterm/headless';
import type { TerminalHost, TerminalPort } from '../../src/engines/core/engine.js';

export class HeadlessScreen implements TerminalHost {
  readonly term: InstanceType<typeof xterm.Terminal>;
  port: TerminalPort | undefined;
  readonly attached: number[] = [];
  readonly detached: number[] = [];
  #unsubscribe: (() => void) | undefined;

  constructor(readonly cols = 100, readonly rows = 30) {
    this.term = new xterm.Terminal({ cols, rows, allowProposedApi: true });
  }

  size() {
    return { cols: this.cols, rows: this.rows };
  }

  attach(gen: number, port: TerminalPort): void {
    this.#unsubscribe?.();
    this.attached.push(gen);
    this.port = port;
    this.#unsubscribe = port.onData((data) => this.term.write(data));
  }

  detach(gen: number): void {
    this.detached.push(gen);
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    this.port = undefined;
  }

  /** The visible screen, one line per row, right-trimmed. */
  text(): string {
    const buffer = this.term.buffer.active;
    const lines: string[] = [];
    for (let y = 0; y < this.term.rows; y++) lines.push(buffer.getLine(buffer.viewportY + y)?.translateToString(true) ?? '');
    return lines.join('\n');
  }

  /** Types into the attached terminal. */
  type(keys: string): void {
    if (!this.port) throw new Error('no terminal attached');
    this.port.write(keys);
  }

  /** Resolves once `pattern` is on screen (after the emulator parsed everything written so far). */
  async waitFor(pattern: RegExp, timeoutMs = 20_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      await new Promise<void>((resolve) => this.term.write('', resolve));
      const screen = this.text();
      if (pattern.test(screen)) return screen;
      if (Date.now() > deadline) throw new Error(`screen never showed ${pattern}:\n${screen}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/**
 * What a person has done once on their machine before using Claude Code's terminal UI: onboarding
 * finished, the (dummy) API key approved, the working directory trusted. Written into the hermetic
 * `$CLAUDE_CONFIG_DIR/.claude.json`, so the TUI opens straight at its prompt.
 */
export function seedClaudeTuiConfig(configDir: string, workDir: string, apiKey = 'dummy'): void {
  writeFileSync(
    join(configDir, '.claude.json'),
    JSON.stringify({
      hasCompletedOnboarding: true,
      customApiKeyResponses: { approved: [apiKey.slice(-20)], rejected: [] },
      projects: { [workDir]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } },
    }),
  );
}

/**
 * What the Codex terminal UI (0.169.0) asks a person once, answered ahead: the screen-reader check,
 * the new-model announcement and the model migration notice (without them it opens a dialog, or
 * moves the session to another model). Append to a hermetic config.toml (`extraToml`).
 */
export const CODEX_TUI_SEEN_TOML = [
  '[tui]',
  'screen_reader_detection_done = true',
  '',
  '[tui.model_availability_nux]',
  '"gpt-6.1-sol" = 1',
  '',
  '[notice.model_migrations]',
  '"gpt-5.5" = "gpt-6-sol"',
  '',
].join('\n');
