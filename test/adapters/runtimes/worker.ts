/** Run by workerd through Miniflare (as an esbuild bundle): the fetch adapter as a Worker. */
import { type FetchHandler, toFetch } from "../../../src/adapters/fetch.js";
import { createTestRouter } from "../support/merchant.js";

interface Env {
  readonly SERVICE_PUBLIC_KEY: string;
  /** Digits, or absent for the library's default. */
  readonly BODY_TIMEOUT_MS?: string;
}

let handler: FetchHandler | undefined;

function createHandler(env: Env): FetchHandler {
  const bodyTimeoutMs = Number(env.BODY_TIMEOUT_MS ?? "") || undefined;
  const router = createTestRouter({
    publicKey: env.SERVICE_PUBLIC_KEY,
    ...(bodyTimeoutMs === undefined ? {} : { bodyTimeoutMs }),
  });
  return toFetch(router, { remoteAddress: (req) => req.headers.get("CF-Connecting-IP") });
}

export default {
  fetch(request: Request, env: Env): Promise<Response> {
    handler ??= createHandler(env);
    return handler(request);
  },
};
