/**
 * The desk's key-chord menu (`ase run --mode local --sub-agents`): Ctrl-] opens it over the agent's
 * terminal UI, whatever the agent (Claude Code and Codex bind neither Ctrl-] nor the keys read
 * while the menu is open, which never reach the agent). It is the terminal gesture that needs no
 * hook in the agent's UI, so it works the same in Codex's UI, which has no `/ase:` commands.
 *
 *   1-9      enter that sub-agent session (the list shows the session's children, numbered)
 *   e        enter the only sub-agent session there is
 *   x        back to the parent session
 *   h, Ctrl-] hand the session shown to remote control and end the desk (Ctrl-] Ctrl-])
 *   anything else (Esc, q, Enter) closes the menu
 *
 * `DeskMenu` is pure: keys in, an outcome out, the lines to draw. `MenuOverlay` puts it over a
 * desk's screen, the same for both desks (`ase run --sub-agents`, run-local-tree.ts, and
 * `ase attach`, attach.ts): it draws the menu at the bottom (`drawMenu`), holds the terminal UI's
 * output while the menu is open, and on close writes what was held and repaints the screen as the
 * UI left it. What an enter, an exit or a hand-over does is the desk's own.
 */
import { DETACH_KEY } from './desk-terminal.js';

export interface MenuChild {
  id: string;
  agent: string;
  state: string;
}

export type MenuOutcome =
  /** The menu stays open (redrawn: a note may have changed). */
  | { type: 'stay' }
  | { type: 'close' }
  | { type: 'handover' }
  | { type: 'enter'; id: string }
  | { type: 'exit' };

/** Children beyond this many are not numbered (one key per child). */
const MAX_LISTED = 9;

export class DeskMenu {
  #note: string | undefined;

  constructor(
    readonly sessionId: string,
    readonly children: readonly MenuChild[],
    /** The session shown is the tree's root: there is no parent to go back to. */
    readonly atTop: boolean,
  ) {}

  /** Keys typed while the menu is open: the first that decides something wins, the rest are dropped. */
  keys(keys: string): MenuOutcome {
    for (const key of keys) {
      const outcome = this.#key(key);
      if (outcome.type !== 'stay') return outcome;
      // An escape sequence (an arrow key, Esc itself) closes the menu; its tail is not a key of ours.
      if (key === '\x1b') return { type: 'close' };
    }
    return { type: 'stay' };
  }

  #key(key: string): MenuOutcome {
    if (key === DETACH_KEY || key === 'h' || key === 'H') return { type: 'handover' };
    if (key === 'x' || key === 'X') {
      if (!this.atTop) return { type: 'exit' };
      this.#note = `${this.sessionId} is the top session: no parent to go back to`;
      return { type: 'stay' };
    }
    if (key >= '1' && key <= '9') return this.#enter(this.children[Number(key) - 1], key);
    if (key === 'e' || key === 'E') {
      const open = this.children.filter((c) => c.state !== 'completed');
      if (open.length === 1) return this.#enter(open[0], '');
      this.#note = open.length === 0 ? 'no sub-agent session to enter' : 'press the number of the session to enter';
      return { type: 'stay' };
    }
    if (key === '\x1b') return { type: 'stay' };
    return { type: 'close' };
  }

  #enter(child: MenuChild | undefined, key: string): MenuOutcome {
    if (!child || this.children.indexOf(child) >= MAX_LISTED) {
      this.#note = `no sub-agent session ${key}`;
      return { type: 'stay' };
    }
    if (child.state === 'completed') {
      this.#note = `${child.id} is completed`;
      return { type: 'stay' };
    }
    return { type: 'enter', id: child.id };
  }

  /** The menu's lines, top to bottom. */
  lines(): string[] {
    const listed = this.children.slice(0, MAX_LISTED);
    const head =
      this.children.length === 0
        ? `ase \u00b7 ${this.sessionId}: no sub-agent sessions`
        : `ase \u00b7 sub-agent sessions of ${this.sessionId}:${this.children.length > MAX_LISTED ? ` (first ${MAX_LISTED} of ${this.children.length})` : ''}`;
    const keys = [listed.length > 0 ? '1-9 enter' : undefined, this.atTop ? undefined : 'x back to parent', 'h hand to remote control', 'Esc close'].filter((k) => k !== undefined);
    return [
      head,
      ...listed.map((c, i) => `  ${i + 1}  ${c.id}  ${c.agent}  ${c.state}`),
      ...(this.#note !== undefined ? [`  ${this.#note}`] : []),
      keys.join(' \u00b7 '),
    ];
  }
}

