/**
 * One `abort` listener per caller's signal, shared by every call in flight on it. A merchant may
 * pass one long-lived signal (a server's shutdown signal) to many calls: a listener each would pass
 * Node's default limit of 10 and print `MaxListenersExceededWarning`. The listener is removed as
 * soon as no call waits on the signal any more, so nothing outlives the calls.
 * (`AbortSignal.any` adds no listener but, on Node 20 and 22, keeps every signal derived from a
 * long-lived one alive as long as it lives: nodejs/node#55351.)
 */
interface Waiting {
  readonly listener: () => void;
  readonly callbacks: Set<() => void>;
}

const waiting = new WeakMap<AbortSignal, Waiting>();

/**
 * Calls `callback` once when `signal` aborts; the function returned stops waiting (call it when the
 * work settles). A signal that has already aborted never calls it: check `signal.aborted` first.
 * Each call is a registration of its own, even of a function already registered.
 */
export function whenAborted(signal: AbortSignal, callback: () => void): () => void {
  const entry = waiting.get(signal) ?? listenTo(signal);
  // A fresh function per registration: in the set, the same callback twice would be one entry,
  // which the first stop would take out for both.
  const registration = (): void => callback();
  entry.callbacks.add(registration);
  return () => {
    if (!entry.callbacks.delete(registration) || entry.callbacks.size > 0) return;
    // The last call waiting on this signal: let it go.
    if (waiting.get(signal) === entry) waiting.delete(signal);
    signal.removeEventListener("abort", entry.listener);
  };
}

function listenTo(signal: AbortSignal): Waiting {
  const callbacks = new Set<() => void>();
  const listener = (): void => {
    // Taken off first: a call that begins waiting on the signal now gets an entry of its own.
    waiting.delete(signal);
    for (const callback of callbacks) {
      // One callback that throws does not leave the later calls running: its error is thrown
      // again on its own, where Node reports it as it would a listener's.
      try {
        callback();
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  };
  const entry = { listener, callbacks };
  waiting.set(signal, entry);
  signal.addEventListener("abort", listener, { once: true });
  return entry;
}
