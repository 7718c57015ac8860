/**
 * The desk's chord menu as keys in, outcomes out (src/cli/desk-menu.ts), the overlay both desks put
 * it on the screen with (output held while it is open, the screen repainted on close), and the typed result's
 * paste safety (src/cli/typed-result.ts). The menu on a real terminal, over the real Codex UI, is
 * test/real-cli/ase-sub-agent-codex-tmux.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { DeskMenu, drawMenu, MENU_HOLD_LIMIT, MenuOverlay } from '../../src/cli/desk-menu.js';
import { pasteSafe } from '../../src/session/typed-result.js';

const kids = [
  { id: 'child-a', agent: 'codex', state: 'active' },
  { id: 'child-b', agent: 'claude', state: 'completed' },
];

describe('DeskMenu', () => {
  it('digits enter a listed child; a completed or missing one is refused with a note and the menu stays', () => {
    const menu = new DeskMenu('parent', kids, false);
    expect(menu.lines()).toEqual([
      'ase \u00b7 sub-agent sessions of parent:',
      '  1  child-a  codex  active',
      '  2  child-b  claude  completed',
      '1-9 enter \u00b7 x back to parent \u00b7 h hand to remote control \u00b7 Esc close',
    ]);
    expect(menu.keys('2')).toEqual({ type: 'stay' });
    expect(menu.lines()).toContain('  child-b is completed');
    expect(menu.keys('7')).toEqual({ type: 'stay' });
    expect(menu.lines()).toContain('  no sub-agent session 7');
    expect(menu.keys('1')).toEqual({ type: 'enter', id: 'child-a' });
    expect(menu.keys('e')).toEqual({ type: 'enter', id: 'child-a' }); // the only one open
  });

  it('x exits below the root and is refused at the root; h and Ctrl-] hand over; Esc, an arrow key, any other key close', () => {
    expect(new DeskMenu('child', [], false).keys('x')).toEqual({ type: 'exit' });
    const top = new DeskMenu('root', [], true);
    expect(top.keys('x')).toEqual({ type: 'stay' });
    expect(top.lines().join('\n')).toMatch(/root is the top session/);
    expect(top.lines().at(-1)).not.toMatch(/back to parent/);
    expect(top.keys('e')).toEqual({ type: 'stay' });
    expect(top.keys('h')).toEqual({ type: 'handover' });
    expect(top.keys('\x1d')).toEqual({ type: 'handover' });
    expect(top.keys('\x1b')).toEqual({ type: 'close' });
    expect(top.keys('\x1b[A')).toEqual({ type: 'close' }); // its tail ("[A") is not read as keys
    expect(top.keys('q')).toEqual({ type: 'close' });
    expect(top.keys('\r')).toEqual({ type: 'close' });
    // A burst: the first key that decides wins, the rest are dropped.
    expect(new DeskMenu('child', kids, false).keys('x1h')).toEqual({ type: 'exit' });
  });

  it('lists at most nine children (one key each) and says how many there are', () => {
    const many = Array.from({ length: 12 }, (_, i) => ({ id: `c${i}`, agent: 'fake', state: 'active' }));
    const menu = new DeskMenu('p', many, true);
    expect(menu.lines()[0]).toMatch(/first 9 of 12/);
    expect(menu.lines().filter((l) => /^ {2}\d {2}c/.test(l))).toHaveLength(9);
    expect(menu.keys('9')).toEqual({ type: 'enter', id: 'c8' });
  });

  it('drawMenu writes the bottom rows in reverse video, cut to the width, the cursor saved and restored', () => {
    const out = drawMenu(['a line far too long for the screen', 'keys'], 10, 5);
    expect(out.startsWith('\x1b7')).toBe(true);
    expect(out.endsWith('\x1b8')).toBe(true);
    expect(out).toContain('\x1b[4;1H\x1b[0m\x1b[7ma line far\x1b[0m');
    expect(out).toContain('\x1b[5;1H\x1b[0m\x1b[7mkeys      \x1b[0m');
    // More lines than rows: the last ones are drawn.
    expect(drawMenu(['1', '2', '3'], 4, 2)).not.toContain('1   ');
  });
});

/** A desk's screen as a MenuOverlay host sees it: what reached the terminal, and the mirror's screen. */
function desk<Chunk extends string | Buffer>() {
  const terminal = { cols: 40, rows: 6, written: [] as string[], write: (data: string) => void terminal.written.push(data) };
  const shown: Chunk[] = [];
  let pending: ((screen: string) => void) | undefined;
  const overlay = new MenuOverlay<Chunk>({ terminal: () => terminal, show: (output) => void shown.push(output), screen: (draw) => (pending = draw) });
  /** The desk's moves, as called. */
  const moved: string[] = [];
  const moves = { handover: () => void moved.push('handover'), enter: (id: string) => void moved.push(`enter ${id}`), exit: () => void moved.push('exit') };
  return { terminal, shown, overlay, moved, moves, repaint: (screen: string) => pending?.(screen) };
}

