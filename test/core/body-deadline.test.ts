// Issue #10, finding 8: the time spent reading a body is bounded (`bodyTimeoutMs`), and a body
// that does not arrive in time is answered 408 `request_timeout`, its source let go.
import { describe, expect, it } from "vitest";
import {
  type Authenticator,
  createSendOrderToMerchantHandler,
  DEFAULT_BODY_TIMEOUT_MS,
  type HandlerOptions,
} from "../../src/index.js";
import { collector, encoder, json, post, StubAuthenticator } from "./helpers.js";

const ORDER = JSON.stringify({ OrderId: "GE1", Products: [] });

function handler(options: Partial<HandlerOptions> = {}) {
  const { failures, onError } = collector();
  const built = createSendOrderToMerchantHandler(() => ({ InternalOrderId: "M-1" }), {
    auth: false,
    onError,
    ...options,
  });
  return { handler: built, failures };
}

/** A stream that sends its first chunk, then nothing, ever; records its cancellation. */
function stalledStream() {
  const state = { cancelled: false };
  let sent = false;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent) return new Promise<void>(() => undefined);
      sent = true;
      controller.enqueue(encoder.encode('{"OrderId":'));
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { stream, state };
}

/** Sends the body in `count` chunks, `gapMs` apart. */
function slowStream(text: string, count: number, gapMs: number): ReadableStream<Uint8Array> {
  const bytes = encoder.encode(text);
  const size = Math.ceil(bytes.length / count);
  let offset = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (offset >= bytes.length) {
        controller.close();
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, gapMs));
      controller.enqueue(bytes.slice(offset, offset + size));
      offset += size;
    },
  });
}

describe("bodyTimeoutMs", () => {
  it("defaults to 30 s", () => {
    expect(DEFAULT_BODY_TIMEOUT_MS).toBe(30_000);
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31, "100"])(
    "refuses %s at construction",
    (value) => {
      expect(() => handler({ bodyTimeoutMs: value as number })).toThrow(RangeError);
    },
  );

  it("a stalled stream: 408 at the deadline, the stream cancelled, Connection: close", async () => {
    const { handler: h, failures } = handler({ bodyTimeoutMs: 100 });
    const { stream, state } = stalledStream();
    const started = performance.now();
    const response = await h.handle(post(stream));
    const elapsed = performance.now() - started;
    expect(response.status).toBe(408);
    expect(response.headers.connection).toBe("close");
    expect(json(response)).toStrictEqual({
      Success: false,
      ErrorCode: "REQUEST_TIMEOUT",
      Message: "Request body not received in time",
      Description: "",
    });
    expect(elapsed).toBeGreaterThanOrEqual(95);
    expect(elapsed).toBeLessThan(2000);
    expect(state.cancelled).toBe(true);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({
      kind: "request_timeout",
      status: 408,
      reason: "the body was not received within 100 ms",
    });
  });

  it("a stalled async iterable (a Node request): 408 at the deadline", async () => {
    const { handler: h, failures } = handler({ bodyTimeoutMs: 100 });
    async function* stalled() {
      yield encoder.encode('{"OrderId":');
      await new Promise(() => undefined);
    }
    const response = await h.handle(post(stalled()));
    expect(response.status).toBe(408);
    expect(failures.map((f) => f.kind)).toStrictEqual(["request_timeout"]);
  });

  it("a slow body that completes within the deadline is accepted", async () => {
    const { handler: h, failures } = handler({ bodyTimeoutMs: 2000 });
    const response = await h.handle(post(slowStream(ORDER, 5, 20)));
    expect(response.status).toBe(200);
    expect(failures).toStrictEqual([]);
  });

  it("counts reading only: a slow authentication does not eat the body's time", async () => {
    const stub = new StubAuthenticator();
    const slow: Authenticator = {
      needsRawBody: (callback) => stub.needsRawBody(callback),
      async authenticateRequest(request) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        return stub.authenticateRequest(request);
      },
    };
    // Authentication outlasts the deadline; reading the body takes one 10 ms gap, which leaves
    // the deadline a margin a loaded machine's pauses do not eat (at 100 ms it was 90 ms).
    const { handler: h, failures } = handler({ bodyTimeoutMs: 400, auth: slow });
    const response = await h.handle(post(slowStream(ORDER, 2, 10)));
    expect(response.status).toBe(200);
    expect(failures).toStrictEqual([]);
  });

  it("a body given whole (string, bytes, parsed) has nothing to wait for", async () => {
    const { handler: h } = handler({ bodyTimeoutMs: 1 });
    expect((await h.handle(post(ORDER))).status).toBe(200);
    expect((await h.handle(post(encoder.encode(ORDER)))).status).toBe(200);
  });
});
