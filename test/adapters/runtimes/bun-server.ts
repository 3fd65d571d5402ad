/** Run by Bun (as an esbuild bundle): the fetch adapter on Bun.serve. */
import { toFetch } from "../../../src/adapters/fetch.js";
import { createTestRouter } from "../support/merchant.js";

interface BunServer {
  readonly port: number;
  requestIP(request: Request): { address: string } | null;
}
declare const Bun: {
  readonly env: Record<string, string | undefined>;
  serve(options: {
    hostname: string;
    port: number;
    fetch(request: Request, server: BunServer): Promise<Response>;
  }): BunServer;
};

const bodyTimeoutMs = Number(Bun.env.BODY_TIMEOUT_MS ?? "") || undefined;
const router = createTestRouter({
  publicKey: Bun.env.SERVICE_PUBLIC_KEY ?? "",
  ...(bodyTimeoutMs === undefined ? {} : { bodyTimeoutMs }),
});
const handler = toFetch(router, {
  remoteAddress: (request, server: BunServer) => server.requestIP(request)?.address,
});
const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: handler });
console.log(`listening on http://127.0.0.1:${server.port}`);
