/**
 * The agent's stdio as the SDK's `Stream`, read by our own NDJSON splitter (issue 24).
 *
 * Why not the SDK's `ndJsonStream`: a turn's bulk is `session/update` notifications, and through
 * the SDK each one went Node stream → WHATWG stream → the SDK's async line reader → a second
 * WHATWG stream (our ordered tap) → the SDK's dispatcher, which zod-parses every update in its
 * built-in session router before our no-op handler; a profile of a 50,000-update turn put that
 * path at about two thirds of the engine's CPU time (docs/performance-notes.md §9). Here each line is
 * split and parsed once, the engine's observer sees every message synchronously in wire order
 * (what the tap of the SDK stream did before), and only the messages the SDK still has work for (responses to
 * our requests, the agent's requests, other notifications) are handed to it. The SDK keeps its
 * types and its request/response bookkeeping.
 *
 * What the SDK's reader did with bad input is kept: a line that is not JSON is answered with a
 * JSON-RPC parse error (-32700), a batch or a non-object with an invalid-request error (-32600),
 * both with `id: null`; a blank line is skipped; the last line is read even without a '\n'; a line
 * over the SDK's limit (DEFAULT_MAX_MESSAGE_BYTES, 32 MiB) errors the stream, which closes the
 * connection (the engine then stops the agent and reports why).
 */
import type { Readable, Writable } from 'node:stream';
import type { AnyMessage, RequestError, Stream } from '@agentclientprotocol/sdk';
import { acpSdk } from './sdk.js';
import { readLines } from '../transport/line-reader.js';
import { NdjsonWriter, parseLine } from '../transport/ndjson.js';
import { isRecord, type Json } from './messages.js';

export interface AgentStreamObserver {
  /**
   * A message the agent sent (a JSON object), with its line as read, synchronously and in wire
   * order, before the SDK sees it. Returns true when the SDK has nothing to do with it (it is then
   * not handed on). A throw is reported to `observerFailed` and the message handed on.
   */
  inbound(message: Json, line: string): boolean;
  /** A message the SDK is sending to the agent, before it is written. */
  outbound(message: AnyMessage): void;
  /** A line that was no JSON-RPC message (answered with a JSON-RPC error, as the SDK would). */
  invalid(reason: string, line: string): void;
  observerFailed(error: unknown): void;
}

export interface AgentStreamOptions {
  /** The longest line read; a longer one closes the connection. Default: the SDK's, 32 MiB. */
  maxMessageBytes?: number;
}

/** Connects the agent's stdout and stdin as an SDK `Stream`; reading starts at once. */
export function agentStream(stdout: Readable, stdin: Writable, observer: AgentStreamObserver, options: AgentStreamOptions = {}): Stream {
  const { DEFAULT_MAX_MESSAGE_BYTES, RequestError } = acpSdk();
  const writer = new NdjsonWriter(stdin);
  let controller!: ReadableStreamDefaultController<AnyMessage>;
  /** The SDK's side is closed, errored or cancelled: nothing more is handed to it. */
  let finished = false;

  // Protocol errors for input that never became a message: not seen by the tap, as with the SDK.
  const refuse = (error: RequestError): void => void writer.write({ jsonrpc: '2.0', id: null, error: error.toErrorResponse() }).catch(() => undefined);

  const onLine = (line: string): void => {
    const parsed = parseLine(line);
    if (parsed === undefined) return;
    if (!parsed.ok) {
      observer.invalid('not JSON', line);
      refuse(RequestError.parseError());
      return;
    }
    const message = parsed.value;
    if (!isRecord(message)) {
      observer.invalid(Array.isArray(message) ? 'a JSON-RPC batch (ACP has none)' : 'not a JSON-RPC object', line);
      refuse(Array.isArray(message) ? RequestError.invalidRequest(undefined, 'JSON-RPC batches are not supported') : RequestError.invalidRequest(message));
      return;
    }
    let handled = false;
    try {
      handled = observer.inbound(message, line);
    } catch (error) {
      observer.observerFailed(error);
    }
    if (!handled && !finished) controller.enqueue(message as AnyMessage);
  };

  const fail = (error: unknown): void => {
    stop();
    if (finished) return;
    finished = true;
    // An errored ReadableStream drops what is still queued: the SDK reads on microtasks, so
    // erroring on the next macrotask lets it take the messages that came before the failure.
    setImmediate(() => controller.error(error));
  };
  const readable = new ReadableStream<AnyMessage>({
    start(c) {
      controller = c;
    },
    cancel() {
      // The SDK closed the connection: stop reading, as its reader's cancel did (it destroyed stdout).
      finished = true;
      stop();
      stdout.destroy();
    },
  });
  const writable = new WritableStream<AnyMessage>({
    write(message) {
      try {
        observer.outbound(message);
      } catch (error) {
        observer.observerFailed(error);
      }
      return writer.write(message);
    },
  });
  // Reading starts last: the controller above is set by now.
  const stop = readLines(
    stdout,
    {
      line: onLine,
      // A line over the limit: what came before it in its chunk was read, nothing after it is.
      tooLong: (error) => {
        fail(error);
        stdout.destroy();
      },
      end: () => {
        if (finished) return;
        finished = true;
        controller.close();
      },
      error: fail,
    },
    { maxLineBytes: options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES },
  );
  return { readable, writable };
}
