import { type FetchHandler, toFetch } from "crossborder-callbacks/fetch";
import { createMerchantRouter, readConfig } from "./merchant.js";

/** Vars and secrets (wrangler.toml, `wrangler secret put SERVICE_PUBLIC_KEY`). */
interface Env {
  readonly SERVICE_PUBLIC_KEY?: string;
  readonly SERVICE_ENVIRONMENT?: string;
  readonly MERCHANT_GUID?: string;
}

// Built on the first request, when the environment is known; reused while the isolate lives.
let callbacks: FetchHandler | undefined;

export default {
  fetch(request: Request, env: Env): Promise<Response> {
    callbacks ??= toFetch(createMerchantRouter(readConfig({ ...env })), {
      // Set by Cloudflare's edge; clients cannot forge it there.
      remoteAddress: (req) => req.headers.get("CF-Connecting-IP"),
    });
    return callbacks(request);
  },
};
