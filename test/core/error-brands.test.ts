// The public error classes carry a registered brand (`Symbol.for("crossborder-callbacks/<Class>@1")`)
// so that `instanceof` holds for an error made by another copy of the library (its ES module and
// CommonJS builds both loaded: test/package/dual-builds.test.ts runs the two builds). Here, at the
// source: what the brand makes an instance of, and what the engine takes from a foreign
// AuthenticationError (review bundle-1, bundle-2).
import { describe, expect, it } from "vitest";
import type { Authenticator } from "../../src/auth/types.js";
import {
  AuthenticationError,
  CallbackError,
  createSendOrderToMerchantHandler,
  IdempotencyStoreError,
} from "../../src/index.js";
import {
  isServiceError,
  ServiceConflictError,
  ServiceError,
  ServiceRateLimitError,
} from "../../src/service/index.js";
import { SendCallbackError, samplePayload } from "../../src/testing/index.js";
import { collector, json, post } from "./helpers.js";

const brand = (name: string) => Symbol.for(`crossborder-callbacks/${name}@1`);

/** What another copy's class makes: an Error carrying the brands, none of this copy's classes. */
function foreign(names: string[], fields: Record<string, unknown> = {}): Error {
  const error = new Error("from another copy");
  for (const name of names) Object.defineProperty(error, brand(name), { value: true });
  return Object.assign(error, fields);
}

describe("instanceof across copies of the library", () => {
  it("an error from another copy is an instance of its class and of its base, not of a sibling", () => {
    const conflict = foreign(["ServiceError", "ServiceConflictError"], { kind: "conflict" });
    expect(conflict instanceof ServiceConflictError).toBe(true);
    expect(conflict instanceof ServiceError).toBe(true);
    expect(isServiceError(conflict)).toBe(true);
    expect(conflict instanceof ServiceRateLimitError).toBe(false);
    expect(conflict instanceof AuthenticationError).toBe(false);
    expect(foreign(["AuthenticationError"]) instanceof AuthenticationError).toBe(true);
    expect(foreign(["CallbackError"]) instanceof CallbackError).toBe(true);
    expect(foreign(["IdempotencyStoreError"]) instanceof IdempotencyStoreError).toBe(true);
    expect(foreign(["SendCallbackError"]) instanceof SendCallbackError).toBe(true);
  });

  it("a base-class brand alone is no subclass: a ServiceError of another kind is not a conflict", () => {
    const rateLimit = new ServiceRateLimitError({
      operation: "dispatchConsolidatedShipment",
      code: "HTTP_429",
      message: "slow down",
    });
    expect(rateLimit instanceof ServiceConflictError).toBe(false);
    expect(foreign(["ServiceError"]) instanceof ServiceConflictError).toBe(false);
    expect(foreign(["ServiceError"]) instanceof ServiceError).toBe(true);
  });

  it("a subclass of your own keeps the ordinary check, and is an instance of the library's class", () => {
    class StaleTokenError extends AuthenticationError {}
    const stale = new StaleTokenError("stale");
    expect(stale instanceof StaleTokenError).toBe(true);
    expect(stale instanceof AuthenticationError).toBe(true);
    expect(new AuthenticationError("plain") instanceof StaleTokenError).toBe(false);
    expect(foreign(["AuthenticationError"]) instanceof StaleTokenError).toBe(false);
  });

  it("a class keeps its documented name, and a subclass of your own its own (review second-bundle-1)", () => {
    class RetriedConflictError extends ServiceConflictError {}
    const init = { operation: "voidParcel", code: "B002", message: "refused" } as const;
    const names = (error: Error) => [error.name, error.constructor.name];
    expect(names(new ServiceConflictError(init))).toEqual(Array(2).fill("ServiceConflictError"));
    expect(names(new RetriedConflictError(init))).toEqual(Array(2).fill("RetriedConflictError"));
    expect(new RetriedConflictError(init).toJSON()).toMatchObject({ name: "RetriedConflictError" });
    expect(names(new CallbackError("C1", "refused"))).toEqual(Array(2).fill("CallbackError"));
    // The class's `name` stays as a class's own is: read-only, not enumerable.
    expect(Object.getOwnPropertyDescriptor(ServiceError, "name")).toEqual({
      value: "ServiceError",
      writable: false,
      enumerable: false,
      configurable: true,
    });
  });

  it("nothing else is an instance: plain errors, objects (with the brand too), primitives, null", () => {
    const branded = { [brand("AuthenticationError")]: true, [brand("ServiceError")]: true };
    const values = [
      new Error("x"),
      {},
      branded,
      null,
      undefined,
      "AuthenticationError",
      1,
      Symbol(),
    ];
    for (const value of values) {
      expect(value instanceof AuthenticationError).toBe(false);
      expect(value instanceof ServiceError).toBe(false);
      expect(isServiceError(value)).toBe(false);
    }
  });
});

