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
console.log(`listening on http://${server.hostname}:${server.port}`);
