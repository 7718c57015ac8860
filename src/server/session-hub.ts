/**
 * Everything the server keeps about one session while clients watch it: the live Session (when
 * this host drives it), the open event streams (fan-out, presence), the inspector's recent events,
 * and the answers to `POST messages` by localId (a retry gets the same answer).
 */
import type { InspectionEvent } from 'xstate';
import { sessionMachine } from '../actors/session.js';
import type { JournaledEntry } from '../events/transcript-entry.js';
import type { TranscriptJournal } from '../runtime/journal/transcript-journal.js';
import type { Session } from '../session/session.js';
import type { SessionNotice } from '../session/notices.js';
import type { EventStream } from './event-stream.js';
import { InspectionEncoder, type InspectionWire } from './inspection.js';

export interface SessionHubOptions {
  sessionId: string;
  journal: TranscriptJournal;
  /** How long after the last stream closes before the session hears `client_offline`. */
  presenceGraceMs: number;
  /** Inspection events kept for clients that connect later. */
  inspectorBacklog: number;
  revealSecrets: boolean;
}

export class SessionHub {
  readonly id: string;
  readonly streams = new Set<EventStream>();
  readonly messages = new Map<string, Promise<{ localId: string; seq: number | null; status: string }>>();
  readonly #opts: SessionHubOptions;
  readonly #encoder: InspectionEncoder;
  /** The SessionActor's `@xstate.actor` event (with the definition) and the events since, bounded. */
  #actorEvent: InspectionWire | undefined;
  readonly #inspections: InspectionWire[] = [];
  #session: Session | undefined;
  #offlineTimer: NodeJS.Timeout | undefined;
  #lastSeq = 0;
  readonly #durableListeners = new Set<(entry: JournaledEntry) => void>();
  #unwatchJournal: (() => void) | undefined;

  constructor(opts: SessionHubOptions) {
    this.id = opts.sessionId;
    this.#opts = opts;
    this.#encoder = new InspectionEncoder(opts.sessionId, sessionMachine, { revealSecrets: opts.revealSecrets });
    this.#unwatchJournal = opts.journal.watch?.(opts.sessionId, (entry) => {
      this.#lastSeq = Math.max(this.#lastSeq, entry.seq);
      for (const listener of [...this.#durableListeners]) listener(entry);
    });
  }

  get session(): Session | undefined {
    return this.#session;
  }

  /** The notice listener to hand the host when the session is created (sees notices from the start). */
  readonly onNotice = (notice: SessionNotice): void => {
    if (notice.type === 'transcript') return; // Durable: goes out from the journal, with its seq.
    const [event, data] = noticeFrame(notice);
    this.broadcast(event, data);
  };

  /** The inspection hook to hand the host. */
  readonly inspect = (event: InspectionEvent): void => {
    for (const wire of this.#encoder.encode(event, this.#lastSeq)) {
      if (wire.type === '@xstate.actor') this.#actorEvent = wire;
      else {
        this.#inspections.push(wire);
        if (this.#inspections.length > this.#opts.inspectorBacklog) this.#inspections.splice(0, this.#inspections.length - this.#opts.inspectorBacklog);
      }
      for (const stream of this.streams) if (stream.opts.inspect) stream.ephemeral('inspect', wire);
    }
  };

  attach(session: Session): void {
    this.#session = session;
    // A session starts online (an in-process caller is there); here only streams are clients.
    if (this.streams.size > 0) session.setOnline(true);
    else this.#scheduleOffline();
    void session.done.finally(() => {
      if (this.#session === session) this.#session = undefined;
    });
  }

  watchDurable(listener: (entry: JournaledEntry) => void): () => void {
    this.#durableListeners.add(listener);
    return () => this.#durableListeners.delete(listener);
  }

  /** What a new client gets first: the session's snapshot and the inspector's state. */
  greet(stream: EventStream): void {
    const session = this.#session;
    if (session) stream.ephemeral('snapshot', session.snapshot());
    if (!stream.opts.inspect) return;
    // The actor event with the latest snapshot, so a late client can draw the chart at once.
    const latest = this.#inspections.findLast((w) => w.type === '@xstate.snapshot');
    if (this.#actorEvent) stream.ephemeral('inspect', latest?.type === '@xstate.snapshot' ? { ...this.#actorEvent, snapshot: latest.snapshot } : this.#actorEvent);
    for (const wire of this.#inspections) stream.ephemeral('inspect', wire);
  }

  /** The inspector's retained events (`@xstate.actor` first). */
  inspections(): InspectionWire[] {
    return [...(this.#actorEvent ? [this.#actorEvent] : []), ...this.#inspections];
  }

  broadcast(event: string, data: unknown): void {
    for (const stream of this.streams) stream.ephemeral(event, data);
  }

  /** Presence: the first stream makes the session online; the last one closing, after a grace. */
  addStream(stream: EventStream): void {
    this.streams.add(stream);
    clearTimeout(this.#offlineTimer);
    this.#offlineTimer = undefined;
    if (this.streams.size === 1) this.#session?.setOnline(true);
  }

  removeStream(stream: EventStream): void {
    if (!this.streams.delete(stream) || this.streams.size > 0) return;
    this.#scheduleOffline();
  }

  #scheduleOffline(): void {
    clearTimeout(this.#offlineTimer);
    this.#offlineTimer = setTimeout(() => {
      this.#offlineTimer = undefined;
      if (this.streams.size === 0) this.#session?.setOnline(false);
    }, this.#opts.presenceGraceMs);
    this.#offlineTimer.unref?.();
  }

  close(): void {
    clearTimeout(this.#offlineTimer);
    this.#unwatchJournal?.();
    for (const stream of [...this.streams]) stream.close();
  }
}

/** A notice as an ephemeral frame: its event name and payload. */
function noticeFrame(notice: SessionNotice): [string, unknown] {
  switch (notice.type) {
    case 'agent':
      return ['agent', notice.event];
    case 'error':
      return ['error', { code: notice.error.code, message: notice.error.message }];
    case 'done':
      return ['done', notice.snapshot];
    default: {
      const { type, ...rest } = notice;
      return [type, rest];
    }
  }
}
