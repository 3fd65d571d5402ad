// Test servers on 127.0.0.1 (port 0): a correct merchant built from the library, and raw ones.
import { readFileSync } from "node:fs";
import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { toNodeListener } from "../../src/adapters/node.js";
import { createAuth } from "../../src/auth/index.js";
import { type CallbackName, type CheckoutCartInfo, createCallbackRouter } from "../../src/index.js";
import { SAMPLE_ORDER_ID } from "../../src/testing/samples.js";

export interface RunningServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  readonly port: number;
  close(): Promise<void>;
}

export async function listen(listener: RequestListener): Promise<RunningServer> {
  const server = createServer(listener);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = await listen((_req, res) => res.end());
  await server.close();
  return server.port;
}

export function cartFixture(): CheckoutCartInfo {
  const url = new URL("../fixtures/GetCheckoutCartInfo.json", import.meta.url);
  return JSON.parse(readFileSync(url, "utf8")) as CheckoutCartInfo;
}

export const MERCHANT_GUID = "6a1f0c2e-93b4-4d7a-b2c1-8e5f4d3c2b1a";

export interface ReceivedCall {
  readonly callback: CallbackName;
  readonly payload: unknown;
  readonly raw: unknown;
  readonly auth: readonly string[] | undefined;
}

/** A merchant built with the library as its documentation says: JWT (test key) + merchant GUID. */
export async function startMerchant(
  publicKey: string,
  options: { bodyDigestClaim?: string; issuer?: string } = {},
): Promise<RunningServer & { readonly base: string; readonly calls: ReceivedCall[] }> {
  const calls: ReceivedCall[] = [];
  const auth = createAuth({
    jwt: {
      environment: "test",
      keys: { test: publicKey },
      ...(options.issuer ? { issuer: options.issuer } : {}),
      ...(options.bodyDigestClaim ? { bodyDigest: { claim: options.bodyDigestClaim } } : {}),
    },
    merchantGuid: MERCHANT_GUID,
  });
  function record(callback: CallbackName) {
    return (
      payload: unknown,
      context: { rawPayload: unknown; auth?: { methods: readonly string[] } | undefined },
    ) => {
      calls.push({ callback, payload, raw: context.rawPayload, auth: context.auth?.methods });
    };
  }
  const router = createCallbackRouter({
    basePath: "/crossborder",
    auth,
    onError: () => {},
    handlers: {
      GetCheckoutCartInfo: (payload, context) => {
        record("GetCheckoutCartInfo")(payload, context);
        return cartFixture();
      },
      SendOrderToMerchant: (payload, context) => {
        record("SendOrderToMerchant")(payload, context);
        // One merchant order per service order (review cli-1: one id for two orders merges them).
        const own = payload.OrderId === SAMPLE_ORDER_ID ? "100004217" : `M-${payload.OrderId}`;
        const ids = { InternalOrderId: own, OrderId: own, StatusCode: "pending" };
        // An order with PaymentDetails is paid on the spot: the answer says what was charged (001 §4.2).
        return payload.PaymentDetails
          ? { ...ids, PaymentAmount: "123.73", PaymentCurrencyCode: "USD" }
          : ids;
      },
      UpdateOrderStatus: record("UpdateOrderStatus"),
      PerformOrderPayment: (payload, context) => {
        record("PerformOrderPayment")(payload, context);
        return { PaymentAmount: "123.73", PaymentCurrencyCode: "USD" };
      },
      SendRMAInfoToMerchant: record("SendRMAInfoToMerchant"),
      UpdateParcelDispatch: record("UpdateParcelDispatch"),
      RemoveRestrictedProducts: record("RemoveRestrictedProducts"),
      SendAdditionalRequiredDocumentsToMerchant: record(
        "SendAdditionalRequiredDocumentsToMerchant",
      ),
      ValidateGiftCard: (payload, context) => {
        record("ValidateGiftCard")(payload, context);
        return { IsValid: true, Balance: "75.00", CurrencyCode: "USD" };
      },
      RedeemGiftCard: (payload, context) => {
        record("RedeemGiftCard")(payload, context);
        return { Balance: "50.00", CurrencyCode: "USD" };
      },
      RefundGiftCard: record("RefundGiftCard"),
      ValidateVoucher: (payload, context) => {
        record("ValidateVoucher")(payload, context);
        return { IsValid: true };
      },
      NotifyOrderRefund: record("NotifyOrderRefund"),
      UpdateOrderShippingInfo: record("UpdateOrderShippingInfo"),
    },
  });
  const server = await listen(toNodeListener(router));
  return { ...server, base: `${server.origin}/crossborder`, calls };
}

