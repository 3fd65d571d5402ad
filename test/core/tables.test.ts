// The lookup tables the package exports (FAILURE_STATUS, CALLBACK_NAMES, the service's code tables,
// the simulator's seeds…) are the tables the library reads on every call. Found by review
// (surface-2): they were live objects, so one write anywhere in the process (a dependency "tuning"
// FAILURE_STATUS) changed what every handler answered. They are frozen, to the last level.
import { afterEach, describe, expect, it } from "vitest";
import * as express from "../../src/adapters/express.js";
import * as fetchAdapter from "../../src/adapters/fetch.js";
import * as koa from "../../src/adapters/koa.js";
import * as node from "../../src/adapters/node.js";
import * as postgres from "../../src/idempotency/postgres.js";
import * as redis from "../../src/idempotency/redis.js";
import * as root from "../../src/index.js";
import { CALLBACK_NAMES, createUpdateOrderStatusHandler, FAILURE_STATUS } from "../../src/index.js";
import * as service from "../../src/service/index.js";
import * as testing from "../../src/testing/index.js";

const ENTRIES: Record<string, Record<string, unknown>> = {
  ".": root,
  "./service": service,
  "./testing": testing,
  "./redis": redis,
  "./postgres": postgres,
  "./express": express,
  "./koa": koa,
  "./fetch": fetchAdapter,
  "./node": node,
};

/** A table: an array or an object literal (a zod schema or a class instance is not one). */
function isTable(value: unknown): value is object {
  if (Array.isArray(value)) return true;
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** The paths, under `path`, of every table in `value` (itself included) that is not frozen. */
function unfrozen(value: unknown, path: string): string[] {
  if (!isTable(value)) return [];
  const found = Object.isFrozen(value) ? [] : [path];
  for (const [key, inner] of Object.entries(value))
    found.push(...unfrozen(inner, `${path}.${key}`));
  return found;
}

const tables = Object.entries(ENTRIES).flatMap(([entry, module]) =>
  Object.entries(module)
    .filter(([, value]) => isTable(value))
    .map(([name, value]) => [`${entry} ${name}`, value] as const),
);

describe("exported lookup tables", () => {
  it("the entries export the tables the review listed", () => {
    const names = tables.map(([name]) => name);
    for (const name of [
      ". FAILURE_STATUS",
      ". CALLBACK_NAMES",
      "./service SERVICE_OPERATION_NAMES",
      "./service SUBSCRIPTION_ERROR_CODES",
      "./service DISPATCH_ERROR_CODES",
      "./service VOID_PARCEL_CODES",
      "./service SERVICE_LEVELS",
      "./testing CAPTURED_CALLBACKS",
      "./testing SIMULATED_ORDERS",
      "./testing SIMULATED_SUBSCRIPTIONS",
      "./testing SIMULATED_COUNTRY_VAT",
    ]) {
      expect(names).toContain(name);
    }
  });

  it.each(tables)("%s is frozen to the last level", (name, value) => {
    expect(unfrozen(value, name)).toEqual([]);
  });

  it("a write throws in strict mode (this module) and changes nothing", () => {
    expect(() => {
      (FAILURE_STATUS as { invalid_payload: number }).invalid_payload = 200;
    }).toThrow(TypeError);
    expect(FAILURE_STATUS.invalid_payload).toBe(400);
    expect(() => (CALLBACK_NAMES as unknown as string[]).push("Other")).toThrow(TypeError);
    expect(() => {
      (service.VOID_PARCEL_CODES.C104 as { kind: string }).kind = "server";
    }).toThrow(TypeError);
    expect(service.VOID_PARCEL_CODES.C104.kind).toBe("not-found");
  });

  describe("a sloppy-mode write (no throw) has no effect on answers", () => {
    const sloppy = new Function(
      "table",
      "table.invalid_payload = 200; return table.invalid_payload;",
    );
    afterEach(() => expect(FAILURE_STATUS.invalid_payload).toBe(400));

    it("a bad payload is still a 400", async () => {
      expect(sloppy(FAILURE_STATUS)).toBe(400);
      const handler = createUpdateOrderStatusHandler(() => {}, { auth: false, onError: () => {} });
      const res = await handler.handle({ method: "POST", url: "/x", headers: {}, body: "{}" });
      expect(res.status).toBe(400);
    });
  });

  it("/service does not export the client's operation table (its internals)", () => {
    expect("OPERATIONS" in service).toBe(false);
  });
});
