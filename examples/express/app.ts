import type { CallbackRouter } from "crossborder-callbacks";
import { toExpress } from "crossborder-callbacks/express";
import express from "express";

/** The app: the callbacks under `/crossborder`, then the rest of your app. */
export function createApp(callbacks: CallbackRouter): express.Express {
  const app = express();
  // Before any body parser: the library reads the body itself, within its limit, after authentication.
  app.use("/crossborder", toExpress(callbacks));

  // The rest of your app.
  app.use(express.json());
  app.get("/health", (_req, res) => {
    res.json({ ok: true });
  });
  return app;
}
