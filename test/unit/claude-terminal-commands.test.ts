/**
 * The host's `/ase:*` commands in Claude Code's UI (claude/local/terminal-commands.ts): which typed
 * lines are commands (caught before the model) and which are ordinary prompts, and the plugin that
 * makes Claude Code know them (the real CLI runs them in test/real-cli/ase-sub-agent-tmux.test.ts).
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseTerminalCommand, writeCommandPlugin } from '../../src/engines/claude/local/terminal-commands.js';
import { SessionTerminal } from '../../src/session/session-terminal.js';

describe('host commands typed in the terminal UI', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('reads /ase:verb and /ase verb lines; everything else is a prompt for the model', () => {
    expect(parseTerminalCommand('/ase:enter abc-1')).toEqual({ verb: 'enter', arg: 'abc-1' });
    expect(parseTerminalCommand('  /ase enter   abc-1  ')).toEqual({ verb: 'enter', arg: 'abc-1' });
    expect(parseTerminalCommand('/ASE:Children')).toEqual({ verb: 'children', arg: '' });
    expect(parseTerminalCommand('/ase:exit')).toEqual({ verb: 'exit', arg: '' });
    expect(parseTerminalCommand('/ase')).toEqual({ verb: '', arg: '' });
    for (const prompt of ['please /ase:enter x', '/asex enter', '/model', 'ase enter x', '', undefined, 42, { prompt: '/ase:exit' }]) {
      expect(parseTerminalCommand(prompt)).toBeUndefined();
    }
    // A huge line is parsed once, linearly, and still a command.
    expect(parseTerminalCommand(`/ase:enter ${'x'.repeat(1_000_000)}`)?.arg).toHaveLength(1_000_000);
  });

  it('writes a private plugin whose commands are enter, exit and children', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ase-cmd-'));
    dirs.push(dir);
    const root = await writeCommandPlugin(dir);
    expect(JSON.parse(readFileSync(join(root, '.claude-plugin', 'plugin.json'), 'utf8'))).toMatchObject({ name: 'ase' });
    for (const name of ['enter', 'exit', 'children']) {
      const file = join(root, 'commands', `${name}.md`);
      expect(readFileSync(file, 'utf8')).toMatch(/^---\ndescription: agent-session-engine/);
      expect(statSync(file).mode & 0o077).toBe(0);
    }
  });

  it('the session terminal hands a line to its one handler; without one, or when it throws, the person is told', async () => {
    const terminal = new SessionTerminal();
    expect(await terminal.command('/ase:children')).toMatch(/no host here handles \/ase commands/);
    const off = terminal.onCommand((line) => `got ${line}`);
    expect(await terminal.command('/ase:children')).toBe('got /ase:children');
    terminal.onCommand(() => {
      throw new Error('boom');
    });
    expect(await terminal.command('/ase:exit')).toBe('/ase:exit: boom');
    off(); // not the current handler any more: changes nothing
    expect(await terminal.command('/ase:exit')).toBe('/ase:exit: boom');
  });
});