/**
 * Escape sequences that draw `lines` over the bottom rows of a `cols`×`rows` screen in reverse
 * video, the cursor saved and restored around them (the terminal UI's cursor stays where it was).
 */
export function drawMenu(lines: readonly string[], cols: number, rows: number): string {
  const shown = lines.slice(Math.max(0, lines.length - rows));
  const width = Math.max(1, cols);
  let out = '\x1b7';
  shown.forEach((line, i) => {
    const row = rows - shown.length + 1 + i;
    const text = [...line].slice(0, width).join('');
    out += `\x1b[${row};1H\x1b[0m\x1b[7m${text}${' '.repeat(Math.max(0, width - [...text].length))}\x1b[0m`;
  });
  return `${out}\x1b8`;
}

/** Output held while the menu is open, at most: more closes the menu (the UI is drawing a lot). */
export const MENU_HOLD_LIMIT = 1 << 20;

/** What the desk does when the menu decides (the menu has closed by then). */
export interface MenuMoves {
  /** Hand the session shown to remote control (h, Ctrl-] Ctrl-]). */
  handover(): void;
  /** Enter that sub-agent session. */
  enter(id: string): void;
  /** Back to the parent session. */
  exit(): void;
}

/** What a MenuOverlay needs of its desk. */
export interface MenuOverlayHost<Chunk extends string | Buffer> {
  /** The terminal the menu is drawn on (undefined before it is open). */
  terminal(): { readonly cols: number; readonly rows: number; write(data: string): void } | undefined;
  /** Writes the terminal UI's output to the desk (through its mirror, which the repaint reads). */
  show(output: Chunk): void;
  /** Hands `draw` the screen as the terminal UI left it (the desk's mirror), now or once it is up to date. */
  screen(draw: (screen: string) => void): void;
}

/**
 * The chord menu over a desk's screen. The terminal UI's output goes through `output()`: straight
 * to the desk, or held while the menu is open (at most MENU_HOLD_LIMIT; more closes the menu).
 * Closing writes what was held and, unless the desk redraws the screen itself, repaints it as the
 * UI left it, so nothing of the menu stays on the screen.
 */
export class MenuOverlay<Chunk extends string | Buffer> {
  #menu: DeskMenu | undefined;
  #held: Chunk[] = [];
  /** The size of what is held: characters for text, bytes for bytes (the unit the desk reads in). */
  #heldSize = 0;

  constructor(readonly host: MenuOverlayHost<Chunk>) {}

  get isOpen(): boolean {
    return this.#menu !== undefined;
  }

  /** Opens `menu` over the screen (a menu already open is replaced). */
  open(menu: DeskMenu): void {
    this.#menu = menu;
    this.draw();
  }

  /** Draws the open menu again (after a resize: the UI's own repaint is held until it closes). */
  draw(): void {
    const terminal = this.host.terminal();
    if (this.#menu && terminal) terminal.write(drawMenu(this.#menu.lines(), terminal.cols, terminal.rows));
  }

  /** The terminal UI's output: shown, or held while the menu is open. */
  output(data: Chunk): void {
    if (!this.#menu) return this.host.show(data);
    this.#held.push(data);
    this.#heldSize += data.length;
    if (this.#heldSize > MENU_HOLD_LIMIT) this.close(true);
  }

  /** Closes the menu: what the UI drew meanwhile is written, then (`repaint`) the screen without the menu. */
  close(repaint: boolean): void {
    if (!this.#menu) return;
    this.#menu = undefined;
    const held = this.#held;
    this.#held = [];
    this.#heldSize = 0;
    // One write of the whole (bytes joined as bytes: a character split between chunks stays whole).
    const output = (held.every((c) => typeof c === 'string') ? held.join('') : Buffer.concat(held as Buffer[])) as Chunk;
    if (output.length > 0) this.host.show(output);
    if (repaint) this.host.screen((screen) => !this.#menu && this.host.terminal()?.write(screen));
  }

  /**
   * Keys typed while the menu is open (call only then). The menu stays (drawn again, a note may
   * have changed) or closes, repainted unless the outcome is a move or a hand-over, which `moves`
   * of the desk then carries out and draws.
   */
  keys(keys: string, moves: MenuMoves): MenuOutcome {
    const outcome = this.#menu?.keys(keys) ?? { type: 'close' };
    if (outcome.type === 'stay') this.draw();
    else this.close(outcome.type === 'close');
    if (outcome.type === 'handover') moves.handover();
    else if (outcome.type === 'enter') moves.enter(outcome.id);
    else if (outcome.type === 'exit') moves.exit();
    return outcome;
  }
}
