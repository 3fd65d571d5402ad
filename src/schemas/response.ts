/**
 * Tolerant reader of a `Success` value: booleans, and the texts "true"/"false" in any case with
 * surrounding whitespace (the service itself sends `"true"` and `True`). Anything else is
 * `undefined`, which callers must treat as failure.
 */
export function parseSuccessValue(value: unknown): boolean | undefined {
  if (typeof value === "boolean") return value;
  if (typeof value !== "string") return undefined;
  const text = value.trim().toLowerCase();
  if (text === "true") return true;
  if (text === "false") return false;
  return undefined;
}

/**
 * Whether an order status code from the service is the expected one: case-insensitive, trimmed,
 * and with `canceled`/`cancelled` as one status (`CANCELLED` equals `canceled`).
 */
export function isOrderStatus(actual: string | null | undefined, expected: string): boolean {
  if (typeof actual !== "string") return false;
  return normalizeStatus(actual) === normalizeStatus(expected);
}

function normalizeStatus(status: string): string {
  const text = status.trim().toLowerCase();
  return text === "cancelled" ? "canceled" : text;
}
