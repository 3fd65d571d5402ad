import { createApp } from "./app.js";
import { idempotencyFromEnv } from "./idempotency.js";
import { createMerchantRouter, readConfig } from "./merchant.js";

const config = readConfig(process.env);
// Repeated deliveries apply once; with Redis or PostgreSQL, across every instance.
const idempotency = await idempotencyFromEnv(process.env);
const app = createApp(
  createMerchantRouter(config, { basePath: "", idempotency: idempotency.options }),
);

const host = process.env.HOST ?? "127.0.0.1";
const server = app.listen(Number(process.env.PORT ?? 3000), host, () => {
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : process.env.PORT;
  // An IPv6 address (HOST=::1) goes in brackets in a URL.
  const shown = host.includes(":") ? `[${host}]` : host;
  console.log(`listening on http://${shown}:${port}`);
});

process.once("SIGTERM", () => {
  server.close(() => void idempotency.close());
});
