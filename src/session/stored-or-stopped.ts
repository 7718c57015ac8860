/**
 * A session just created, handed on only once it is in its store (`durable()`): its id then works
 * on every host of a shared store and after a crash of this one. A session whose first write fails
 * is stopped, so nothing is left running for an id no one was given.
 */
import type { Session } from './session.js';

export async function storedOrStopped(session: Session): Promise<Session> {
  try {
    await session.durable();
  } catch (error) {
    await session.stop().catch(() => undefined);
    throw error;
  }
  return session;
}
