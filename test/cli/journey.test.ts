// `simulate` as one journey: the order id the endpoint answers is carried into the later calls,
// the order (and its payment) is delivered twice as the service redelivers, and the wire-facts §6
// forms ("as captured") are sent after each sample.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toNodeListener } from "../../src/adapters/node.js";
import { createAuth } from "../../src/auth/index.js";
import { ALL_CALLBACKS, OVERLAP_ORDER_ID, rowProblems, simulate } from "../../src/cli/simulate.js";
import {
  CallbackError,
  type CallbackHandlers,
  createCallbackRouter,
  withIdempotency,
} from "../../src/index.js";
import {
  CAPTURED_CALLBACKS,
  CAPTURED_ORDER_ID,
  capturedPayload,
  createTestKeys,
  SAMPLE_CART_TOKEN,
  SAMPLE_MERCHANT_ORDER_ID,
  SAMPLE_ORDER_ID,
  samplePayload,
  sendCallback,
  signServiceToken,
  type TestKeys,
} from "../../src/testing/index.js";
import {
  cartFixture,
  json,
  listen,
  MERCHANT_GUID,
  ownOrderId,
  type RunningServer,
  startMerchant,
  startRawMerchant,
} from "../testing/helpers.js";

let keys: TestKeys;
const servers: RunningServer[] = [];

beforeAll(async () => {
  keys = await createTestKeys();
});

afterAll(async () => {
  for (const server of servers) await server.close();
});

/** A library router with these handlers, and its base URL. */
async function merchant(handlers: Partial<CallbackHandlers>) {
  const auth = createAuth({
    jwt: { environment: "test", keys: { test: keys.publicKey } },
    merchantGuid: MERCHANT_GUID,
  });
  const router = createCallbackRouter({
    basePath: "/crossborder",
    auth,
    handlers,
    onError: () => {},
  });
  const server = await listen(toNodeListener(router));
  servers.push(server);
  return `${server.origin}/crossborder`;
}

const run = (base: string, callbacks = ALL_CALLBACKS) =>
  simulate({ url: base, callbacks, privateKey: keys.privateKey, merchantGuid: MERCHANT_GUID });

const ORDER_FLOW = ["SendOrderToMerchant", "PerformOrderPayment", "UpdateOrderStatus"] as const;

describe("the merchant's order id is carried through the journey (K5)", () => {
  it("sends the InternalOrderId answered by SendOrderToMerchant as the later calls' MerchantOrderId", async () => {
    // A correct merchant finding its orders by its own id (001 §2.1: MerchantOrderId is the id
    // returned from the earlier SendOrderToMerchant).
    const mine = new Map<string, string>();
    const find = (id: string | null | undefined) => {
      if (!id || !mine.has(id)) throw new CallbackError("ORDER_NOT_FOUND", "Unknown order");
      return id;
    };
    const base = await merchant({
      SendOrderToMerchant: (order) => {
        const id =
          [...mine].find(([, serviceId]) => serviceId === order.OrderId)?.[0] ??
          `M-${mine.size + 1}`;
        mine.set(id, order.OrderId);
        return { InternalOrderId: id, PaymentAmount: "123.73", PaymentCurrencyCode: "USD" };
      },
      // The service's own form leaves MerchantOrderId null (wire-facts §6): found by OrderId, and
      // a status for an order not known is not refused (README: Callbacks out of order).
      UpdateOrderStatus: (update) => {
        if (update.MerchantOrderId != null)
          return { InternalOrderId: find(update.MerchantOrderId) };
        const id = [...mine].find(([, serviceId]) => serviceId === update.OrderId)?.[0];
        return id === undefined ? {} : { InternalOrderId: id };
      },
      PerformOrderPayment: (payment) => ({
        InternalOrderId: find(payment.MerchantOrderId),
        PaymentAmount: "123.73",
        PaymentCurrencyCode: "USD",
      }),
    });
    const rows = await run(base, ORDER_FLOW);
    expect(rows.map((row) => [row.callback, rowProblems(row)])).toEqual(
      ORDER_FLOW.map((callback) => [callback, []]),
    );
    const payment = rows.find((row) => row.callback === "PerformOrderPayment");
    const status = rows.find((row) => row.callback === "UpdateOrderStatus");
    expect(payment?.payload).toMatchObject({ MerchantOrderId: "M-1" });
    expect(status?.payload).toMatchObject({ MerchantOrderId: "M-1" });
  });

  it("keeps the sample's MerchantOrderId when no SendOrderToMerchant answered one, and a given payload's", async () => {
    const base = await merchant({
      SendOrderToMerchant: () => ({ InternalOrderId: "M-9" }),
      UpdateOrderStatus: () => ({}),
    });
    const alone = await run(base, ["UpdateOrderStatus"]);
    expect(alone[0]?.payload).toMatchObject({ MerchantOrderId: SAMPLE_MERCHANT_ORDER_ID });
    const given = await simulate({
      url: base,
      callbacks: ["SendOrderToMerchant", "UpdateOrderStatus"],
      privateKey: keys.privateKey,
      merchantGuid: MERCHANT_GUID,
      payloads: {
        UpdateOrderStatus: { OrderId: "GE-1", StatusCode: "canceled", MerchantOrderId: "X-7" },
      },
    });
    expect(given[1]?.payload).toMatchObject({ MerchantOrderId: "X-7" });
  });
});

