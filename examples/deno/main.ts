import { toFetch } from "crossborder-callbacks/fetch";
import { createMerchantRouter, readConfig } from "./merchant.ts";

const callbacks = toFetch(createMerchantRouter(readConfig(Deno.env.toObject())), {
  remoteAddress: (_request, info: Deno.ServeHandlerInfo<Deno.NetAddr>) => info.remoteAddr.hostname,
});

const hostname = Deno.env.get("HOST") ?? "127.0.0.1";
Deno.serve(
  {
    hostname,
    port: Number(Deno.env.get("PORT") ?? 3000),
    // An IPv6 address goes in brackets in a URL (http://[::1]:3000).
    onListen: ({ hostname: host, port }) =>
      console.log(`listening on http://${host.includes(":") ? `[${host}]` : host}:${port}`),
  },
  callbacks,
);
