/**
 * A readable byte stream read line by line under a cap: the one read loop under every NDJSON
 * reader (a supervised agent's stdout in ndjson-process.ts, an ACP agent's stdout in
 * acp/agent-stream.ts), so both treat a too-long line, the last line without '\n' and the end of
 * the stream alike. Each reader adds only what a line means to it.
 *
 * - Lines are handed over synchronously, in stream order, as each chunk completes them.
 * - A line over the cap (line-splitter.ts) hands over the lines before it in that chunk, then
 *   `tooLong`; from then on nothing more is read (what still arrives is dropped).
 * - At the end of the stream the last line is handed over even without its '\n', then `end`.
 */
import type { Readable } from 'node:stream';
import { isLineTooLong, LineSplitter, type LineTooLongError } from './line-splitter.js';

export interface LineReaderHandlers {
  /** One line (its '\n' and one '\r' stripped), in stream order. */
  line(line: string): void;
  /** A line over the cap: the lines before it were handed over; nothing more is. */
  tooLong(error: LineTooLongError): void;
  /** The stream ended; its last line, if any, was handed over. */
  end?(): void;
  /** The stream errored. Without this handler the reader does not listen for errors (the stream's owner does). */
  error?(error: unknown): void;
}

export interface LineReaderOptions {
  /** The longest line read (line-splitter.ts's default when absent). */
  maxLineBytes?: number;
}

/** Reads `stream` from now on; returns `stop`, which removes the reader's listeners (idempotent). */
export function readLines(stream: Readable, handlers: LineReaderHandlers, options: LineReaderOptions = {}): () => void {
  const splitter = new LineSplitter(options.maxLineBytes !== undefined ? { maxLineBytes: options.maxLineBytes } : {});
  /** A too-long line was reported: nothing more is handed over. */
  let overflowed = false;
  const onData = (chunk: Buffer): void => {
    if (overflowed) return;
    let lines: string[];
    try {
      lines = splitter.push(chunk);
    } catch (error) {
      // push throws only the latched too-long error (it is never called after end()).
      if (!isLineTooLong(error)) throw error;
      overflowed = true;
      for (const line of error.details.precedingLines) handlers.line(line);
      handlers.tooLong(error);
      return;
    }
    for (const line of lines) handlers.line(line);
  };
  const onEnd = (): void => {
    stop();
    if (!overflowed) {
      const { line } = splitter.end();
      if (line !== undefined) handlers.line(line);
    }
    handlers.end?.();
  };
  const onError = (error: unknown): void => {
    stop();
    handlers.error?.(error);
  };
  const stop = (): void => {
    stream.off('data', onData);
    stream.off('end', onEnd);
    stream.off('error', onError);
  };
  stream.on('data', onData);
  stream.on('end', onEnd);
  if (handlers.error) stream.on('error', onError);
  return stop;
}