describe("redelivery (K3)", () => {
  it("reports a merchant that creates a second order when the same order is delivered again", async () => {
    let n = 0;
    const base = await merchant({
      SendOrderToMerchant: () => ({
        InternalOrderId: `M-${++n}`,
        PaymentAmount: "123.73",
        PaymentCurrencyCode: "USD",
      }),
    });
    const [row] = await run(base, ["SendOrderToMerchant"]);
    expect(row && rowProblems(row)).toEqual([
      expect.stringMatching(
        /^redelivered .*: InternalOrderId "M-1" then "M-2": a duplicate order on redelivery.*withIdempotency/,
      ),
      // Two deliveries of a new order at once (review fidelity-1) make two more.
      expect.stringMatching(
        /^delivered twice at once .*: InternalOrderId "M-[34]" and "M-[34]": two orders for one OrderId/,
      ),
      // The update (review PIT-3) creates another one again.
      expect.stringMatching(/^updated .*: InternalOrderId "M-1" then "M-5": a second order/),
    ]);
  });

  it("warns, without failing, about a payment refused on redelivery after it succeeded (the spec documents no error for it)", async () => {
    const paid = new Set<string>();
    const base = await merchant({
      SendOrderToMerchant: () => ({ InternalOrderId: "M-1" }),
      PerformOrderPayment: (payment) => {
        if (paid.has(payment.OrderId)) throw new CallbackError("ALREADY_PAID", "Paid already");
        paid.add(payment.OrderId);
        return { InternalOrderId: "M-1", PaymentAmount: "123.73", PaymentCurrencyCode: "USD" };
      },
    });
    const rows = await run(base, ["SendOrderToMerchant", "PerformOrderPayment"]);
    const row = rows[1] as (typeof rows)[number];
    expect(rowProblems(row)).toEqual([]);
    expect("result" in row && row.result.warnings).toEqual([
      expect.stringMatching(/^redelivered .*: a refusal: .*ALREADY_PAID.*withIdempotency/),
    ]);
  });

  it("still fails a payment whose redelivery crashes (HTTP 500), and a second order's redelivery refused", async () => {
    const paid = new Set<string>();
    const orders = new Set<string>();
    const base = await merchant({
      SendOrderToMerchant: (order) => {
        if (orders.has(order.OrderId)) throw new CallbackError("DUPLICATE", "Order exists");
        orders.add(order.OrderId);
        return { InternalOrderId: `M-${order.OrderId}` };
      },
      PerformOrderPayment: (payment) => {
        if (paid.has(payment.OrderId)) throw new Error("charged twice?");
        paid.add(payment.OrderId);
        return { PaymentAmount: "123.73", PaymentCurrencyCode: "USD" };
      },
    });
    const rows = await run(base, ["SendOrderToMerchant", "PerformOrderPayment"]);
    expect(rowProblems(rows[0] as (typeof rows)[number])).toEqual([
      expect.stringMatching(/^redelivered .*: a refusal: .*DUPLICATE.*withIdempotency/),
      // One of two deliveries at once of a new order is refused as a duplicate (review fidelity-1).
      expect.stringMatching(/^delivered twice at once .*: a refusal: .*DUPLICATE.*withIdempotency/),
      expect.stringMatching(
        /^updated .*: a refusal: .*DUPLICATE.*keep InternalOrderId per OrderId/,
      ),
    ]);
    expect(rowProblems(rows[1] as (typeof rows)[number])).toEqual([
      expect.stringMatching(/^redelivered .*HTTP 500/),
    ]);
  });

  it("keeps card data sent back by a refused repeated payment a problem: only the refusal is a warning", async () => {
    let payments = 0;
    const paid = {
      Success: true,
      InternalOrderId: "M-1",
      PaymentAmount: "123.73",
      PaymentCurrencyCode: "USD",
    };
    const server = await startRawMerchant({
      // One merchant order per OrderId (review cli-1).
      SendOrderToMerchant: (res, request) =>
        json(res, 200, { ...paid, InternalOrderId: ownOrderId(request.body) }),
      PerformOrderPayment: (res, request) => {
        const sent = JSON.parse(request.body);
        // The captured payment (CardNumber null) is paid: only the repeat is refused.
        if (sent.PaymentDetails?.CardNumber === null || payments++ === 0) json(res, 200, paid);
        else json(res, 200, { Success: false, ErrorCode: "ALREADY_PAID", Request: sent });
      },
    });
    servers.push(server);
    const rows = await run(server.base, ["SendOrderToMerchant", "PerformOrderPayment"]);
    const row = rows[1] as (typeof rows)[number];
    const problems = rowProblems(row);
    expect(problems).toContainEqual(expect.stringMatching(/^redelivered .*card number.*echoed/));
    expect(problems).toContainEqual(expect.stringMatching(/^redelivered .*CVV/));
    expect(problems.some((problem) => problem.includes("a refusal"))).toBe(false);
    expect("result" in row && row.result.warnings).toEqual([
      expect.stringMatching(/^redelivered .*: a refusal: .*ALREADY_PAID/),
    ]);
    expect("failedAnswers" in row && row.failedAnswers?.map((answer) => answer.send)).toEqual([
      "redelivered",
    ]);
  });

  it("does not call a redelivered payment answered without InternalOrderId a second order id", async () => {
    const paid = new Set<string>();
    const base = await merchant({
      SendOrderToMerchant: (order) => ({
        InternalOrderId: `M-${order.OrderId}`,
        PaymentAmount: "1",
        PaymentCurrencyCode: "USD",
      }),
      PerformOrderPayment: (payment) => {
        if (paid.has(payment.OrderId)) return { PaymentAmount: "1", PaymentCurrencyCode: "USD" };
        paid.add(payment.OrderId);
        return {
          InternalOrderId: `M-${payment.OrderId}`,
          PaymentAmount: "1",
          PaymentCurrencyCode: "USD",
        };
      },
    });
    const rows = await run(base, ["SendOrderToMerchant", "PerformOrderPayment"]);
    expect(rows.map(rowProblems)).toEqual([[], []]);
  });

  it("names what the spec says of a redelivery (an update, a manual retry), not automatic retries", async () => {
    let n = 0;
    const base = await merchant({ SendOrderToMerchant: () => ({ InternalOrderId: `M-${++n}` }) });
    const [row] = await run(base, ["SendOrderToMerchant"]);
    const problem = (row && rowProblems(row)[0]) ?? "";
    expect(problem).toContain("manual retry");
    expect(problem).not.toMatch(/timeout|5xx/);
  });

  it("delivers SendOrderToMerchant and PerformOrderPayment twice with the identical body; an idempotent merchant passes", async () => {
    const good = await startMerchant(keys.publicKey);
    servers.push(good);
    const rows = await simulate({
      url: good.base,
      callbacks: ["SendOrderToMerchant", "PerformOrderPayment"],
      privateKey: keys.privateKey,
      merchantGuid: MERCHANT_GUID,
    });
    expect(rows.map(rowProblems)).toEqual([[], []]);
    for (const callback of ["SendOrderToMerchant", "PerformOrderPayment"]) {
      const calls = good.calls.filter((call) => call.callback === callback);
      // The sample twice, (the order: a new one twice at once, its update,) then the captured form.
      expect(calls.length).toBe(callback === "SendOrderToMerchant" ? 6 : 3);
      expect(calls[1]?.payload).toEqual(calls[0]?.payload);
      expect(calls.at(-1)?.payload).not.toEqual(calls[0]?.payload);
    }
  });
});

