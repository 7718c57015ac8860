/**
 * `session.terminal`: the agent's own terminal UI while the session is in local mode, for the host
 * to show (the user's terminal in `ase run --mode local`, an IDE panel, a web terminal). It outlives
 * every generation: output listeners and the window size carry over from one local engine to the
 * next, and keystrokes typed while no terminal is attached (a switch is under way) are dropped, so
 * nothing typed for one program lands in another.
 */
import type { TerminalHost, TerminalPort } from '../engines/core/engine.js';

export type TerminalChange = { attached: true; gen: number } | { attached: false; gen: number };

export class SessionTerminal implements TerminalHost {
  #port: { gen: number; port: TerminalPort; unsubscribe: () => void } | undefined;
  #size: { cols: number; rows: number } | undefined;
  readonly #data = new Set<(data: string) => void>();
  readonly #changes = new Set<(change: TerminalChange) => void>();
  #commands: ((line: string) => string | Promise<string>) | undefined;

  /** Whether a local terminal runs now. */
  get attached(): boolean {
    return this.#port !== undefined;
  }

  /** The size of the local terminal running now, else the host's window size (undefined: neither). */
  dimensions(): { cols: number; rows: number } | undefined {
    if (this.#port) return { cols: this.#port.port.cols, rows: this.#port.port.rows };
    return this.#size;
  }

  /** The terminal's output (escape sequences included), from every local engine; returns the unsubscribe. */
  onData(listener: (data: string) => void): () => void {
    this.#data.add(listener);
    return () => this.#data.delete(listener);
  }

  /** Told when a local terminal attaches (its PTY started) and detaches (it exited); returns the unsubscribe. */
  onChange(listener: (change: TerminalChange) => void): () => void {
    this.#changes.add(listener);
    return () => this.#changes.delete(listener);
  }

  /**
   * Handles the host's commands typed into the agent's UI (`/ase:children`, `/ase:enter <id>`,
   * `/ase:exit`; docs/cli.md): the handler gets the line as typed and returns the text shown to
   * the person. One handler at a time (a later one replaces it); returns the unsubscribe. Without
   * one, such a line is still kept from the model and answered that nothing here handles it.
   */
  onCommand(handler: (line: string) => string | Promise<string>): () => void {
    this.#commands = handler;
    return () => {
      if (this.#commands === handler) this.#commands = undefined;
    };
  }

  /** Types into the local terminal; dropped (returns false) when none is attached. */
  write(data: string): boolean {
    if (!this.#port) return false;
    this.#port.port.write(data);
    return true;
  }

  /** The host's window size: applied now and to every later local terminal. */
  resize(cols: number, rows: number): void {
    if (!(cols > 0 && rows > 0)) return;
    this.#size = { cols: Math.floor(cols), rows: Math.floor(rows) };
    this.#port?.port.resize(this.#size.cols, this.#size.rows);
  }

  // ------------------------------------------------ TerminalHost (the engine's side)

  size(): { cols: number; rows: number } | undefined {
    return this.#size;
  }

  attach(gen: number, port: TerminalPort): void {
    this.#port?.unsubscribe();
    const unsubscribe = port.onData((data) => {
      for (const listener of this.#data) {
        try {
          listener(data);
        } catch {
          // A broken renderer must not stop the others.
        }
      }
    });
    this.#port = { gen, port, unsubscribe };
    if (this.#size && (port.cols !== this.#size.cols || port.rows !== this.#size.rows)) port.resize(this.#size.cols, this.#size.rows);
    this.#tell({ attached: true, gen });
  }

  async command(line: string): Promise<string> {
    const handler = this.#commands;
    if (!handler) return `${line.trim()}: no host here handles /ase commands (ase run --mode local --sub-agents does)`;
    try {
      return await handler(line);
    } catch (error) {
      return `${line.trim()}: ${error instanceof Error ? error.message : String(error)}`;
    }
  }

  detach(gen: number): void {
    if (this.#port?.gen !== gen) return;
    this.#port.unsubscribe();
    this.#port = undefined;
    this.#tell({ attached: false, gen });
  }

  #tell(change: TerminalChange): void {
    for (const listener of this.#changes) {
      try {
        listener(change);
      } catch {
        // Same as onData.
      }
    }
  }
}
