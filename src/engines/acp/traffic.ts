/**
 * The engine's ordered view of the wire (also what feeds the public traffic tap, `onTraffic`): the
 * SDK dispatches handlers of different methods concurrently (its docs say so), so a permission
 * request can reach its handler before the `tool_call` notification that preceded it, and a
 * prompt response before the last updates of its turn. The tap sees messages synchronously, in
 * the order the agent wrote them, before the SDK does.
 */
import type { AnyMessage, Stream } from '@agentclientprotocol/sdk';

export interface WireObserver {
  /** A message the agent sent, before the SDK handles it. Must not throw (errors are swallowed). */
  inbound(message: AnyMessage): void;
  /** A message the SDK is sending to the agent. */
  outbound(message: AnyMessage): void;
}

/**
 * Wraps an SDK stream so `observer` sees each message synchronously in wire order. A throwing
 * observer never breaks the connection.
 */
export function tapStream(base: Stream, observer: WireObserver, onObserverError: (error: unknown) => void = () => {}): Stream {
  const safe = (fn: () => void): void => {
    try {
      fn();
    } catch (error) {
      onObserverError(error);
    }
  };
  const inbound = new TransformStream<AnyMessage, AnyMessage>({
    transform(message, controller) {
      safe(() => observer.inbound(message));
      controller.enqueue(message);
    },
  });
  const outbound = new TransformStream<AnyMessage, AnyMessage>({
    transform(message, controller) {
      safe(() => observer.outbound(message));
      controller.enqueue(message);
    },
  });
  // A failed write (agent gone) surfaces through the SDK's connection close; nothing to add here.
  outbound.readable.pipeTo(base.writable).catch(() => undefined);
  return { readable: base.readable.pipeThrough(inbound), writable: outbound.writable };
}