describe("overlapping deliveries of one order (review fidelity-1)", () => {
  it("fails a SendOrderToMerchant whose check-then-insert awaits between the two: two deliveries at once make two orders", async () => {
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const db = new Map<string, string>();
    let next = 1;
    const base = await merchant({
      SendOrderToMerchant: async (order) => {
        // A wide window, so the two deliveries overlap on a loaded machine too.
        await sleep(150); // SELECT … WHERE order_id = ?
        let id = db.get(order.OrderId);
        if (id === undefined) {
          id = `M-${next++}`;
          await sleep(150); // INSERT
          db.set(order.OrderId, id);
        }
        return { InternalOrderId: id, PaymentAmount: "123.73", PaymentCurrencyCode: "USD" };
      },
    });
    const [row] = await run(base, ["SendOrderToMerchant"]);
    const problems = row ? rowProblems(row) : [];
    expect(problems).toEqual([
      expect.stringMatching(
        /^delivered twice at once .*InternalOrderId "M-\d+" and "M-\d+": two orders.*withIdempotency.*unique/,
      ),
    ]);
    expect(row && "failedAnswers" in row ? row.failedAnswers?.map((a) => a.send) : []).toEqual([
      "delivered twice at once",
    ]);
  });

  it("passes the same merchant wrapped in withIdempotency, and sends the overlapping pair under an order id of its own", async () => {
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const db = new Map<string, string>();
    const seen: string[] = [];
    let next = 1;
    const base = await merchant({
      SendOrderToMerchant: withIdempotency(async (order) => {
        seen.push(order.OrderId);
        await sleep(20);
        let id = db.get(order.OrderId);
        if (id === undefined) {
          id = `M-${next++}`;
          await sleep(20);
          db.set(order.OrderId, id);
        }
        return { InternalOrderId: id, PaymentAmount: "123.73", PaymentCurrencyCode: "USD" };
      }),
    });
    const rows = await run(base, ["SendOrderToMerchant"]);
    expect(rows.map(rowProblems)).toEqual([[]]);
    expect(seen).toContain(OVERLAP_ORDER_ID);
    expect(OVERLAP_ORDER_ID).not.toBe(CAPTURED_ORDER_ID);
  });

  // Review second-kit-1: a repeat answered with a 5xx is what the service retries (README:
  // Redelivery, 503 DELIVERY_IN_PROGRESS past waitMs): simulate sends it again once both are
  // answered, and only two different InternalOrderIds (or a failure not retried) are a problem.
  it("passes a withIdempotency merchant whose order outlasts waitMs: the repeat answered 503 DELIVERY_IN_PROGRESS is sent again once both are answered (review second-kit-1)", async () => {
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const orders = new Map<string, string>();
    const deliveries: string[] = [];
    let next = 1;
    const idempotent = withIdempotency(
      async (order: { OrderId: string }) => {
        // An ERP call, longer than waitMs: a wide window, so the pair overlaps on a loaded machine.
        await sleep(800);
        let id = orders.get(order.OrderId);
        if (id === undefined) {
          id = `M-${next++}`;
          orders.set(order.OrderId, id);
        }
        return { InternalOrderId: id, PaymentAmount: "123.73", PaymentCurrencyCode: "USD" };
      },
      { waitMs: 100 },
    );
    const answers: number[] = [];
    const base = await merchant({
      SendOrderToMerchant: async (order, context) => {
        deliveries.push(order.OrderId);
        try {
          return await idempotent(order, context);
        } catch (error) {
          if (error instanceof CallbackError) answers.push(error.status);
          throw error;
        }
      },
    });
    const [row] = await run(base, ["SendOrderToMerchant"]);
    expect(row && rowProblems(row)).toEqual([]);
    expect(answers).toEqual([503]); // the repeat was answered DELIVERY_IN_PROGRESS
    // The pair, then the repeat again once both were answered (from the first run's record).
    expect(deliveries.filter((id) => id === OVERLAP_ORDER_ID)).toHaveLength(3);
    expect([...orders.keys()].filter((id) => id === OVERLAP_ORDER_ID)).toHaveLength(1);
  });

  it("fails a merchant that answers the overlapping repeat 503 and makes a second order when it comes again (review second-kit-1)", async () => {
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const running = new Set<string>();
    let next = 1;
    const base = await merchant({
      SendOrderToMerchant: async (order) => {
        if (running.has(order.OrderId)) {
          throw new CallbackError("BUSY", "Order in progress", undefined, { status: 503 });
        }
        running.add(order.OrderId);
        await sleep(400);
        running.delete(order.OrderId);
        // No lookup: every delivery that runs makes an order.
        return {
          InternalOrderId: `M-${next++}`,
          PaymentAmount: "123.73",
          PaymentCurrencyCode: "USD",
        };
      },
    });
    const [row] = await run(base, ["SendOrderToMerchant"]);
    const problems = (row ? rowProblems(row) : []).filter((p) => p.startsWith("delivered twice"));
    expect(problems).toEqual([
      expect.stringMatching(
        /^delivered twice at once .*HTTP 503.*sent again once both were answered.*InternalOrderId "M-\d+" and "M-\d+": two orders for one OrderId.*withIdempotency/,
      ),
    ]);
    expect(problems[0]).not.toMatch(/a server error/);
    expect(row && "failedAnswers" in row ? row.failedAnswers?.map((a) => a.send) : []).toContain(
      "delivered twice at once",
    );
  });

  it("still fails an overlapping pair both answered 5xx, a 5xx repeat sending the card back, and a repeat failing again when sent once more (review second-kit-1)", async () => {
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    // Both of the pair 5xx: no delivery was answered with the order.
    const both = await merchant({
      SendOrderToMerchant: async (order) => {
        if (order.OrderId !== OVERLAP_ORDER_ID) return { InternalOrderId: "M-1" };
        await sleep(50);
        throw new Error("ERP down");
      },
    });
    const [bothRow] = await run(both, ["SendOrderToMerchant"]);
    expect((bothRow ? rowProblems(bothRow) : []).filter((p) => p.startsWith("delivered"))).toEqual([
      expect.stringMatching(/^delivered twice at once .*HTTP 500/),
      expect.stringMatching(/^delivered twice at once .*HTTP 500/),
    ]);
    // A 503 whose body quotes the card: the status is retried, the leak is not excused.
    let overlapping = 0;
    const leaky = await startRawMerchant({
      SendOrderToMerchant: async (res, request) => {
        const sent = JSON.parse(request.body);
        if (sent.OrderId !== OVERLAP_ORDER_ID) {
          json(res, 200, { Success: true, InternalOrderId: "M-1" });
        } else if (overlapping++ === 1) {
          json(res, 503, { Success: false, Request: sent });
        } else {
          await sleep(100);
          json(res, 200, { Success: true, InternalOrderId: "M-2" });
        }
      },
    });
    servers.push(leaky);
    const [leakyRow] = await run(leaky.base, ["SendOrderToMerchant"]);
    const leaks = (leakyRow ? rowProblems(leakyRow) : []).filter((p) => p.startsWith("delivered"));
    expect(leaks).toContainEqual(
      expect.stringMatching(/^delivered twice at once .*card number.*echoed/),
    );
    expect(leaks.some((p) => p.includes("a server error"))).toBe(false);
    // The repeat sent again after both were answered fails again: a problem, named as that send.
    let calls = 0;
    const stuck = await startRawMerchant({
      SendOrderToMerchant: async (res, request) => {
        const sent = JSON.parse(request.body);
        if (sent.OrderId !== OVERLAP_ORDER_ID) {
          json(res, 200, { Success: true, InternalOrderId: "M-1" });
        } else if (calls++ === 0) {
          await sleep(100);
          json(res, 200, { Success: true, InternalOrderId: "M-2" });
        } else json(res, 503, { Success: false, ErrorCode: "DELIVERY_IN_PROGRESS" });
      },
    });
    servers.push(stuck);
    const [stuckRow] = await run(stuck.base, ["SendOrderToMerchant"]);
    expect(
      (stuckRow ? rowProblems(stuckRow) : []).filter((p) => p.startsWith("delivered")),
    ).toEqual([
      expect.stringMatching(
        /^delivered twice at once .*sent again once both were answered.*HTTP 503: a server error/,
      ),
    ]);
    expect(calls).toBe(3);
  });
});

