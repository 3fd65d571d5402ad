/** Run by Deno (as an esbuild bundle): the fetch adapter on Deno.serve. */
import { toFetch } from "../../../src/adapters/fetch.js";
import { createTestRouter } from "../support/merchant.js";

interface ServeHandlerInfo {
  readonly remoteAddr: { readonly hostname: string; readonly port: number };
}
declare const Deno: {
  readonly env: { get(name: string): string | undefined };
  inspect(value: unknown, options?: { depth?: number }): string;
  serve(
    options: { hostname: string; port: number; onListen(address: { port: number }): void },
    handler: (request: Request, info: ServeHandlerInfo) => Promise<Response>,
  ): unknown;
};

/**
 * An order sent with `X-Log-Order: TAG` is printed the ways a merchant debugging it would, between
 * `BEGIN TAG` and `END TAG` lines on stdout (one label per view).
 */
function logOrder(order: unknown, header: (name: string) => string | undefined): void {
  const tag = header("x-log-order");
  if (tag === undefined) return;
  const details = (order as { PaymentDetails?: unknown }).PaymentDetails;
  console.log(`BEGIN ${tag}`);
  console.log("DETAILS", details);
  console.log("ORDER", order);
  console.log("NESTED", { wrap: { details } });
  console.log("INSPECT", Deno.inspect(details));
  console.log("DIR");
  console.dir(details);
  // Deno's print depth counts the details where they sit: a merchant's own nested note on them is
  // cut as a plain object there would be, and past the depth the details are `[Object]`.
  (details as Record<string, unknown>).Note = { a: { b: { c: 1 } } };
  console.log("CUT", Deno.inspect({ wrap: details }, { depth: 2 }));
  console.log("SHALLOW", Deno.inspect({ wrap: details }, { depth: 0 }));
  console.log("DEEP", { l1: { l2: { l3: { l4: { details } } } } });
  console.log(`END ${tag}`);
}

const bodyTimeoutMs = Number(Deno.env.get("BODY_TIMEOUT_MS") ?? "") || undefined;
const router = createTestRouter({
  publicKey: Deno.env.get("SERVICE_PUBLIC_KEY") ?? "",
  ...(bodyTimeoutMs === undefined ? {} : { bodyTimeoutMs }),
  onOrder: logOrder,
});
const handler = toFetch(router, {
  remoteAddress: (_request, info: ServeHandlerInfo) => info.remoteAddr.hostname,
});
Deno.serve(
  {
    hostname: "127.0.0.1",
    port: 0,
    onListen: ({ port }) => console.log(`listening on http://127.0.0.1:${port}`),
  },
  handler,
);
