/**
 * What the host-tool tests on the real CLIs share: the tools a session offers (`lookup_ticket`,
 * answered from a table; `explode`, whose handler throws), the record of what the handlers were
 * given, a stopwatch for the round trip seen by the mock model (it sent the call → it got the
 * result), and the check that a loopback port is closed.
 */
import { connect } from 'node:net';
import { HostToolbox, type HostTool, type HostToolContext } from '../../src/engines/core/host-tools.js';

export interface HandlerCall {
  name: string;
  args: unknown;
  ctx: Omit<HostToolContext, 'signal'>;
}

export interface HostToolKit {
  readonly tools: HostTool<never>[];
  readonly toolbox: HostToolbox;
  /** What the handlers were called with, in order. */
  readonly calls: HandlerCall[];
  /** Why `hang`'s signal was aborted, once it was. */
  readonly hangAborted: { reason?: unknown };
}

export const TICKET_ANSWER = 'T-42 is open: the login page times out (owner: ana)';

/**
 * `lookup_ticket {id}` answers {@link TICKET_ANSWER} for T-42; `explode {}` throws `kaboom from
 * the host`; `hang {}` runs until its signal aborts (at most a minute); `deploy {env}` answers
 * `deployed to <env>` and needs the person's permission (`requiresPermission`).
 */
export function hostToolKit(sessionId = 'host-tools-test'): HostToolKit {
  const calls: HandlerCall[] = [];
  const hangAborted: { reason?: unknown } = {};
  const note = (name: string, args: unknown, { signal: _signal, ...ctx }: HostToolContext) => calls.push({ name, args, ctx });
  const tools: HostTool<never>[] = [
    {
      name: 'lookup_ticket',
      description: 'Looks up a ticket of the issue tracker by its id and returns its status.',
      inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'], additionalProperties: false },
      handler: (args: { id: string }, ctx: HostToolContext) => {
        note('lookup_ticket', args, ctx);
        return args.id === 'T-42' ? TICKET_ANSWER : `no ticket ${args.id}`;
      },
    } as HostTool<never>,
    {
      name: 'explode',
      description: 'Always fails.',
      inputSchema: { type: 'object', properties: {} },
      handler: (args: unknown, ctx: HostToolContext) => {
        note('explode', args, ctx);
        throw new Error('kaboom from the host');
      },
    } as HostTool<never>,
    {
      name: 'hang',
      description: 'Runs until it is aborted.',
      inputSchema: { type: 'object', properties: {} },
      handler: async (args: unknown, ctx: HostToolContext) => {
        note('hang', args, ctx);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 60_000);
          ctx.signal.addEventListener('abort', () => {
            hangAborted.reason = ctx.signal.reason;
            clearTimeout(timer);
            resolve();
          });
        });
        return 'hang ended';
      },
    } as HostTool<never>,
  ];
  tools.push({
    name: 'deploy',
    description: 'Deploys to an environment (asks the person first).',
    inputSchema: { type: 'object', properties: { env: { type: 'string' } }, required: ['env'] },
    requiresPermission: true,
    handler: (args: { env: string }, ctx: HostToolContext) => {
      note('deploy', args, ctx);
      return `deployed to ${args.env}`;
    },
  } as HostTool<never>);
  return { tools, toolbox: new HostToolbox(tools, { sessionId }), calls, hangAborted };
}

/** Round trips seen by a mock model: `sent()` when it hands out the call, `received()` when the result comes back. */
export class RoundTrips {
  readonly samples: number[] = [];
  #sentAt: number | undefined;

  sent(): void {
    this.#sentAt = performance.now();
  }

  received(): void {
    if (this.#sentAt === undefined) return;
    this.samples.push(performance.now() - this.#sentAt);
    this.#sentAt = undefined;
  }
}

/** True when nothing listens on 127.0.0.1:`port` any more. */
export function portClosed(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.on('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.on('error', () => resolve(true));
  });
}

/** The loopback MCP server's port in a URL an engine handed the agent. */
export function loopbackPortIn(text: string): number | undefined {
  const m = /http:\/\/127\.0\.0\.1:(\d+)\/mcp\/[A-Za-z0-9_-]{43}/.exec(text);
  return m ? Number(m[1]) : undefined;
}
