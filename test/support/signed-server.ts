// A router behind `toNodeListener` on a real node:http server and behind `toFetch`, its calls
// signed with test keys (RS256) and its merchant GUID checked: the encodings tests send exact
// bytes over HTTP through it.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { toFetch } from "../../src/adapters/fetch.js";
import { toNodeListener } from "../../src/adapters/node.js";
import {
  type CallbackFailure,
  type CallbackHandlers,
  type CallbackRouterOptions,
  createAuth,
  createCallbackRouter,
} from "../../src/index.js";
import { createTestKeys, SAMPLE_MERCHANT_GUID, signServiceToken } from "../../src/testing/index.js";

export const GUID = SAMPLE_MERCHANT_GUID;

export interface Answer {
  status: number;
  text: string;
}

export async function signedServer(
  handlers: CallbackHandlers,
  extra: Partial<CallbackRouterOptions> = {},
) {
  const keys = await createTestKeys();
  const errors: CallbackFailure[] = [];
  const auth = await createAuth({
    jwt: { environment: "test", keys: { test: keys.publicKey } },
    merchantGuid: GUID,
  });
  const router = createCallbackRouter({
    basePath: "/cb",
    auth,
    handlers,
    onError: (failure) => void errors.push(failure),
    ...extra,
  } as CallbackRouterOptions);
  const server = createServer(toNodeListener(router)).listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as AddressInfo;
  const fetchHandler = toFetch(router);
  const headers = async (more: Record<string, string>) => ({
    authorization: `Bearer ${await signServiceToken(keys.privateKey)}`,
    "content-type": "application/json",
    ...more,
  });
  const init = async (method: string, body: string | undefined, more: Record<string, string>) =>
    method === "GET"
      ? { method, headers: await headers(more) }
      : { method, body: body ?? "", headers: await headers(more) };
  /** Over node:http. */
  async function node(
    name: string,
    body?: string,
    { method = "POST", query = "", headers: more = {} } = {},
  ): Promise<Answer> {
    const res = await fetch(
      `http://127.0.0.1:${port}/cb/${name}${query}`,
      await init(method, body, more),
    );
    return { status: res.status, text: await res.text() };
  }
  /** Through the fetch adapter, with a `Request`. */
  async function viaFetch(
    name: string,
    body?: string,
    { method = "POST", query = "", headers: more = {} } = {},
  ): Promise<Answer> {
    const res = await fetchHandler(
      new Request(`http://x/cb/${name}${query}`, await init(method, body, more)),
    );
    return { status: res.status, text: await res.text() };
  }
  return { errors, router, node, viaFetch, close: () => server.close() };
}
