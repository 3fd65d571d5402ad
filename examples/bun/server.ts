import { toFetch } from "crossborder-callbacks/fetch";
import { createMerchantRouter, readConfig } from "./merchant.ts";

type Server = { requestIP(request: Request): { address: string } | null };

const callbacks = toFetch(createMerchantRouter(readConfig(Bun.env)), {
  remoteAddress: (request, server: Server) => server.requestIP(request)?.address,
});

const server = Bun.serve({
  hostname: Bun.env.HOST ?? "127.0.0.1",
  port: Number(Bun.env.PORT ?? 3000),
  fetch: callbacks,
});
// An IPv6 address goes in brackets in a URL (http://[::1]:3000).
const host = server.hostname ?? "127.0.0.1";
console.log(`listening on http://${host.includes(":") ? `[${host}]` : host}:${server.port}`);
