import { toKoa } from "crossborder-callbacks/koa";
import Koa from "koa";
import { createMerchantRouter, readConfig } from "./merchant.js";

const config = readConfig(process.env);
const app = new Koa();

// Before any body parser: the library reads the body itself, within its limit, after authentication.
app.use(toKoa(createMerchantRouter(config)));

// The rest of your app.
app.use((ctx) => {
  if (ctx.path === "/health") ctx.body = { ok: true };
});

const host = process.env.HOST ?? "127.0.0.1";
const server = app.listen(Number(process.env.PORT ?? 3000), host, () => {
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : process.env.PORT;
  // An IPv6 address (HOST=::1) goes in brackets in a URL.
  const shown = host.includes(":") ? `[${host}]` : host;
  console.log(`listening on http://${shown}:${port}`);
});
