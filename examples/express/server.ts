import { toExpress } from "crossborder-callbacks/express";
import express from "express";
import { createMerchantRouter, readConfig } from "../shared/merchant.js";
import { idempotencyFromEnv } from "./idempotency.js";

const config = readConfig(process.env);
// Repeated deliveries apply once; with Redis or PostgreSQL, across every instance.
const idempotency = await idempotencyFromEnv(process.env);
const app = express();

// Before any body parser: the library reads the body itself, within its limit, after authentication.
app.use(
  "/crossborder",
  toExpress(createMerchantRouter(config, { basePath: "", idempotency: idempotency.options })),
);

// The rest of your app.
app.use(express.json());
app.get("/health", (_req, res) => {
  res.json({ ok: true });
});

const host = process.env.HOST ?? "127.0.0.1";
const server = app.listen(Number(process.env.PORT ?? 3000), host, () => {
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : process.env.PORT;
  console.log(`listening on http://${host}:${port}`);
});

process.once("SIGTERM", () => {
  server.close(() => void idempotency.close());
});