describe("redelivery of a status, a return and a parcel dispatch (review sequence-3)", () => {
  const REPEATED = ["UpdateOrderStatus", "SendRMAInfoToMerchant", "UpdateParcelDispatch"] as const;

  it("delivers UpdateOrderStatus, SendRMAInfoToMerchant and UpdateParcelDispatch twice with the identical body; a merchant answering as the first time passes", async () => {
    const good = await startMerchant(keys.publicKey);
    servers.push(good);
    const rows = await simulate({
      url: good.base,
      callbacks: ["SendOrderToMerchant", ...REPEATED],
      privateKey: keys.privateKey,
      merchantGuid: MERCHANT_GUID,
    });
    expect(rows.map(rowProblems)).toEqual([[], [], [], []]);
    for (const callback of REPEATED) {
      const calls = good.calls.filter((call) => call.callback === callback);
      // UpdateOrderStatus: then its captured form (review fidelity-3).
      expect(calls.length).toBe(callback === "UpdateOrderStatus" ? 3 : 2);
      expect(calls[1]?.payload).toEqual(calls[0]?.payload);
    }
  });

  it("fails a merchant that refuses the repeat of a return, a parcel dispatch or a status (recorded once by a unique key that throws)", async () => {
    const seen = new Set<string>();
    const once = (key: string) => {
      if (seen.has(key)) throw new CallbackError("DUPLICATE", `${key} exists`);
      seen.add(key);
    };
    const base = await merchant({
      SendOrderToMerchant: () => ({ InternalOrderId: "M-1" }),
      UpdateOrderStatus: (update) => once(`${update.OrderId}:${update.StatusCode}`),
      SendRMAInfoToMerchant: (rma) => once(rma.RMANumber),
      UpdateParcelDispatch: (dispatch) => once(dispatch.DispatchedParcel.Code ?? ""),
    });
    const rows = await run(base, ["SendOrderToMerchant", ...REPEATED]);
    const problems = rows.slice(1).map(rowProblems);
    expect(problems).toEqual([
      [
        expect.stringMatching(
          /^redelivered .*: a refusal: .*DUPLICATE.*apply a status once.*no automatic retries \(001 §4\.3\)/,
        ),
      ],
      [
        expect.stringMatching(
          /^redelivered .*: a refusal: .*RMA-000317 exists.*once by its RMANumber/,
        ),
      ],
      [
        expect.stringMatching(
          /^redelivered .*: a refusal: .*PCL-88213 exists.*once by its parcel Code/,
        ),
      ],
    ]);
    for (const row of rows.slice(1)) {
      expect("failedAnswers" in row && row.failedAnswers?.map((a) => a.send)).toEqual([
        "redelivered",
      ]);
    }
  });

  it("fails a repeat answered with another id or status, and warns of one answered with another message", async () => {
    let statuses = 0;
    let returns = 0;
    const base = await merchant({
      SendOrderToMerchant: () => ({ InternalOrderId: "M-1" }),
      UpdateOrderStatus: () => ({ InternalOrderId: `M-${++statuses}` }),
      SendRMAInfoToMerchant: (rma) => ({
        Message: ++returns === 1 ? `RMA ${rma.RMANumber} recorded` : "recorded again",
      }),
    });
    const rows = await run(base, [
      "SendOrderToMerchant",
      "UpdateOrderStatus",
      "SendRMAInfoToMerchant",
    ]);
    const [, status, rma] = rows as [unknown, (typeof rows)[number], (typeof rows)[number]];
    expect(rowProblems(status)).toEqual([
      expect.stringMatching(
        /^redelivered .*: InternalOrderId "M-1" then "M-2": another answer on redelivery; .*apply a status once/,
      ),
    ]);
    expect(rowProblems(rma)).toEqual([]);
    expect("result" in rma && rma.result.warnings).toEqual([
      expect.stringMatching(
        /^redelivered .*: Message "RMA RMA-000317 recorded" then "recorded again": another answer on redelivery; .*once by its RMANumber/,
      ),
    ]);
  });
});

