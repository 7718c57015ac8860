/**
 * The host's commands in Claude Code's own terminal UI: `/ase:children`, `/ase:enter <id>`,
 * `/ase:exit` (docs/cli.md). The person types them where they type prompts; the engine's
 * `UserPromptSubmit` hook catches them, blocks the prompt (so the model never sees it) and hands the
 * line to the host (`TerminalHost.command`), whose answer is the hook's `reason`, shown in the UI.
 *
 * Why a plugin: Claude Code 2.1.330 runs no hook for a slash command it does not know ("Unknown
 * command: /ase"), and the line never reaches `UserPromptSubmit`. A plugin loaded for this process
 * only (`--plugin-dir`, in the engine's private hook directory) makes the commands known without
 * touching the user's own config; plugin commands are namespaced (`/ase:enter`). The hook receives
 * the line as typed (verified: `"prompt":"/ase:enter child-1"`), before the command's text would
 * be expanded. Should the hook fail open (the engine is gone), the expanded text reaches the model
 * instead: it only asks the model to say the command is unavailable.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The plugin's name: the commands' namespace. */
export const ASE_COMMAND_PLUGIN = 'ase';

const COMMANDS: Record<string, { description: string; hint?: string }> = {
  children: { description: 'agent-session-engine: list the sub-agent sessions of this session' },
  enter: { description: "agent-session-engine: show a sub-agent session's own terminal UI here", hint: '<session id>' },
  exit: { description: "agent-session-engine: back to the parent session's terminal UI" },
};

/** A host command typed into the UI: its verb and argument, or undefined for an ordinary prompt. */
export function parseTerminalCommand(prompt: unknown): { verb: string; arg: string } | undefined {
  if (typeof prompt !== 'string') return undefined;
  // `/ase:enter x` (the plugin's command) or `/ase enter x` (a command of the user's own named ase).
  const match = /^\s*\/ase(?::|\s+)([a-z-]+)\b\s*([\s\S]*)$/i.exec(prompt);
  if (!match) return /^\s*\/ase\s*$/i.test(prompt) ? { verb: '', arg: '' } : undefined;
  return { verb: match[1]!.toLowerCase(), arg: match[2]!.trim() };
}

/** Writes the plugin under `dir` (the private hook directory) and returns its path for `--plugin-dir`. */
export async function writeCommandPlugin(dir: string): Promise<string> {
  const root = join(dir, 'plugin');
  await mkdir(join(root, '.claude-plugin'), { recursive: true, mode: 0o700 });
  await mkdir(join(root, 'commands'), { recursive: true, mode: 0o700 });
  await writeFile(
    join(root, '.claude-plugin', 'plugin.json'),
    JSON.stringify({ name: ASE_COMMAND_PLUGIN, version: '1.0.0', description: 'agent-session-engine: sub-agent sessions in the terminal' }),
    { mode: 0o600 },
  );
  for (const [name, { description, hint }] of Object.entries(COMMANDS)) {
    const front = ['---', `description: ${description}`, ...(hint ? [`argument-hint: ${hint}`] : []), '---'].join('\n');
    const body = 'This is a command of agent-session-engine, which is not reachable now. Reply only: "ase: this command is not available right now."';
    await writeFile(join(root, 'commands', `${name}.md`), `${front}\n${body}\n`, { mode: 0o600 });
  }
  return root;
}
