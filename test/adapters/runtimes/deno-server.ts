/** Run by Deno (as an esbuild bundle): the fetch adapter on Deno.serve. */
import { toFetch } from "../../../src/adapters/fetch.js";
import { createTestRouter } from "../support/merchant.js";

interface ServeHandlerInfo {
  readonly remoteAddr: { readonly hostname: string; readonly port: number };
}
declare const Deno: {
  readonly env: { get(name: string): string | undefined };
  serve(
    options: { hostname: string; port: number; onListen(address: { port: number }): void },
    handler: (request: Request, info: ServeHandlerInfo) => Promise<Response>,
  ): unknown;
};

const handler = toFetch(createTestRouter({ publicKey: Deno.env.get("SERVICE_PUBLIC_KEY") ?? "" }), {
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