describe("a repeat answered with an id or status left out (review second-seq-4)", () => {
  it("passes, with a warning, a status whose repeat leaves out the ids and status the first answer carried", async () => {
    const seen = new Set<string>();
    const base = await merchant({
      SendOrderToMerchant: (order) => ({
        InternalOrderId: order.OrderId === SAMPLE_ORDER_ID ? "M-1" : `M-${order.OrderId}`,
      }),
      UpdateOrderStatus: (update) => {
        const key = `${update.OrderId}:${update.StatusCode}`;
        if (seen.has(key)) return; // applied already: nothing more to say ("same, or nothing")
        seen.add(key);
        return { InternalOrderId: "M-1", OrderId: "M-1", StatusCode: update.StatusCode };
      },
    });
    const rows = await run(base, ["SendOrderToMerchant", "UpdateOrderStatus"]);
    expect(rows.map(rowProblems)).toEqual([[], []]);
    const status = rows[1];
    expect(status && "result" in status && status.result.warnings).toEqual([
      expect.stringMatching(/^redelivered .*: InternalOrderId "M-1" then absent: /),
      expect.stringMatching(/^redelivered .*: OrderId "M-1" then absent: /),
      expect.stringMatching(/^redelivered .*: StatusCode "canceled" then absent: /),
    ]);
  });

  it("still fails a repeat whose Success differs, or an id present on both sides with two values", async () => {
    let statuses = 0;
    let returns = 0;
    const base = await merchant({
      SendOrderToMerchant: () => ({ InternalOrderId: "M-1" }),
      UpdateOrderStatus: () => ({ OrderId: `M-${++statuses}` }),
      SendRMAInfoToMerchant: () => {
        if (++returns > 1) throw new CallbackError("DUPLICATE", "recorded");
      },
    });
    const rows = await run(base, [
      "SendOrderToMerchant",
      "UpdateOrderStatus",
      "SendRMAInfoToMerchant",
    ]);
    expect(rows.slice(1).map(rowProblems)).toEqual([
      [expect.stringMatching(/^redelivered .*: OrderId "M-1" then "M-2": another answer/)],
      [expect.stringMatching(/^redelivered .*: a refusal: /)],
    ]);
  });
});

describe("order update (review PIT-3)", () => {
  it("fails a merchant deduplicated by withIdempotency alone that creates a second order on an update of the same OrderId", async () => {
    let rows = 0;
    const base = await merchant({
      SendOrderToMerchant: withIdempotency(async () => ({
        InternalOrderId: `M-${++rows}`,
        PaymentAmount: "123.73",
        PaymentCurrencyCode: "USD",
      })),
    });
    const [row] = await run(base, ["SendOrderToMerchant"]);
    const problems = (row && rowProblems(row)) ?? [];
    expect(problems).toEqual([
      expect.stringMatching(
        /^updated .*: InternalOrderId "M-1" then "M-\d+": a second order for the same OrderId; .*keep InternalOrderId per OrderId.*withIdempotency alone does not cover updates/,
      ),
    ]);
    const failed = row && "failedAnswers" in row ? (row.failedAnswers ?? []) : [];
    expect(failed.map((answer) => answer.send)).toEqual(["updated"]);
    // The update: the same OrderId, another Address2.
    type Order = { OrderId: string; PrimaryShipping: { Address2: string } };
    const update = failed[0]?.payload as Order;
    const first = row?.payload as Order;
    expect(update.OrderId).toBe(first.OrderId);
    expect(update.PrimaryShipping.Address2).not.toBe(first.PrimaryShipping.Address2);
    expect({ ...update, PrimaryShipping: first.PrimaryShipping }).toEqual(first);
  });

  it("passes a merchant that keeps InternalOrderId per OrderId, and sends the order a third time changed", async () => {
    const good = await startMerchant(keys.publicKey);
    servers.push(good);
    const rows = await simulate({
      url: good.base,
      callbacks: ["SendOrderToMerchant"],
      privateKey: keys.privateKey,
      merchantGuid: MERCHANT_GUID,
    });
    expect(rows.map(rowProblems)).toEqual([[]]);
    const calls = good.calls.filter((call) => call.callback === "SendOrderToMerchant");
    // The sample, its redelivery, a new order twice at once, the sample's update, then the
    // captured form.
    expect(calls.map((call) => (call.payload as { OrderId: string }).OrderId)).toEqual([
      "GE927127001US",
      "GE927127001US",
      OVERLAP_ORDER_ID,
      OVERLAP_ORDER_ID,
      "GE927127001US",
      "GE927127002US",
    ]);
    expect(calls[4]?.payload).not.toEqual(calls[0]?.payload);
  });
});