export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage["headers"];
  readonly body: string;
}

export type Answer = (res: ServerResponse, request: SeenRequest) => void | Promise<void>;

export function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8" });
  res.end(JSON.stringify(body));
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A raw server answering `/crossborder/<CallbackName>` with the given answer (default: a correct
 * one), recording every request it sees.
 */
export async function startRawMerchant(
  answers: Partial<Record<CallbackName, Answer>> = {},
): Promise<RunningServer & { readonly base: string; readonly seen: SeenRequest[] }> {
  const seen: SeenRequest[] = [];
  const server = await listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const request: SeenRequest = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      seen.push(request);
      const name = new URL(request.url, "http://x").pathname.split("/").pop() as CallbackName;
      const answer = answers[name] ?? correctAnswer(name);
      void Promise.resolve(answer(res, request)).catch(() => res.destroy());
    });
  });
  return { ...server, base: `${server.origin}/crossborder`, seen };
}

/**
 * The merchant order of the order in a JSON body, one per `OrderId` (review cli-1: one id for two
 * orders merges them): `M-1` for the sample's, `M-<OrderId>` for another.
 */
export function ownOrderId(body: string): string {
  const orderId = orderIdOf(body);
  return orderId === undefined || orderId === SAMPLE_ORDER_ID ? "M-1" : `M-${orderId}`;
}

/** The `OrderId` of a JSON body, when it has one. */
function orderIdOf(body: string): string | undefined {
  try {
    const id = (JSON.parse(body) as { OrderId?: unknown }).OrderId;
    return typeof id === "string" ? id : undefined;
  } catch {
    return undefined;
  }
}

function correctAnswer(name: CallbackName): Answer {
  return (res, request) => {
    if (name === "GetCheckoutCartInfo") json(res, 200, cartFixture());
    else if (name === "ValidateGiftCard" || name === "ValidateVoucher") {
      json(res, 200, { Success: true, IsValid: true, Balance: "25.00", CurrencyCode: "USD" });
    } else if (name === "RemoveRestrictedProducts") json(res, 200, { IsSuccess: true });
    else if (name === "SendRMAInfoToMerchant") json(res, 200, { Success: "True" });
    else if (name === "SendOrderToMerchant") {
      json(res, 200, { Success: true, InternalOrderId: ownOrderId(request.body) });
    } else if (name === "PerformOrderPayment") {
      // What the sample order states (review cli-2 warns about another amount).
      json(res, 200, { Success: true, PaymentAmount: "123.73", PaymentCurrencyCode: "USD" });
    } else json(res, 200, { Success: true });
  };
}

/**
 * Every wrong answer the simulator must flag, one per callback (SendAdditionalRequiredDocuments
 * ToMerchant answers correctly: the tests need one well-formed answer from this merchant).
 */
export const WRONG_ANSWERS: Partial<Record<CallbackName, Answer>> = {
  SendOrderToMerchant: (res) => json(res, 200, { Success: "yes", InternalOrderId: "1" }),
  UpdateOrderStatus: (res) => json(res, 200, { Message: "status updated" }),
  SendRMAInfoToMerchant: (res) => json(res, 200, { Success: "False", Message: "Unknown RMA" }),
  RemoveRestrictedProducts: (res) => json(res, 200, { Success: true }),
  PerformOrderPayment: (res) => json(res, 500, { Success: false, Message: "card declined" }),
  UpdateParcelDispatch: (res) => {
    res.writeHead(502, { "content-type": "text/html" });
    res.end(
      "<html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1></body></html>",
    );
  },
  GetCheckoutCartInfo: async (res) => {
    await delay(400);
    json(res, 200, cartFixture());
  },
  ValidateGiftCard: (res) => json(res, 200, { Success: true, Balance: 25 }),
  ValidateVoucher: (res) => json(res, 200, { Success: true, IsValid: "true" }),
  RedeemGiftCard: (res) => json(res, 200, { Success: true, Balance: 50.5 }),
  RefundGiftCard: (res) => json(res, 404, { Success: false, Message: "Not found" }),
  NotifyOrderRefund: (res) => json(res, 200, { IsSuccess: true }),
  UpdateOrderShippingInfo: (res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end();
  },
};
