/**
 * Text that arrives in many small pieces and is wanted whole only at the end: an ACP message,
 * streamed as one `agent_message_chunk` per few tokens and emitted as a `message` once it closes.
 *
 * Why not `text += piece`: that makes a rope, one cons-string node per piece besides the piece
 * itself, and all of it lives until the message ends, so the young generation copies it at every
 * scavenge and then promotes it. On the side-by-side ACP turn (one message of 50,000 chunks) that
 * made each scavenge of the engine's process 3–7 ms instead of under 1, and cost the engine 5–10%
 * more CPU (docs/performance-notes.md 13, pass 9). Here the pieces are copied, a few at a time, into
 * a buffer outside the JS heap and die young; the string is made once, by `toString()`.
 *
 * Exact for every JS string: while every piece is ASCII the buffer holds one byte per character
 * (and `toString()` returns a one-byte string, as `+=` would have); from the first other piece on
 * it holds UTF-16 code units as they are, so lone surrogates, and a surrogate pair split across
 * two pieces, come back unchanged.
 */
import { constants } from 'node:buffer';

/** The smallest buffer an accumulator starts with (a message is usually more than a few pieces). */
const INITIAL_BYTES = 256;
/** Pieces (or characters) gathered by `+=` before they are copied out together. */
const PIECES_PER_COPY = 32;
const CHARS_PER_COPY = 2048;
/** Characters above which a piece's room is counted exactly rather than assumed at its worst. */
const EXACT_ABOVE = 64 * 1024;
/** The longest string V8 makes. */
const MAX_LENGTH = constants.MAX_STRING_LENGTH;

export class TextAccumulator {
  #bytes: Buffer;
  /** Bytes of `#bytes` in use. */
  #used = 0;
  /** From the first non-ASCII piece on, the buffer holds UTF-16LE code units (two bytes each). */
  #wide = false;
  /** The latest pieces, joined (`+=` on a few is cheap), not copied into the buffer yet. */
  #recent = '';
  #recentPieces = 0;

  constructor(first = '') {
    this.#bytes = Buffer.allocUnsafe(INITIAL_BYTES);
    this.append(first);
  }

  /** Characters (UTF-16 code units) so far: the `length` of what `toString()` returns. */
  get length(): number {
    return (this.#wide ? this.#used / 2 : this.#used) + this.#recent.length;
  }

  /** Adds `piece` at the end. Throws a RangeError, as `+=` does, when the text would outgrow a JS string. */
  append(piece: string): void {
    if (piece.length === 0) return;
    if (this.length + piece.length > MAX_LENGTH) throw new RangeError('Invalid string length');
    this.#recent += piece;
    // One copy per few pieces: a write has a fixed cost larger than a short `+=`.
    if (++this.#recentPieces >= PIECES_PER_COPY || this.#recent.length >= CHARS_PER_COPY) this.#copyRecent();
  }

  toString(): string {
    this.#copyRecent();
    return this.#bytes.toString(this.#wide ? 'utf16le' : 'latin1', 0, this.#used);
  }

  #copyRecent(): void {
    const piece = this.#recent;
    this.#recent = '';
    this.#recentPieces = 0;
    if (piece.length === 0) return;
    if (!this.#wide) {
      // Room for all of it, so the write is never cut short: the worst case (3 UTF-8 bytes per code
      // unit) for a short piece, its exact size for a long one (a buffer 3 times a huge chunk is not).
      this.#reserve(piece.length > EXACT_ABOVE ? Buffer.byteLength(piece, 'utf8') : piece.length * 3);
      const written = this.#bytes.write(piece, this.#used, 'utf8');
      // One byte per code unit only when every one of them is ASCII.
      if (written === piece.length) {
        this.#used += written;
        return;
      }
      this.#widen();
    }
    this.#reserve(piece.length * 2);
    this.#used += this.#bytes.write(piece, this.#used, 'utf16le');
  }

  #reserve(extra: number): void {
    const needed = this.#used + extra;
    if (needed <= this.#bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.max(needed, this.#bytes.length * 2));
    this.#bytes.copy(grown, 0, 0, this.#used);
    this.#bytes = grown;
  }

  /** Re-encodes the ASCII held so far as UTF-16LE (once per accumulator at most). */
  #widen(): void {
    const ascii = this.#bytes.toString('latin1', 0, this.#used);
    this.#bytes = Buffer.allocUnsafe(Math.max(INITIAL_BYTES, this.#used * 4));
    this.#used = this.#bytes.write(ascii, 0, 'utf16le');
    this.#wide = true;
  }
}