describe("the sample's decoded values (review PIT-7)", () => {
  it("fails a merchant that decodes the address lines again: the sample's Address2 holds a %", async () => {
    const again = (value: string | null | undefined) =>
      value == null ? value : decodeURIComponent(value.replace(/\+/g, " "));
    const base = await merchant({
      SendOrderToMerchant: (order) => {
        const shipping = order.PrimaryShipping;
        again(shipping?.Address1);
        again(shipping?.Address2);
        again(order.PrimaryBilling?.Email);
        return { InternalOrderId: `M-${order.OrderId}` };
      },
    });
    const [row] = await run(base, ["SendOrderToMerchant"]);
    expect(row && "result" in row && row.result.status).toBe(500);
    expect(row && rowProblems(row)).toContainEqual(expect.stringMatching(/HTTP 500/));
  });
});

describe("gift-card redelivery (review PIT-4)", () => {
  it("fails a RedeemGiftCard that debits the card again when the same redemption is delivered twice", async () => {
    let balance = 100;
    const base = await merchant({
      RedeemGiftCard: () => {
        balance -= 10;
        return { Balance: balance.toFixed(2) };
      },
    });
    const [row] = await run(base, ["RedeemGiftCard"]);
    expect(balance).toBe(80);
    expect(row && rowProblems(row)).toEqual([
      expect.stringMatching(
        /^redelivered .*: Balance "90\.00" then "80\.00": a second debit on redelivery; .*no second debit.*withIdempotency/,
      ),
    ]);
    expect(row && "failedAnswers" in row && row.failedAnswers?.map((a) => a.send)).toEqual([
      "redelivered",
    ]);
  });

  it("fails a RefundGiftCard that credits the card again, and a redelivery answered another Success", async () => {
    let balance = 100;
    let refunds = 0;
    const base = await merchant({
      RefundGiftCard: () => {
        balance += 10;
        return { Balance: balance };
      },
      RedeemGiftCard: () => ({ Success: ++refunds === 1 ? true : "True", Balance: "75.00" }),
    });
    const rows = await run(base, ["RefundGiftCard", "RedeemGiftCard"]);
    expect(rowProblems(rows[0] as (typeof rows)[number])).toEqual([
      expect.stringMatching(
        /^redelivered .*: Balance "110" then "120": a second credit on redelivery; .*no second credit/,
      ),
    ]);
    // "True" and true are the same success: the redelivery answered as the first delivery.
    expect(rowProblems(rows[1] as (typeof rows)[number])).toEqual([]);
  });

  // Review second-pit-3: "75.00" then "75" is one balance written two ways, not a second debit.
  it("compares the Balances as amounts: the same amount written another way passes", async () => {
    let calls = 0;
    const base = await merchant({
      RedeemGiftCard: () => ({ Balance: ++calls === 1 ? "75.00" : "75" }),
    });
    const [row] = await run(base, ["RedeemGiftCard"]);
    expect(calls).toBe(2);
    expect(row && rowProblems(row)).toEqual([]);
  });

  it("passes a gift-card merchant that answers a redelivery as the first delivery, and sends both twice", async () => {
    let balance = 100;
    const done = new Map<string, string>();
    const once = (key: string, apply: () => string) =>
      done.get(key) ?? (done.set(key, apply()).get(key) as string);
    const calls: string[] = [];
    const base = await merchant({
      RedeemGiftCard: (request) => {
        calls.push("RedeemGiftCard");
        return {
          Balance: once(`redeem:${JSON.stringify(request)}`, () => {
            balance -= 25;
            return balance.toFixed(2);
          }),
        };
      },
      RefundGiftCard: (request) => {
        calls.push("RefundGiftCard");
        return {
          Balance: once(`refund:${JSON.stringify(request)}`, () => {
            balance += 10;
            return balance.toFixed(2);
          }),
        };
      },
    });
    const rows = await run(base, ["RedeemGiftCard", "RefundGiftCard"]);
    expect(rows.map(rowProblems)).toEqual([[], []]);
    expect(calls).toEqual(["RedeemGiftCard", "RedeemGiftCard", "RefundGiftCard", "RefundGiftCard"]);
    expect(balance).toBe(85);
  });
});

