import { serve } from "@hono/node-server";
import { getConnInfo } from "@hono/node-server/conninfo";
import { toFetch } from "crossborder-callbacks/fetch";
import { type Context, Hono } from "hono";
import { createMerchantRouter, readConfig } from "./merchant.js";

const config = readConfig(process.env);
const callbacks = toFetch(createMerchantRouter(config), {
  remoteAddress: (_request, c: Context) => getConnInfo(c).remote.address,
});

const app = new Hono();
app.all("/crossborder/*", (c) => callbacks(c.req.raw, c));
app.get("/health", (c) => c.json({ ok: true }));

const hostname = process.env.HOST ?? "127.0.0.1";
serve({ fetch: app.fetch, hostname, port: Number(process.env.PORT ?? 3000) }, (info) => {
  // An IPv6 address (HOST=::1) goes in brackets in a URL.
  const shown = hostname.includes(":") ? `[${hostname}]` : hostname;
  console.log(`listening on http://${shown}:${info.port}`);
});
