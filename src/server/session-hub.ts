/**
 * Everything the server keeps about one session while clients watch it: the live Session (when
 * this host drives it), the open event streams (fan-out, presence), the inspector's recent events,
 * and the answers to `POST messages` by localId (a retry gets the same answer).
 */
import type { InspectionEvent } from 'xstate';
import { sessionMachine } from '../actors/session.js';
import { permissionPromptOf } from '../events/ephemeral.js';
import type { JournaledEntry } from '../events/transcript-entry.js';
import type { TranscriptJournal } from '../effects/journal/transcript-journal.js';
import type { Session } from '../session/session.js';
import type { SessionNotice } from '../session/notices.js';
import { encodeFrame, type EventStream } from './event-stream.js';
import { InspectionEncoder, type InspectionWire } from './inspection.js';

export interface SessionHubOptions {
  sessionId: string;
  journal: TranscriptJournal;
  /** How long after the last stream closes before the session hears `client_offline`. */
  presenceGraceMs: number;
  /** Inspection events kept for clients that connect later. */
  inspectorBacklog: number;
  revealSecrets: boolean;
  /** Told each time the hub gets a live session (the server's terminal room follows it). */
  onAttach?: (session: Session) => void;
  /** Every ephemeral frame of the live session, whether or not a stream is open here (the relay to other hosts). */
  onFrame?: (event: string, data: unknown) => void;
}

/** How many localId -> seq answers a hub keeps (more than a session's `deliveredIdsLimit`, 256, remembers). */
const MESSAGE_SEQS_KEPT = 1024;

export class SessionHub {
  readonly id: string;
  readonly streams = new Set<EventStream>();
  /** `POST messages` by localId: the send in progress or done (`duplicate`: the session had it before), so a retry waits for the same one. */
  readonly messages = new Map<string, Promise<{ duplicate: boolean }>>();
  readonly #opts: SessionHubOptions;
  readonly #encoder: InspectionEncoder;
  /** The SessionActor's `@xstate.actor` event (with the definition) and the events since, bounded. */
  #actorEvent: InspectionWire | undefined;
  readonly #inspections: InspectionWire[] = [];
  /** Raw inspection events not encoded yet, with the journal's last seq when each happened. */
  readonly #raw: [InspectionEvent, number][] = [];
  #rawActor: [InspectionEvent, number] | undefined;
  #session: Session | undefined;
  #offlineTimer: NodeJS.Timeout | undefined;
  #lastSeq = 0;
  readonly #durableListeners = new Set<(entry: JournaledEntry, frame: Uint8Array) => void>();
  #unwatchJournal: (() => void) | undefined;
  readonly #messageSeqs = new Map<string, number>();

