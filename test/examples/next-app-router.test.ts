/** The Next.js route file, called as Next calls it: GET/POST with a Request and a context. */
import { beforeAll, describe, expect, it } from "vitest";
import type { ServiceKeys } from "../adapters/support/keys.js";
import type { Send } from "../adapters/support/suite.js";
import {
  assertBuilt,
  captureExampleLog,
  exampleEnv,
  exampleKeys,
  FLOW_LOG,
  merchantFlow,
} from "./support/flow.js";

/** What the example logged on the console (it runs in this process). */
const logged = captureExampleLog();

type Handler = (
  request: Request,
  context: { params: Promise<{ callback: string }> },
) => Promise<Response>;
let route: { GET: Handler; POST: Handler; dynamic: string };
let keys: ServiceKeys;

beforeAll(async () => {
  assertBuilt();
  keys = await exampleKeys();
  Object.assign(process.env, exampleEnv(keys));
  route = await import("../../examples/next-app-router/app/crossborder/[callback]/route.js");
});

const send: Send = async (path, init) => {
  const request = new Request(`https://shop.example${path}`, init);
  const method = request.method === "GET" ? route.GET : route.POST;
  const callback = new URL(request.url).pathname.split("/").pop() ?? "";
  return method(request, { params: Promise.resolve({ callback }) });
};

describe("examples/next-app-router (route module)", () => {
  it("exports GET and POST, never cached", () => {
    expect(typeof route.GET).toBe("function");
    expect(route.POST).toBe(route.GET);
    expect(route.dynamic).toBe("force-dynamic");
  });

  merchantFlow(
    () => send,
    () => keys,
  );

  it("logged each refusal once through the default onError, and nothing else", () => {
    expect(logged).toStrictEqual(FLOW_LOG);
  });
});
