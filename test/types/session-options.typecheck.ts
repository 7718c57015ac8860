/**
 * Type test, run by `npm run typecheck` (tsc over test/, part of `npm test`): `createSession`'s
 * options are discriminated by `agent`, so each engine's `engineOptions` are checked at compile
 * time. Each `@ts-expect-error` line must fail to compile (tsc reports an unused directive
 * otherwise); everything else is the documented usage (README, docs/engines.md) and must compile.
 * Nothing here runs: the functions are never called.
 */
import { AseError, createSession, createSupervisor, isAseError, type BuiltInSessionOptions, type ErrorDetails, type SessionOptions } from '../../src/index.js';

declare const workDir: string;

export async function documentedOptionsCompile(): Promise<void> {
  await createSession({ agent: 'claude', workDir, engineOptions: { model: 'sonnet', permissionMode: 'acceptEdits', allowedTools: ['Bash'], maxTurns: 3 } });
  await createSession({ agent: 'claude-print', workDir, engineOptions: { model: 'haiku' } });
  await createSession({ agent: 'codex', workDir, engineOptions: { model: 'gpt-5', sandbox: 'workspace-write', approvalPolicy: 'on-request' } });
  await createSession({ agent: 'codex-exec', workDir, engineOptions: { model: 'gpt-5' } });
  await createSession({ agent: 'acp', workDir, engineOptions: { preset: 'gemini', modeId: 'default', model: 'gemini-2.5-pro' } });
  // Engines this library does not ship (and `fake`) take any record.
  await createSession({ agent: 'my-engine', workDir, engineOptions: { anything: 1 } });
  await createSession({ agent: 'fake', workDir });
  // A name only known at run time: any record, checked at run time (INVALID_OPTIONS).
  const agent: string = process.argv[2] ?? 'claude';
  await createSession({ agent, workDir, engineOptions: { model: 'sonnet' } });
  const options: SessionOptions = { agent, workDir };
  await createSession(options);
  const union: BuiltInSessionOptions = { agent: 'codex', workDir, engineOptions: { sandbox: 'read-only' } };
  await createSession(union);
  await createSupervisor().create({ agent: 'claude', workDir, engineOptions: { permissionMode: 'plan' } });
}

export async function typosFail(): Promise<void> {
  // @ts-expect-error `modle` is not a Claude option
  await createSession({ agent: 'claude', workDir, engineOptions: { modle: 'sonnet' } });
  // @ts-expect-error Claude has no permission mode `yolo`
  await createSession({ agent: 'claude', workDir, engineOptions: { permissionMode: 'yolo' } });
  // @ts-expect-error `sandbox` is Codex's, not Claude's
  await createSession({ agent: 'claude', workDir, engineOptions: { sandbox: 'read-only' } });
  // @ts-expect-error Codex has no sandbox mode `none`
  await createSession({ agent: 'codex', workDir, engineOptions: { sandbox: 'none' } });
  // @ts-expect-error `approval` is not a Codex option (it is `approvalPolicy`)
  await createSession({ agent: 'codex', workDir, engineOptions: { approval: 'never' } });
  // @ts-expect-error no ACP preset `gemeni`
  await createSession({ agent: 'acp', workDir, engineOptions: { preset: 'gemeni' } });
  // @ts-expect-error the supervisor checks them too
  await createSupervisor().create({ agent: 'claude', workDir, engineOptions: { modle: 'sonnet' } });
  // @ts-expect-error the union rejects a Codex option under `claude`
  const wrong: BuiltInSessionOptions = { agent: 'claude', workDir, engineOptions: { approvalPolicy: 'never' } };
  void wrong;
}

export function errorDetailsAreTyped(error: unknown): string[] {
  if (isAseError(error, 'AGENT_NOT_FOUND')) {
    const looked: string[] = error.details?.looked ?? [];
    const agent: string | undefined = error.details?.agent;
    void agent;
    return looked;
  }
  if (isAseError(error, 'TIMEOUT')) {
    const ms: number | undefined = error.details?.timeoutMs;
    // @ts-expect-error TIMEOUT's details have no `looked`
    void error.details?.looked;
    return [String(ms)];
  }
  const details: ErrorDetails<'SUPERVISOR_FULL'> = { maxSessions: 3 };
  // @ts-expect-error SUPERVISOR_FULL's details need a number
  const bad: ErrorDetails<'SUPERVISOR_FULL'> = { maxSessions: 'three' };
  void bad;
  return [String(details.maxSessions), String(new AseError('SESSION_NOT_FOUND', 'x', { details: { sessionId: 'a' } }).details?.sessionId)];
}
