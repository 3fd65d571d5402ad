/**
 * The longest delay `setTimeout` and `setInterval` keep: 2^31-1 ms, about 24.8 days. Node fires a
 * longer one after 1 ms (with a TimeoutOverflowWarning), so every option that becomes a timer's
 * delay is refused above it.
 */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * Whether a value is a whole number of milliseconds a timer keeps as given: positive (or 0 when
 * `zero` allows it) and at most `MAX_TIMEOUT_MS`. Each option's own check words its error.
 */
export function isTimerDelay(value: unknown, zero = false): value is number {
  return (
    typeof value === "number" &&
    Number.isSafeInteger(value) &&
    (zero ? value >= 0 : value > 0) &&
    value <= MAX_TIMEOUT_MS
  );
}

/**
 * Milliseconds on a monotonic clock (`performance.now()`, global in Node, Deno, Bun and Workers):
 * for every duration and deadline this process keeps (a lease it renews, a wait, a retry's
 * deadline), which a step of the wall clock (an NTP correction, a VM catching up) must not
 * change. Never an epoch time: `Date.now()` stays for what is stored or compared with another
 * machine's clock.
 */
export function monotonicNow(): number {
  return performance.now();
}