describe("the forms seen in real captures (K4)", () => {
  it("has a captured form of the order, its payment and the cart request, built from wire-facts §6", () => {
    expect([...CAPTURED_CALLBACKS].sort()).toEqual(
      [
        "GetCheckoutCartInfo",
        "PerformOrderPayment",
        "SendOrderToMerchant",
        "UpdateOrderStatus",
      ].sort(),
    );
    const payment = capturedPayload("PerformOrderPayment");
    expect(payment.PaymentDetails).toMatchObject({
      CardNumber: null,
      CVVNumber: null,
      PaymentMethodCode: "OT",
    });
    const order = capturedPayload("SendOrderToMerchant");
    expect(order.PaymentDetails).toBeNull();
    expect(order.InternationalDetails?.TransactionCurrencyCode).toBe(" EUR");
    expect(order.Customer?.IsEndCustomerPrimary).toBe(false);
    // Encoded although the flag says the secondary is the end customer.
    expect(order.PrimaryBilling?.City).toBe("New+York");
    expect(order.PrimaryBilling?.StateOrProvince).toBe("New York");
    expect(order.PrimaryShipping?.Address2).toBe("Test Address2\r\nGlobal-e OrderId:GE927127");
    expect(Object.values(order.SecondaryShipping ?? {}).every((value) => value === null)).toBe(
      true,
    );
    expect(capturedPayload("GetCheckoutCartInfo")).toMatchObject({ countryCode: "GER" });
  });

  it("fails an endpoint that crashes on the service's own collection (CardNumber null, OT), which the sample alone passed", async () => {
    const base = await merchant({
      SendOrderToMerchant: (order) => ({
        InternalOrderId: order.OrderId === SAMPLE_ORDER_ID ? "M-1" : `M-${order.OrderId}`,
      }),
      PerformOrderPayment: (payment) => ({
        InternalOrderId: "M-1",
        PaymentAmount: "123.73",
        PaymentCurrencyCode: "USD",
        Message: `charged card ending ${(payment.PaymentDetails.CardNumber as string).slice(-4)}`,
      }),
    });
    const rows = await run(base, ["SendOrderToMerchant", "PerformOrderPayment"]);
    expect(rowProblems(rows[0] as (typeof rows)[number])).toEqual([]);
    const problems = rowProblems(rows[1] as (typeof rows)[number]);
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.every((problem) => problem.startsWith("as captured (wire-facts §6"))).toBe(
      true,
    );
    expect(problems.join("\n")).toContain("HTTP 500");
  });

  it('fails an endpoint that refuses a stray space in a currency (" EUR")', async () => {
    const base = await merchant({
      SendOrderToMerchant: (order) => {
        const currency = order.InternationalDetails?.TransactionCurrencyCode ?? "USD";
        if (!/^[A-Z]{3}$/.test(currency)) throw new Error(`bad currency ${currency}`);
        return { InternalOrderId: `M-${order.OrderId}` };
      },
    });
    const [row] = await run(base, ["SendOrderToMerchant"]);
    expect(row && rowProblems(row)).toEqual([expect.stringMatching(/^as captured .*HTTP 500/)]);
  });

  it("sends the captured payment only after the captured order passed: a payment refused for an unknown order is not blamed", async () => {
    const known = new Set<string>();
    const base = await merchant({
      SendOrderToMerchant: (order) => {
        if (order.InternationalDetails?.TransactionCurrencyCode !== "USD") {
          throw new CallbackError("CUR", "bad currency");
        }
        known.add(order.OrderId);
        return {
          InternalOrderId: `M-${order.OrderId}`,
          PaymentAmount: "1",
          PaymentCurrencyCode: "USD",
        };
      },
      PerformOrderPayment: (payment) => {
        if (!known.has(payment.OrderId)) {
          throw new CallbackError("UNKNOWN_ORDER", `No order ${payment.OrderId}`);
        }
        return {
          InternalOrderId: `M-${payment.OrderId}`,
          PaymentAmount: "1",
          PaymentCurrencyCode: "USD",
        };
      },
    });
    const rows = await run(base, ["SendOrderToMerchant", "PerformOrderPayment"]);
    expect(rowProblems(rows[0] as (typeof rows)[number])).toEqual([
      expect.stringMatching(/^as captured .*CUR/),
    ]);
    expect(rowProblems(rows[1] as (typeof rows)[number])).toEqual([]);
    // Nor when the captured order is not in the run, or its payload was given (not sent).
    const paid: string[] = [];
    const lenient = await merchant({
      PerformOrderPayment: (payment) => {
        paid.push(payment.OrderId);
        return { PaymentAmount: "1", PaymentCurrencyCode: "USD" };
      },
    });
    expect((await run(lenient, ["PerformOrderPayment"])).map(rowProblems)).toEqual([[]]);
    expect(paid.length).toBe(2);
    expect(paid).not.toContain(CAPTURED_ORDER_ID);
    const given = await simulate({
      url: base,
      callbacks: ["SendOrderToMerchant", "PerformOrderPayment"],
      privateKey: keys.privateKey,
      merchantGuid: MERCHANT_GUID,
      payloads: { SendOrderToMerchant: samplePayload("SendOrderToMerchant") },
    });
    expect(given.map(rowProblems)).toEqual([[], []]);
  });

  it("sends the captured cart as §6's GET: the token named cartToken, one of the two flags", async () => {
    const raw = await startRawMerchant();
    servers.push(raw);
    await run(raw.base, ["GetCheckoutCartInfo"]);
    const sent = raw.seen.filter((request) => request.url.includes("/GetCheckoutCartInfo"));
    expect(sent.length).toBe(2);
    const query = new URL(sent[1]?.url ?? "", "http://x").searchParams;
    expect(query.get("cartToken")).toBe(SAMPLE_CART_TOKEN);
    expect(query.has("merchantCartToken")).toBe(false);
    expect(query.get("countryCode")).toBe("GER");
    expect([query.has("IsStockValidation"), query.has("isFixedPriceSupported")]).toEqual([
      true,
      false,
    ]);
    expect(query.get("IsStockValidation")).toBe("1");
  });

  it("sends the captured cart by POST as §6's POST form (--cart-method POST)", async () => {
    const raw = await startRawMerchant();
    servers.push(raw);
    await simulate({
      url: raw.base,
      callbacks: ["GetCheckoutCartInfo"],
      privateKey: keys.privateKey,
      merchantGuid: MERCHANT_GUID,
      cartMethod: "POST",
    });
    const sent = raw.seen.filter((request) => request.url.includes("/GetCheckoutCartInfo"));
    expect(sent.map((request) => request.method)).toEqual(["POST", "POST"]);
    expect(JSON.parse(sent[1]?.body ?? "")).toEqual({
      merchantCartToken: SAMPLE_CART_TOKEN,
      countryCode: "GER",
      MerchantGUID: MERCHANT_GUID,
    });
  });

  it("fails a cart endpoint that reads only merchantCartToken, through the captured form", async () => {
    const raw = await startRawMerchant({
      GetCheckoutCartInfo: (res, request) => {
        const token = new URL(request.url, "http://x").searchParams.get("merchantCartToken");
        if (token === null) {
          res.writeHead(404, { "content-type": "application/json" });
          res.end(JSON.stringify({ Success: false, Message: "No cart" }));
        } else {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(JSON.stringify(cartFixture()));
        }
      },
    });
    servers.push(raw);
    const [row] = await run(raw.base, ["GetCheckoutCartInfo"]);
    expect(row && rowProblems(row)).toEqual([
      expect.stringMatching(/^as captured .*cartToken.*404/),
    ]);
  });

  it("sends the captured order's JSON with \\/ escapes, as PHP writes it", async () => {
    const raw = await startRawMerchant();
    servers.push(raw);
    await run(raw.base, ["SendOrderToMerchant"]);
    const sent = raw.seen.filter((request) => request.url.endsWith("/SendOrderToMerchant"));
    // The sample, its redelivery, a new order twice at once, its update, then the captured form.
    expect(sent.length).toBe(6);
    expect(sent[5]?.body).toContain('"N\\/A"');
    expect(sent[0]?.body).not.toContain("\\/");
    expect(sent[4]?.body).not.toContain("\\/");
  });

  it("has a captured form of UpdateOrderStatus as the service sends it (review fidelity-3): CANCELLED, MerchantOrderId null", () => {
    const status = capturedPayload("UpdateOrderStatus");
    expect(status.StatusCode).toBe("CANCELLED");
    expect(status.MerchantOrderId).toBeNull();
    expect(status.OrderId).toBe(CAPTURED_ORDER_ID);
    expect(JSON.stringify(status)).toContain("/");
  });

  it("fails a status endpoint that knows only the sample's casing: the service's CANCELLED is sent after it, with \\/ escapes (review fidelity-3)", async () => {
    const ACTIONS: Record<string, () => void> = { canceled: () => {}, "n/a": () => {} };
    const base = await merchant({
      UpdateOrderStatus: (update) => {
        const act = ACTIONS[update.StatusCode ?? ""];
        if (!act) throw new Error(`unknown status ${update.StatusCode}`);
        act();
      },
    });
    const [row] = await run(base, ["UpdateOrderStatus"]);
    expect(row && rowProblems(row)).toEqual([
      expect.stringMatching(/^as captured \(wire-facts §6: .*CANCELLED.*HTTP 500/),
    ]);
    // A merchant comparing statuses as isOrderStatus does passes, as it does for the sample.
    const good = await merchant({ UpdateOrderStatus: () => {} });
    expect((await run(good, ["UpdateOrderStatus"])).map(rowProblems)).toEqual([[]]);
    const raw = await startRawMerchant();
    servers.push(raw);
    await run(raw.base, ["UpdateOrderStatus"]);
    const sent = raw.seen.filter((request) => request.url.endsWith("/UpdateOrderStatus"));
    // The sample, its redelivery, then the captured form.
    expect(sent.length).toBe(3);
    expect(JSON.parse(sent[2]?.body ?? "")).toMatchObject({
      StatusCode: "CANCELLED",
      MerchantOrderId: null,
    });
    expect(sent[2]?.body).toContain("\\/");
  });

  it.each(CAPTURED_CALLBACKS)(
    "the library's own handlers answer %s's captured form 2xx, with no problem",
    async (callback) => {
      const good = await startMerchant(keys.publicKey);
      servers.push(good);
      const result = await sendCallback(good.base, callback, {
        privateKey: keys.privateKey,
        merchantGuid: MERCHANT_GUID,
        payload: capturedPayload(callback),
        escapeSlashes: true,
      });
      expect(result.status).toBeGreaterThanOrEqual(200);
      expect(result.status).toBeLessThan(300);
      expect(result.problems).toEqual([]);
    },
  );
});

