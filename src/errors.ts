/**
 * The library's one error family. Everything it throws or rejects with is an `AseError` carrying a
 * stable `code` from the one list (`ERROR_CODES`, src/events/error-codes.ts), so callers branch on
 * `error.code`, never on classes or messages. Structured facts ride along in `details`.
 *
 * What the agent itself sent back over the wire (a JSON-RPC error object, a refused control
 * request) is an {@link AgentError}: still an AseError (code `AGENT_ERROR`), with the agent's own
 * code and message kept apart as data, the way the MCP SDK keeps a peer's errors apart from its own.
 */
import type { ErrorCode } from './events/error-codes.js';
import type { ErrorDetails } from './events/error-details.js';

export interface AseErrorOptions<D extends object> {
  cause?: unknown;
  /** Structured facts about the failure (limits, timeouts, names), for code rather than for reading. */
  details?: D;
}

export class AseError<D extends object = Record<string, unknown>> extends Error {
  /**
   * `'AseError'`; `'AbortError'` for code `ABORTED`, so the usual `error.name === 'AbortError'`
   * check (what Node's and the DOM's aborted operations reject with) also recognizes ours.
   */
  override readonly name: string;
  readonly details: D | undefined;
  constructor(
    readonly code: ErrorCode,
    message: string,
    options: AseErrorOptions<D> = {},
  ) {
    super(message, options.cause !== undefined ? { cause: options.cause } : undefined);
    this.name = code === 'ABORTED' ? 'AbortError' : 'AseError';
    this.details = options.details;
  }
}

export interface AgentErrorInit {
  /** What was asked: the JSON-RPC method or the control request subtype. */
  request: string;
  /** The agent's own error code (a JSON-RPC code, a Claude `error_code`), if it sent one. */
  upstreamCode?: number | string | undefined;
  /** The agent's own message, verbatim. */
  upstreamMessage: string;
  /** Any further data the agent attached. */
  data?: unknown;
  /** The message of this error; default `<request> failed (<code>): <upstream message>`. */
  message?: string;
}

/** An error the agent sent back over the wire, answering one of our requests. Code `AGENT_ERROR`. */
export class AgentError extends AseError {
  override readonly name: string = 'AgentError';
  readonly request: string;
  readonly upstreamCode: number | string | undefined;
  readonly upstreamMessage: string;
  readonly data: unknown;
  constructor(init: AgentErrorInit) {
    const code = init.upstreamCode === undefined ? '' : ` (${String(init.upstreamCode)})`;
    super('AGENT_ERROR', init.message ?? `${init.request} failed${code}: ${init.upstreamMessage}`);
    this.request = init.request;
    this.upstreamCode = init.upstreamCode;
    this.upstreamMessage = init.upstreamMessage;
    this.data = init.data;
  }
}

/** Any thrown value as one line of text (an Error's message, anything else stringified). */
export const errorMessage = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * Whether `value` is an AseError (with `code`, when given). With a code it narrows `details` to
 * that code's shape (`ErrorDetails<Code>`, src/events/error-details.ts):
 * `if (isAseError(e, 'AGENT_NOT_FOUND')) e.details?.looked`.
 */
export function isAseError<C extends ErrorCode>(value: unknown, code: C): value is AseError<ErrorDetails<C>> & { readonly code: C };
export function isAseError(value: unknown): value is AseError;
export function isAseError(value: unknown, code?: ErrorCode): value is AseError {
  return value instanceof AseError && (code === undefined || value.code === code);
}

/** `error` as it is when it is an AseError already; anything else wrapped with `code` (the original as `cause`). */
export function toAseError(error: unknown, code: ErrorCode): AseError {
  if (error instanceof AseError) return error;
  return new AseError(code, errorMessage(error), { cause: error });
}
