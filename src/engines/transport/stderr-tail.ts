/**
 * A bounded ring buffer keeping the last N bytes (default 8 KiB) of a stream — for error messages
 * such as "agent exited with code 1. stderr: <tail>". Memory is fixed at N bytes whatever the
 * stream's volume.
 */
import type { Readable } from 'node:stream';
import { AseError } from '../../errors.js';

export const DEFAULT_STDERR_TAIL_BYTES = 8 * 1024;

export class StderrTail {
  readonly capacity: number;
  private readonly ring: Buffer;
  private writePos = 0;
  private size = 0;
  /** Total bytes ever pushed. */
  totalBytes = 0;

  constructor(capacity: number = DEFAULT_STDERR_TAIL_BYTES) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new AseError('INVALID_OPTIONS', `capacity must be a positive integer, got ${capacity}`);
    this.capacity = capacity;
    this.ring = Buffer.alloc(capacity);
  }

  /** Follows a stream (switches it to flowing mode). Returns a detach function. */
  attach(stream: Readable): () => void {
    const onData = (chunk: Buffer | string): void => this.push(chunk);
    stream.on('data', onData);
    return () => stream.off('data', onData);
  }

  push(chunk: Buffer | string): void {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    this.totalBytes += buf.length;
    if (buf.length >= this.capacity) {
      buf.copy(this.ring, 0, buf.length - this.capacity);
      this.writePos = 0;
      this.size = this.capacity;
      return;
    }
    const first = Math.min(buf.length, this.capacity - this.writePos);
    buf.copy(this.ring, this.writePos, 0, first);
    if (first < buf.length) buf.copy(this.ring, 0, first);
    this.writePos = (this.writePos + buf.length) % this.capacity;
    this.size = Math.min(this.capacity, this.size + buf.length);
  }

  /** True when earlier bytes were dropped. */
  get truncated(): boolean {
    return this.totalBytes > this.size;
  }

  /** The retained bytes, oldest first. */
  bytes(): Buffer {
    if (this.size < this.capacity) return Buffer.from(this.ring.subarray(0, this.size));
    return Buffer.concat([this.ring.subarray(this.writePos), this.ring.subarray(0, this.writePos)]);
  }

  /**
   * The retained bytes decoded as UTF-8. When truncated, leading UTF-8 continuation bytes (a
   * character cut by the ring) are dropped instead of rendering as U+FFFD.
   */
  text(): string {
    let buf = this.bytes();
    if (this.truncated) {
      let skip = 0;
      while (skip < buf.length && skip < 3 && ((buf[skip] ?? 0) & 0xc0) === 0x80) skip++;
      buf = buf.subarray(skip);
    }
    return buf.toString('utf8');
  }
}