  constructor(opts: SessionHubOptions) {
    this.id = opts.sessionId;
    this.#opts = opts;
    this.#encoder = new InspectionEncoder(opts.sessionId, sessionMachine, { revealSecrets: opts.revealSecrets });
    this.#unwatchJournal = opts.journal.watch?.(opts.sessionId, (entry) => {
      this.#lastSeq = Math.max(this.#lastSeq, entry.seq);
      this.#noteMessage(entry);
      if (this.#durableListeners.size === 0) return;
      const frame = encodeFrame('entry', entry, entry.seq); // once, for every stream
      for (const listener of [...this.#durableListeners]) listener(entry, frame);
    });
  }

  /** Whether this hub hears the journal's appends (it cannot for a journal without `watch`). */
  get hearsJournal(): boolean {
    return this.#unwatchJournal !== undefined;
  }

  /** The seq of the `user_message` entry a `POST messages` with this localId produced, once heard here. */
  messageSeq(localId: string): number | undefined {
    return this.#messageSeqs.get(localId);
  }

  /** Keeps the newest MESSAGE_SEQS_KEPT localId -> seq: a retry is answered without reading the journal. */
  #noteMessage(entry: JournaledEntry): void {
    const localId = entry.type === 'user_message' ? (entry.payload as { localId?: unknown } | null)?.localId : undefined;
    if (typeof localId !== 'string') return;
    this.#messageSeqs.delete(localId);
    this.#messageSeqs.set(localId, entry.seq);
    if (this.#messageSeqs.size > MESSAGE_SEQS_KEPT) this.#messageSeqs.delete(this.#messageSeqs.keys().next().value!);
  }

  get session(): Session | undefined {
    return this.#session;
  }

  /** The notice listener to hand the host when the session is created (sees notices from the start). */
  readonly onNotice = (notice: SessionNotice): void => {
    if (notice.type === 'transcript') return; // Durable: goes out from the journal, with its seq.
    const [event, data] = noticeFrame(notice);
    this.#opts.onFrame?.(event, data);
    this.broadcast(event, data);
  };

  /**
   * The inspection hook to hand the host. Cheap when nobody inspects: the raw event is kept (XState
   * snapshots are immutable) and encoded (redaction included) only when a client asks for it.
   */
  readonly inspect = (event: InspectionEvent): void => {
    if (event.type === '@xstate.actor') {
      this.#actorEvent = undefined;
      this.#rawActor = [event, this.#lastSeq];
    } else if (event.type === '@xstate.snapshot' || event.type === '@xstate.event' || event.type === '@xstate.action') {
      this.#raw.push([event, this.#lastSeq]);
      if (this.#raw.length > this.#opts.inspectorBacklog * 2) this.#raw.splice(0, this.#raw.length - this.#opts.inspectorBacklog);
    } else return;
    let inspecting = false;
    for (const stream of this.streams) if (stream.opts.inspect) inspecting = true;
    if (!inspecting) return;
    for (const wire of this.#encoder.encode(event, this.#lastSeq)) {
      const frame = encodeFrame('inspect', wire);
      for (const stream of this.streams) if (stream.opts.inspect) stream.write(frame);
    }
  };

  /** Encodes what was kept raw (at most the backlog's length). */
  #flushRaw(): void {
    if (this.#rawActor) {
      const [event, seq] = this.#rawActor;
      this.#rawActor = undefined;
      this.#actorEvent = this.#encoder.encode(event, seq)[0];
    }
    const raw = this.#raw.splice(0).slice(-this.#opts.inspectorBacklog);
    for (const [event, seq] of raw) this.#inspections.push(...this.#encoder.encode(event, seq));
    if (this.#inspections.length > this.#opts.inspectorBacklog) this.#inspections.splice(0, this.#inspections.length - this.#opts.inspectorBacklog);
  }

  /** Called when the hub holds nothing any more (no stream, no live session): the server forgets it. */
  onIdle: (() => void) | undefined;

  attach(session: Session): void {
    this.#session = session;
    this.#opts.onAttach?.(session);
    // A session starts online (an in-process caller is there); here only streams are clients.
    if (this.streams.size > 0) session.setOnline(true);
    else this.#scheduleOffline();
    void session.done.finally(() => {
      if (this.#session === session) this.#session = undefined;
      this.#checkIdle();
    });
  }

  watchDurable(listener: (entry: JournaledEntry, frame: Uint8Array) => void): () => void {
    this.#durableListeners.add(listener);
    return () => this.#durableListeners.delete(listener);
  }

  /**
   * What a new client gets first: the session's snapshot, its open prompts (when the session was
   * online already; else coming online re-sends them), and the inspector's state.
   */
  greet(stream: EventStream): void {
    const session = this.#session;
    if (session) {
      const snapshot = session.snapshot();
      stream.ephemeral('snapshot', snapshot);
      if (this.streams.size > 1 || !this.streams.has(stream)) {
        for (const [requestId, open] of Object.entries(snapshot.requests)) {
          stream.ephemeral('permission_prompt', permissionPromptOf(requestId, open));
        }
      }
    }
    if (!stream.opts.inspect) return;
    this.#flushRaw();
    // The actor event with the latest snapshot, so a late client can draw the chart at once.
    const latest = this.#inspections.findLast((w) => w.type === '@xstate.snapshot');
    if (this.#actorEvent) stream.ephemeral('inspect', latest?.type === '@xstate.snapshot' ? { ...this.#actorEvent, snapshot: latest.snapshot } : this.#actorEvent);
    for (const wire of this.#inspections) stream.ephemeral('inspect', wire);
  }

  /** The inspector's retained events (`@xstate.actor` first). */
  inspections(): InspectionWire[] {
    this.#flushRaw();
    return [...(this.#actorEvent ? [this.#actorEvent] : []), ...this.#inspections];
  }

  broadcast(event: string, data: unknown): void {
    if (this.streams.size === 0) return;
    const frame = encodeFrame(event, data);
    for (const stream of this.streams) stream.write(frame);
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
    this.#checkIdle();
  }

  #checkIdle(): void {
    if (this.streams.size === 0 && !this.#session) this.onIdle?.();
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