describe("the tokens of a run (review fidelity-9)", () => {
  it("signs every call with its own token: a replay guard refusing a token seen before passes the redelivery", async () => {
    const auth = createAuth({
      jwt: { environment: "test", keys: { test: keys.publicKey } },
      merchantGuid: MERCHANT_GUID,
    });
    const router = createCallbackRouter({
      basePath: "/cb",
      auth,
      handlers: { UpdateOrderStatus: () => {} },
      onError: () => {},
    });
    const seen = new Set<string>();
    const server = await listen((req, res) => {
      const token = req.headers.authorization ?? "";
      if (seen.has(token)) {
        res.writeHead(401, { "content-type": "application/json" });
        res.end("{}");
        return;
      }
      seen.add(token);
      toNodeListener(router)(req, res);
    });
    servers.push(server);
    const rows = await run(`${server.origin}/cb`, ["UpdateOrderStatus"]);
    expect(rows.map(rowProblems)).toEqual([[]]);
  });
});

describe("the token's form (review fidelity-8)", () => {
  /** A library router behind a guard that lets through only `Authorization: Bearer …`. */
  async function bearerOnly() {
    const auth = createAuth({
      jwt: { environment: "test", keys: { test: keys.publicKey } },
      merchantGuid: MERCHANT_GUID,
    });
    const router = createCallbackRouter({
      basePath: "/cb",
      auth,
      handlers: { UpdateOrderShippingInfo: () => {}, UpdateOrderStatus: () => {} },
      onError: () => {},
    });
    const forms: string[] = [];
    const server = await listen((req, res) => {
      const header = req.headers.authorization ?? "";
      forms.push(header.startsWith("Bearer ") ? "Bearer" : header === "" ? "none" : "bare");
      if (!header.startsWith("Bearer ")) {
        res.writeHead(401, { "content-type": "application/json" });
        res.end("{}");
        return;
      }
      toNodeListener(router)(req, res);
    });
    servers.push(server);
    return { base: `${server.origin}/cb`, forms };
  }

  it("sends the bare token (no Bearer, wire-facts §5/§6) once per run, and names that form on a 401", async () => {
    const { base, forms } = await bearerOnly();
    const rows = await run(base, ["UpdateOrderShippingInfo", "UpdateOrderStatus"]);
    expect(forms.filter((form) => form === "bare")).toHaveLength(1);
    const problems = rows.map(rowProblems);
    expect(problems[0]).toEqual([]);
    expect(problems[1]).toEqual([
      expect.stringMatching(
        /without "Bearer ".*HTTP 401.*in front of the library.*requires "Bearer "/s,
      ),
    ]);
    // Not the redelivery's advice: the payload was fine, the header's form was refused.
    expect(problems[1]?.[0]).not.toMatch(/apply a status once per OrderId/);
  });

  it("passes a merchant that accepts both forms (the library's own check)", async () => {
    const base = await merchant({ UpdateOrderStatus: () => {} });
    const rows = await run(base, ["UpdateOrderStatus"]);
    expect(rows.map(rowProblems)).toEqual([[]]);
  });

  it("keeps an Authorization header given with --header as it is", async () => {
    const { base, forms } = await bearerOnly();
    const rows = await simulate({
      url: base,
      callbacks: ["UpdateOrderStatus"],
      merchantGuid: MERCHANT_GUID,
      headers: { authorization: `Bearer ${await signServiceToken(keys.privateKey)}` },
    });
    expect(forms).not.toContain("bare");
    expect(rows.map(rowProblems)).toEqual([[]]);
  });
});
