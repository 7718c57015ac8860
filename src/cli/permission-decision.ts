/**
 * How `ase run` decides a permission prompt: `--yes` allows, `--deny` denies, otherwise it asks at a
 * terminal (y/N) and denies where there is none to ask. One rule for a session hosted here and
 * one driven through `ase serve`.
 */
import { createInterface } from 'node:readline/promises';
import type { RunArgs } from './run-args.js';
import { yellow, type Output } from './render.js';

export interface PromptToDecide {
  requestId: string;
  toolName: string;
  input: unknown;
}

export async function permissionDecision(prompt: PromptToDecide, args: Pick<RunArgs, 'permission' | 'interactive'>, output: Output): Promise<'allow' | 'deny'> {
  if (args.permission !== 'ask') return args.permission === 'allow' ? 'allow' : 'deny';
  if (!args.interactive) {
    output.err(yellow(`permission ${prompt.requestId} (${prompt.toolName}) denied: not interactive; pass --yes to allow\n`));
    return 'deny';
  }
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  const reply = await rl.question(yellow(`Allow ${prompt.toolName} ${JSON.stringify(prompt.input)}? [y/N] `));
  rl.close();
  return /^y(es)?$/i.test(reply.trim()) ? 'allow' : 'deny';
}
