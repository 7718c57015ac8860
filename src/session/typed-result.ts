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
 * is sent the message as before (the tree's default, deduplicated by its `localId`).
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

export function typedResultDelivery(options: { confirmMs?: number } = {}): ResultDelivery {
  const confirmMs = options.confirmMs ?? CONFIRM_MS;
  return async (parent: Session, message) => {
    const { mode } = parent.snapshot();
    const text = pasteSafe(message.text);
    const firstLine = text.split('\n', 1)[0] ?? '';
    // Typed only where the parent's UI runs here, and with a first line to recognise it by (an empty
    // one would take any prompt of the person's for it).
    if (mode !== 'local' || !parent.terminal.attached || firstLine.trim() === '') {
      await parent.send(message.text, { localId: message.localId });
      return;
    }
    await new Promise<void>((resolve, reject) => {
      let settled = false;
      const settle = (error?: AseError): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        off();
        if (error) reject(error);
        else resolve();
      };
      const timer = setTimeout(() => settle(new AseError('TIMEOUT', `${parent.id} did not take the sub-agent's result typed into its terminal UI within ${confirmMs / 1000} s; it stays undelivered`)), confirmMs);
      const off = parent.on('agent', ({ event }) => {
        if (event.type !== 'message' || event.role !== 'user') return;
        const said = messageText(event);
        if (said.includes(firstLine)) settle();
      });
      // A parent that ends first will never take it: undelivered at once, not after the whole wait.
      const ended = (): void => settle(new AseError('SESSION_STOPPED', `${parent.id} ended before it took the sub-agent's result typed into its terminal UI; it stays undelivered`));
      void parent.done.then(ended, ended);
      parent.terminal.write(`\x1b[200~${text}\x1b[201~`);
      setTimeout(() => parent.terminal.write('\r'), SUBMIT_DELAY_MS);
    });
  };
}