describe("an AuthenticationError from another copy, in the engine", () => {
  const throwing = (error: unknown): Authenticator => ({
    needsRawBody: () => false,
    authenticateRequest: () => {
      throw error;
    },
  });
  const order = JSON.stringify({ OrderId: "GE-1" });

  async function refuse(error: unknown) {
    const { failures, onError } = collector();
    const handler = createSendOrderToMerchantHandler(() => ({ InternalOrderId: "M-1" }), {
      auth: throwing(error),
      onError,
    });
    const response = await handler.handle(post(order));
    return { status: response.status, body: json(response), failures };
  }

  it("keeps its kind (431) and its reason", async () => {
    const { status, body, failures } = await refuse(
      foreign(["AuthenticationError"], {
        name: "AuthenticationError",
        message: "Authorization header too large",
        kind: "header_too_large",
      }),
    );
    expect(status).toBe(431);
    expect(body).toMatchObject({ ErrorCode: "HEADER_TOO_LARGE" });
    expect(failures[0]).toMatchObject({
      kind: "header_too_large",
      status: 431,
      reason: "Authorization header too large",
      error: { name: "AuthenticationError" },
    });
  });

  it("a kind that is neither of the two is a 401, and throwing getters are a 401, never a crash", async () => {
    const odd = await refuse(
      foreign(["AuthenticationError"], { message: "odd", kind: "not_found" }),
    );
    expect([odd.status, odd.failures[0]?.kind, odd.failures[0]?.reason]).toEqual([
      401,
      "unauthorized",
      "odd",
    ]);
    const hostile = foreign(["AuthenticationError"]);
    for (const key of ["kind", "message"]) {
      Object.defineProperty(hostile, key, {
        get() {
          throw new Error("getter");
        },
      });
    }
    const refused = await refuse(hostile);
    expect([refused.status, refused.failures[0]?.kind]).toEqual([401, "unauthorized"]);
  });
});

// Review life-4: withIdempotency's store failure (before the function ran) was reported as "the
// handler threw". Another copy's withIdempotency (a bundle of its own) is told apart the same way.
describe("an IdempotencyStoreError from another copy, in the engine", () => {
  it("is a 500 internal_error whose reason says the store failed and the function did not run", async () => {
    const { failures, onError } = collector();
    const stored = foreign(["IdempotencyStoreError"], { name: "IdempotencyStoreError" });
    const handler = createSendOrderToMerchantHandler(
      () => {
        throw stored;
      },
      { auth: false, onError },
    );
    const order = samplePayload("SendOrderToMerchant", { OrderId: "GE-1" });
    const response = await handler.handle(post(JSON.stringify(order)));
    expect(response.status).toBe(500);
    expect(json(response)).toMatchObject({ ErrorCode: "INTERNAL_ERROR" });
    expect(failures).toMatchObject([
      {
        kind: "internal_error",
        status: 500,
        reason: "the idempotency store failed; the function did not run",
        error: { name: "IdempotencyStoreError", message: "from another copy" },
      },
    ]);
  });
});

describe("an AuthenticationOutage from another copy, in the engine", () => {
  const throwing = (error: unknown): Authenticator => ({
    needsRawBody: () => false,
    authenticateRequest: () => {
      throw error;
    },
  });

  async function answer(error: unknown) {
    const { failures, onError } = collector();
    const handler = createSendOrderToMerchantHandler(() => ({ InternalOrderId: "M-1" }), {
      auth: throwing(error),
      onError,
    });
    const response = await handler.handle(post(JSON.stringify({ OrderId: "GE-1" })));
    return { status: response.status, body: json(response), failures };
  }

  it("is a 500 with its reason, and onError gets what the merchant's check threw", async () => {
    const { status, body, failures } = await answer(
      foreign(["AuthenticationOutage"], {
        message: "the cart token's verify function threw",
        thrown: new Error("cart store down"),
      }),
    );
    expect(status).toBe(500);
    expect(body).toMatchObject({ ErrorCode: "INTERNAL_ERROR" });
    expect(failures[0]).toMatchObject({
      kind: "internal_error",
      reason: "the cart token's verify function threw (the call was neither accepted nor refused)",
      error: { message: "cart store down" },
    });
  });

  it.each(["message", "thrown"])(
    "a %s getter that throws: still answered as an outage, not by the last-resort guard",
    async (key) => {
      const hostile = foreign(["AuthenticationOutage"], { message: "store down" });
      Object.defineProperty(hostile, key, {
        get() {
          throw new Error("getter");
        },
      });
      const { status, failures } = await answer(hostile);
      expect(status).toBe(500);
      expect(failures).toHaveLength(1);
      expect(failures[0]?.kind).toBe("internal_error");
      expect(failures[0]?.reason).toContain("(the call was neither accepted nor refused)");
    },
  );
});
