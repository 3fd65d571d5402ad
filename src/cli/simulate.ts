import { CALLBACK_NAMES, type CallbackName } from "../core/types.js";
import { successFieldOf } from "../testing/check.js";
import { SendCallbackError, type SendCallbackResult, sendCallback } from "../testing/send.js";
import type { Colors } from "./colors.js";
import { UsageError } from "./errors.js";
import { type Cell, printable, renderTable, truncate } from "./table.js";

/**
 * What `simulate all` sends: every callback, in the order of a shopper's journey (the cart, the
 * gift card and voucher at checkout, the order and its payment, its documents, status, shipping
 * and parcels, a return and its refund), the restricted-products notice last.
 */
export const ALL_CALLBACKS: readonly CallbackName[] = [
  "GetCheckoutCartInfo",
  "ValidateGiftCard",
  "ValidateVoucher",
  "SendOrderToMerchant",
  "PerformOrderPayment",
  "RedeemGiftCard",
  "SendAdditionalRequiredDocumentsToMerchant",
  "UpdateOrderStatus",
  "UpdateOrderShippingInfo",
  "UpdateParcelDispatch",
  "SendRMAInfoToMerchant",
  "NotifyOrderRefund",
  "RefundGiftCard",
  "RemoveRestrictedProducts",
];

/**
 * The callbacks named on the command line: `all`, or names separated by commas, in any case
 * (`SendOrderToMerchant,updateorderstatus`). Throws `UsageError` for an unknown name.
 */
export function resolveCallbacks(spec: string): CallbackName[] {
  const names = spec
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  if (names.length === 0) throw new UsageError("name a callback, or all");
  const chosen: CallbackName[] = [];
  for (const name of names) {
    const matched =
      name.toLowerCase() === "all"
        ? ALL_CALLBACKS
        : CALLBACK_NAMES.filter((callback) => callback.toLowerCase() === name.toLowerCase());
    if (matched.length === 0) {
      throw new UsageError(`unknown callback "${name}"; one of: all, ${CALLBACK_NAMES.join(", ")}`);
    }
    for (const callback of matched) if (!chosen.includes(callback)) chosen.push(callback);
  }
  return chosen;
}

/** What `simulate` needs. */
export interface SimulateOptions {
  /** The base the callbacks are mounted under: each goes to `<url>/<CallbackName>`. */
  readonly url: string;
  readonly callbacks: readonly CallbackName[];
  /** Signs a token per call; without it no `Authorization` header is sent. */
  readonly privateKey?: string | CryptoKey | undefined;
  readonly merchantGuid?: string | undefined;
  /** A cart token the endpoint knows (GetCheckoutCartInfo's `merchantCartToken`, `CartToken`). */
  readonly cartToken?: string | undefined;
  /** A shopper session the endpoint knows (the gift-card payloads' `AuthToken`, `SessionId`). */
  readonly authToken?: string | undefined;
  readonly sessionId?: string | undefined;
  readonly issuer?: string | undefined;
  readonly audience?: string | undefined;
  readonly slowMs?: number | undefined;
  readonly timeoutMs?: number | undefined;
  /** For tests: a fetch to call instead of the network. */
  readonly fetch?: ((request: Request) => Response | Promise<Response>) | undefined;
}

/** One line of the report: an answer, or why there was none. */
export type SimulationRow =
  | { readonly callback: CallbackName; readonly result: SendCallbackResult }
  | { readonly callback: CallbackName; readonly error: string };

/** Sends the callbacks one after the other, as the service would, and collects the answers. */
export async function simulate(options: SimulateOptions): Promise<SimulationRow[]> {
  const rows: SimulationRow[] = [];
  for (const callback of options.callbacks) {
    try {
      const result = await sendCallback(options.url, callback, {
        privateKey: options.privateKey,
        merchantGuid: options.merchantGuid,
        cartToken: options.cartToken,
        authToken: options.authToken,
        sessionId: options.sessionId,
        tokenOptions: { issuer: options.issuer, audience: options.audience },
        slowMs: options.slowMs,
        timeoutMs: options.timeoutMs,
        fetch: options.fetch,
      });
      rows.push({ callback, result });
    } catch (error) {
      if (!(error instanceof SendCallbackError)) throw error;
      rows.push({ callback, error: error.reason });
    }
  }
  return rows;
}