describe('MenuOverlay', () => {
  it('output passes straight through while closed; while open it is held and written in one piece on close, then the screen repainted', () => {
    const d = desk<string>();
    d.overlay.output('a');
    expect(d.shown).toEqual(['a']);
    d.overlay.open(new DeskMenu('p', kids, true));
    expect(d.overlay.isOpen).toBe(true);
    expect(d.terminal.written.at(-1)).toContain('sub-agent sessions of p');
    d.overlay.output('b');
    d.overlay.output('c');
    expect(d.shown).toEqual(['a']);
    expect(d.overlay.keys('q', d.moves)).toEqual({ type: 'close' });
    expect(d.moved).toEqual([]);
    expect(d.overlay.isOpen).toBe(false);
    expect(d.shown).toEqual(['a', 'bc']);
    d.repaint('SCREEN');
    expect(d.terminal.written.at(-1)).toBe('SCREEN');
  });

  it('bytes are joined as bytes: a character split between two chunks arrives whole', () => {
    const d = desk<Buffer>();
    d.overlay.open(new DeskMenu('p', [], true));
    const euro = Buffer.from('€');
    d.overlay.output(euro.subarray(0, 1));
    d.overlay.output(euro.subarray(1));
    d.overlay.close(false);
    expect(d.shown.map((b) => b.toString('utf8'))).toEqual(['€']);
  });

  it("a key that stays redraws the menu (its note); a move or a hand-over closes it without a repaint and is the desk's to do; the repaint never covers a menu opened again", () => {
    const d = desk<string>();
    d.overlay.open(new DeskMenu('p', kids, false));
    expect(d.overlay.keys('2', d.moves)).toEqual({ type: 'stay' });
    expect(d.terminal.written.at(-1)).toContain('child-b is completed');
    expect(d.overlay.keys('1', d.moves)).toEqual({ type: 'enter', id: 'child-a' });
    expect(d.overlay.isOpen).toBe(false);
    d.repaint('SCREEN');
    expect(d.terminal.written).not.toContain('SCREEN');
    d.overlay.open(new DeskMenu('p', kids, false));
    expect(d.overlay.keys('h', d.moves)).toEqual({ type: 'handover' });
    d.overlay.open(new DeskMenu('c', [], false));
    expect(d.overlay.keys('x', d.moves)).toEqual({ type: 'exit' });
    expect(d.moved).toEqual(['enter child-a', 'handover', 'exit']);
    d.overlay.open(new DeskMenu('p', kids, false));
    d.overlay.close(true);
    d.overlay.open(new DeskMenu('p', kids, false));
    d.repaint('LATE SCREEN');
    expect(d.terminal.written).not.toContain('LATE SCREEN');
  });

  it('more output than it may hold closes the menu: everything is written, nothing lost', () => {
    const d = desk<string>();
    d.overlay.open(new DeskMenu('p', [], true));
    const chunk = 'x'.repeat(64 * 1024);
    let sent = 0;
    while (d.overlay.isOpen) {
      d.overlay.output(chunk);
      sent += chunk.length;
    }
    expect(sent).toBeGreaterThan(MENU_HOLD_LIMIT);
    expect(d.shown.join('').length).toBe(sent);
    d.overlay.output('after');
    expect(d.shown.at(-1)).toBe('after');
  });
});

describe('pasteSafe', () => {
  it('keeps newlines and tabs, drops what could end the paste or act as keys', () => {
    expect(pasteSafe('a\r\nb\tc')).toBe('a\nb\tc');
    expect(pasteSafe('before\x1b[201~\x03rm -rf /\x1b[200~after')).toBe('before[201~rm -rf /[200~after');
    expect(pasteSafe('bell\x07 del\x7f c1\x9b')).toBe('bell del c1');
  });
});
