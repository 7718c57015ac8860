/**
 * A sub-agent's result typed into its parent's own terminal UI (`ase run --mode local
 * --sub-agents`, and `ase serve` when `ase attach` leaves a sub-agent: `POST …/tree/complete`): the
 * `ResultDelivery` of a desk that shows the parent. Sending it instead
 * (the tree's default) is a queued message, and a message to a session in local mode hands it to
 * remote control: the parent's UI stops, a remote engine starts on its agent session, runs the
 * message, stops, and the UI starts again (two agent starts: ~20 s on a loaded machine). Typed, the
 * parent's UI, already running, takes it as a prompt the person could have typed: the person sees
 * it arrive, and the parent answers at once.
 *
 * Once: the tree notes the result delivered only after the parent's agent reported the prompt as
 * a user message (its transcript has it). A parent not in local mode, or whose UI is not attached,
 * is sent the message as before (the tree's default, deduplicated by its `localId`). What one delivery
 * typed it never types again: a retry after a timeout waits for the prompt already typed. (A host
 * that dies between the agent taking the prompt and the tree noting it would still deliver it twice.)
 *
 * Typed only once the parent's UI is ready (phase `local`): a UI that was just started (after a
 * switch back to local) is attached before its engine says `ready`, and with host tools `ready`
 * waits until the agent has listed them (core/terminal-engine.ts), so a result typed earlier would
 * reach the model without them. A parent that leaves local mode before it is ready is not typed
 * into: the delivery fails and the tree's next attempt sends it.
 */
import { AseError } from '../errors.js';
import { messageText } from '../events/message-text.js';
import type { Session } from './session.js';
import type { ResultDelivery } from './session-tree.js';

/** How long the parent's agent may take to report the typed prompt (a busy agent queues it until its turn ends). */
const CONFIRM_MS = 120_000;
/** Between the paste and Enter: a terminal UI that sees both in one read takes the Enter as part of the paste. */
const SUBMIT_DELAY_MS = 150;

/**
 * The text as a bracketed paste can carry it: no control characters but newline and tab (an ESC in
 * a child's answer could end the paste early and type the rest as keys).
 */
export function pasteSafe(text: string): string {
  return text.replace(/\r\n?/g, '\n').replace(/[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]/g, '');
}

/** A result typed into a parent's UI and not yet reported back by its agent. */
interface TypedPending {
  /** Settles once the parent's agent reported the prompt (true), or the parent ended or left local mode before it was typed (false). */
  readonly taken: Promise<boolean>;
}

/**
 * One delivery per desk or server: it remembers what it typed. A result typed once is never typed
 * (or sent) again by it: a parent busy past `confirmMs` still has the prompt in its input queue, so
 * the timeout leaves the result undelivered in the tree but keeps listening, and the tree's next
 * attempt waits for that same prompt instead of typing a second copy.
 */
export function typedResultDelivery(options: { confirmMs?: number } = {}): ResultDelivery {
  const confirmMs = options.confirmMs ?? CONFIRM_MS;
  const typed = new Map<string, TypedPending>();
  return async (parent: Session, message) => {
    const key = `${parent.id}\n${message.localId}`;
    let pending = typed.get(key);
    if (!pending) {
      const { mode } = parent.snapshot();
      const text = pasteSafe(message.text);
      const firstLine = text.split('\n', 1)[0] ?? '';
      // Typed only where the parent's UI runs here, and with a first line to recognise it by (an empty
      // one would take any prompt of the person's for it).
      if (mode !== 'local' || !parent.terminal.attached || firstLine.trim() === '') {
        await parent.send(message.text, { localId: message.localId });
        return;
      }
      pending = { taken: typeAndWatch(parent, text, firstLine) };
      typed.set(key, pending);
      // Kept once taken (a retry after a timeout resolves at once); forgotten if the parent ended
      // first (its UI is gone with the prompt: the tree's next attempt may type or send it anew).
      void pending.taken.then((taken) => {
        if (!taken) typed.delete(key);
      });
    }
    const taken = await settleWithin(pending.taken, confirmMs);
    if (taken === undefined) throw new AseError('TIMEOUT', `${parent.id} did not take the sub-agent's result typed into its terminal UI within ${confirmMs / 1000} s; it stays undelivered (still typed: not typed again)`);
    if (!taken) throw new AseError('SESSION_STOPPED', `${parent.id} ended, or left local mode, before it took the sub-agent's result for its terminal UI; it stays undelivered`);
  };
}

/**
 * Types `text` into the parent's UI once it is ready, and resolves true once its agent reports it as
 * a user message; false if the parent ends first, or leaves local mode before the UI was ready.
 */
function typeAndWatch(parent: Session, text: string, firstLine: string): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    let settled = false;
    let offStatus: (() => void) | undefined;
    const settle = (taken: boolean): void => {
      if (settled) return;
      settled = true;
      off();
      offStatus?.();
      resolve(taken);
    };
    const off = parent.on('agent', ({ event }) => {
      if (event.type !== 'message' || event.role !== 'user') return;
      const said = messageText(event);
      if (said.includes(firstLine)) settle(true);
    });
    // A parent that ends first will never take it: undelivered at once, not after the whole wait.
    const ended = (): void => settle(false);
    void parent.done.then(ended, ended);
    const type = (): void => {
      parent.terminal.write(`\x1b[200~${text}\x1b[201~`);
      setTimeout(() => parent.terminal.write('\r'), SUBMIT_DELAY_MS);
    };
    if (parent.snapshot().phase === 'local') return type();
    // Attached but not ready yet (its engine may still wait for the agent's host tools): typed at ready.
    offStatus = parent.on('status', ({ phase, mode }) => {
      if (mode !== 'local') return settle(false);
      if (phase !== 'local') return;
      offStatus?.();
      offStatus = undefined;
      type();
    });
  });
}

/** `promise`'s value, or undefined if it has not settled within `ms`. */
async function settleWithin<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}
