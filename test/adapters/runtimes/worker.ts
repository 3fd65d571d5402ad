/** Run by workerd through Miniflare (as an esbuild bundle): the fetch adapter as a Worker. */
import { type FetchHandler, toFetch } from "../../../src/adapters/fetch.js";
import { createTestRouter } from "../support/merchant.js";

interface Env {
  readonly SERVICE_PUBLIC_KEY: string;
}

let handler: FetchHandler | undefined;

export default {
  fetch(request: Request, env: Env): Promise<Response> {
    handler ??= toFetch(createTestRouter({ publicKey: env.SERVICE_PUBLIC_KEY }), {
      remoteAddress: (req) => req.headers.get("CF-Connecting-IP"),
    });
    return handler(request);
  },
};
