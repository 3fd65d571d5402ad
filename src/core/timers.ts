/**
 * The longest delay `setTimeout` and `setInterval` keep: 2^31-1 ms, about 24.8 days. Node fires a
 * longer one after 1 ms (with a TimeoutOverflowWarning), so every option that becomes a timer's
 * delay is refused above it.
 */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;
