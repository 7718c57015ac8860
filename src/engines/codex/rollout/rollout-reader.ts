/**
 * The pure core of the tailer: file bytes in (any chunking), TailedEvents out. No I/O, no timers,
 * so chunking and resume behaviour are testable exhaustively.
 *
 * Bytes must be pushed contiguously from `readOffset` (always 0 at construction: resuming re-reads
 * the file from the start with events suppressed up to the cursor, see cursor.ts). A line is
 * processed only once its '\n' has arrived. Malformed, over-long and unmapped lines are skipped
 * and recorded in `diagnostics`, never thrown.
 */
import { ByteLineReader, DEFAULT_MAX_ROLLOUT_LINE_BYTES, type RawLine } from './line-reader.js';
import type { RolloutCursor, RolloutDiagnostic, TailedEvent } from './cursor.js';
import { parseRolloutLine } from './rollout-line.js';
import { RolloutTranslator, type TranslatedEvent } from './translate.js';

export interface RolloutReaderOptions {
  /** resume after this cursor (events up to it are not emitted again) */
  from?: RolloutCursor;
  maxLineBytes?: number;
  /** diagnostics kept (oldest dropped first; default 1000) */
  maxDiagnostics?: number;
}

const EXCERPT_CHARS = 200;

export class RolloutReader {
  readonly diagnostics: RolloutDiagnostic[] = [];
  /** diagnostics dropped because of the cap */
  droppedDiagnostics = 0;
  /** Optional observer of diagnostics as they are recorded (the tailer forwards them). */
  onDiagnostic: ((diagnostic: RolloutDiagnostic) => void) | undefined;
  private readonly lines: ByteLineReader;
  private readonly translator: RolloutTranslator;
  private readonly maxDiagnostics: number;
  private readonly from: RolloutCursor | undefined;
  private lineIndex = 0;
  private lastOrdinal: number | undefined;
  private fromChecked = false;

  constructor(
    readonly path: string,
    options: RolloutReaderOptions = {},
  ) {
    this.lines = new ByteLineReader(0, options.maxLineBytes ?? DEFAULT_MAX_ROLLOUT_LINE_BYTES);
    this.translator = new RolloutTranslator(path);
    this.maxDiagnostics = options.maxDiagnostics ?? 1000;
    this.from = options.from;
    if (options.from && options.from.path !== path) {
      this.record({ kind: 'position', message: `resume cursor is for ${options.from.path}, not ${path}; using its offsets anyway` });
    }
  }

  /** File offset the next pushed chunk must start at. */
  get readOffset(): number {
    return this.lines.consumedOffset + this.lines.carriedBytes;
  }

  /** Position after the last complete line (resume point once every emitted event is handled). */
  get cursor(): RolloutCursor {
    return { path: this.path, byteOffset: this.lines.consumedOffset, ordinal: this.lineIndex };
  }

  get threadId(): string | undefined {
    return this.translator.threadId;
  }

  get dialect(): 'legacy' | 'paginated' | undefined {
    return this.translator.dialect;
  }

  /** The turn in progress ('' when none). */
  get turnId(): string {
    return this.translator.turnId;
  }

  push(chunk: Buffer): TailedEvent[] {
    const out: TailedEvent[] = [];
    for (const raw of this.lines.push(chunk)) this.processLine(raw, out);
    return out;
  }

  private processLine(raw: RawLine, out: TailedEvent[]): void {
    const index = this.lineIndex++;
    const { events: translated, timestamp } = this.translate(raw, index);
    // Resume: lines that end at or before the cursor were delivered; the cursor's own line may be partly delivered.
    let skip = 0;
    if (this.from) {
      if (raw.end <= this.from.byteOffset) {
        if (raw.end === this.from.byteOffset) this.checkFrom(index + 1);
        return;
      }
      if (raw.start < this.from.byteOffset) {
        this.record({ kind: 'position', message: `resume offset ${this.from.byteOffset} is inside line ${index} (${raw.start}–${raw.end}); resuming after it`, line: index, byteOffset: raw.start });
        return;
      }
      if (raw.start === this.from.byteOffset) {
        if (this.from.byteOffset === 0) this.checkFrom(0);
        skip = this.from.eventsDelivered ?? 0;
      }
    }
    translated.forEach(({ event, key }, i) => {
      if (i < skip) return;
      const last = i === translated.length - 1;
      const cursor: RolloutCursor = last
        ? { path: this.path, byteOffset: raw.end, ordinal: index + 1 }
        : { path: this.path, byteOffset: raw.start, ordinal: index, eventsDelivered: i + 1 };
      out.push({ event, key, cursor, line: index, ...(timestamp !== undefined ? { timestamp } : {}) });
    });
  }

  private translate(raw: RawLine, index: number): { events: TranslatedEvent[]; timestamp?: string } {
    if (raw.tooLong) {
      this.record({ kind: 'line_too_long', message: `line longer than ${this.lines.maxLineBytes} bytes skipped`, line: index, byteOffset: raw.start });
      return { events: [] };
    }
    const text = raw.bytes.toString('utf8');
    if (text.trim() === '') return { events: [] };
    const parsed = parseRolloutLine(text);
    if (!parsed.ok) {
      this.record({ kind: 'malformed', message: parsed.reason, line: index, byteOffset: raw.start, excerpt: text.slice(0, EXCERPT_CHARS) });
      return { events: [] };
    }
    const { line } = parsed;
    if (line.ordinal !== undefined) {
      if (this.lastOrdinal !== undefined && line.ordinal <= this.lastOrdinal) {
        this.record({ kind: 'position', message: `ordinal ${line.ordinal} after ${this.lastOrdinal}`, line: index, byteOffset: raw.start });
      }
      this.lastOrdinal = line.ordinal;
    }
    const { events, note } = this.translator.translate(line);
    if (note) this.record({ kind: 'unhandled', message: note, line: index, byteOffset: raw.start, excerpt: text.slice(0, EXCERPT_CHARS) });
    return { events, ...(line.timestamp !== undefined ? { timestamp: line.timestamp } : {}) };
  }

  /** The cursor's line count must match the file's at its offset; otherwise the file changed. */
  private checkFrom(linesBefore: number): void {
    if (this.fromChecked || !this.from) return;
    this.fromChecked = true;
    if (linesBefore !== this.from.ordinal) {
      this.record({ kind: 'position', message: `resume cursor says ${this.from.ordinal} lines before offset ${this.from.byteOffset}, the file has ${linesBefore}`, byteOffset: this.from.byteOffset });
    }
  }

  /** Records a diagnostic (also used by the tailer for I/O and listener problems). */
  record(diagnostic: RolloutDiagnostic): void {
    this.diagnostics.push(diagnostic);
    if (this.diagnostics.length > this.maxDiagnostics) {
      this.diagnostics.shift();
      this.droppedDiagnostics++;
    }
    this.onDiagnostic?.(diagnostic);
  }
}