/** The problems of a row: the answer's shape problems, or the failed request. */
export function rowProblems(row: SimulationRow): readonly string[] {
  return "error" in row ? [`request failed: ${row.error}`] : row.result.problems;
}

/** 0 when every answer is well-formed, 1 when any is malformed or any request failed. */
export function exitCodeOf(rows: readonly SimulationRow[]): number {
  return rows.some((row) => rowProblems(row).length > 0) ? 1 : 0;
}

/**
 * The Success column: the value as it arrived (`true`, `"True"`, `"yes"`), `-` when absent; for
 * GetCheckoutCartInfo the number of products of a cart.
 */
export function successText(row: SimulationRow): string {
  if ("error" in row) return "-";
  const { body } = row.result;
  if (body === null || typeof body !== "object" || Array.isArray(body)) return "-";
  const record = body as Record<string, unknown>;
  const field = successFieldOf(row.callback);
  if (field === "productsList" && Array.isArray(record.productsList)) {
    const count = record.productsList.length;
    return `${count} product${count === 1 ? "" : "s"}`;
  }
  // A cart refusal carries `Success` like the order callbacks.
  const name = field === "productsList" ? "Success" : field;
  const value = Object.hasOwn(record, name) ? record[name] : undefined;
  return value === undefined ? "-" : truncate(printable(JSON.stringify(value)), 24);
}

function statusCell(row: SimulationRow, colors: Colors): Cell {
  if ("error" in row) return { text: "-", color: colors.red };
  const status = row.result.status;
  const color = status >= 500 ? colors.red : status >= 300 ? colors.yellow : colors.green;
  return { text: String(status), color };
}

function successCell(row: SimulationRow, colors: Colors): Cell {
  const text = successText(row);
  const success = "error" in row ? undefined : row.result.success;
  const color = success === true ? colors.green : success === false ? colors.yellow : colors.red;
  return { text, color };
}

/** The report table: callback, HTTP status, Success, ms, problems (one per line). */
export function renderReport(rows: readonly SimulationRow[], colors: Colors): string {
  const lines: Cell[][] = [];
  for (const row of rows) {
    const problems = rowProblems(row).map((problem) => truncate(printable(problem), 160));
    const ms = "error" in row ? "-" : String(Math.round(row.result.durationMs));
    lines.push([
      { text: row.callback },
      statusCell(row, colors),
      successCell(row, colors),
      { text: ms, align: "right" },
      problems.length === 0
        ? { text: "ok", color: colors.green }
        : { text: problems[0] ?? "", color: colors.red },
    ]);
    for (const problem of problems.slice(1)) {
      lines.push([
        { text: "" },
        { text: "" },
        { text: "" },
        { text: "" },
        { text: problem, color: colors.red },
      ]);
    }
  }
  const header: Cell[] = [
    { text: "callback" },
    { text: "HTTP" },
    { text: "Success" },
    { text: "ms", align: "right" },
    { text: "problems" },
  ];
  return renderTable(header, lines, { header: colors.bold });
}

/** The closing line: all well-formed, or how many answers have problems. */
export function renderSummary(rows: readonly SimulationRow[], colors: Colors): string {
  const failed = rows.filter((row) => "error" in row).length;
  const malformed = rows.filter(
    (row) => !("error" in row) && row.result.problems.length > 0,
  ).length;
  const total = rows.length;
  if (failed === 0 && malformed === 0) {
    return colors.green(`${total} of ${total} answers well-formed.`);
  }
  const parts: string[] = [];
  if (malformed > 0) parts.push(`${malformed} of ${total} answers malformed`);
  if (failed > 0) parts.push(`${failed} of ${total} requests failed`);
  return colors.red(`${parts.join(", ")}.`);
}
