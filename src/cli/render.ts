/**
 * Human-readable rendering of session notices for the terminal. Kept apart from the commands so
 * `run` and `demo` print the same way.
 */
import type { SessionNotice } from '../index.js';
import { formatUsd } from './format.js';

export interface Output {
  out(text: string): void;
  err(text: string): void;
}

export const processOutput: Output = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};

const useColor = process.stdout.isTTY && !process.env['NO_COLOR'];
const paint = (code: number) => (s: string) => (useColor ? `\x1b[${code}m${s}\x1b[0m` : s);
export const dim = paint(2);
export const bold = paint(1);
export const red = paint(31);
export const green = paint(32);
export const yellow = paint(33);
export const cyan = paint(36);

export function summarize(value: unknown, max = 120): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  if (text === undefined) return '';
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Renders notices as a readable stream; remembers which messages were already streamed as deltas. */
export class NoticeRenderer {
  readonly #streamed = new Set<string>();
  #midLine = false;

  constructor(readonly output: Output) {}

  render(notice: SessionNotice): void {
    const { out, err } = this.output;
    switch (notice.type) {
      case 'agent': {
        const e = notice.event;
        if (e.type === 'text_delta') {
          this.#streamed.add(e.messageId);
          out(e.text);
          this.#midLine = !e.text.endsWith('\n');
        } else if (e.type === 'message' && e.role === 'assistant') {
          if (!this.#streamed.has(e.id)) {
            for (const b of e.blocks) if (b.type === 'text') out(`${b.text}\n`);
          } else this.#endLine();
        } else if (e.type === 'tool_call') {
          this.#endLine();
          out(`${cyan('⚙')} ${bold(e.toolName)} ${dim(summarize(e.input))}\n`);
        } else if (e.type === 'tool_result') {
          const mark = e.status === 'completed' ? green('✓') : red('✗');
          out(`  ${mark} ${e.status}${e.output !== undefined ? ` ${dim(summarize(e.output))}` : ''}\n`);
        } else if (e.type === 'turn_complete') {
          this.#endLine();
          const u = e.usage;
          const cost = u.costUsd !== undefined ? `, ${formatUsd(u.costUsd)}` : '';
          err(dim(`— turn ${e.status} (${u.inputTokens} in / ${u.outputTokens} out tokens${cost})\n`));
        } else if (e.type === 'error') {
          this.#endLine();
          err(red(`agent error (${e.kind}): ${e.message}\n`));
        } else if (e.type === 'warning') {
          this.#endLine();
          err(yellow(`warning (${e.code}): ${e.message}\n`));
        } else if (e.type === 'plan') {
          this.#endLine();
          const mark = { completed: green('✓'), in_progress: yellow('▸'), pending: dim('·') } as const;
          out(`${cyan('plan')}${e.explanation ? ` ${dim(e.explanation)}` : ''}\n${e.entries.map((p) => `  ${mark[p.status]} ${p.content}\n`).join('')}`);
        } else if (e.type === 'agent_mode') {
          this.#endLine();
          err(dim(`agent mode: ${e.modeId}\n`));
        }
        return;
      }
      case 'status':
        this.#endLine();
        err(dim(`[${notice.phase}] mode=${notice.mode} gen=${notice.gen}${notice.detail ? ` ${notice.detail}` : ''}\n`));
        return;
      case 'permission_resolved':
        err(dim(`permission ${notice.requestId}: ${notice.status}\n`));
        return;
      case 'error':
        this.#endLine();
        err(red(`error ${notice.error.code}: ${notice.error.message}\n`));
        return;
      default:
        return;
    }
  }

  #endLine(): void {
    if (this.#midLine) this.output.out('\n');
    this.#midLine = false;
  }
}
