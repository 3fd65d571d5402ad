// Review i18n-2 (MEDIUM) and i18n-3 (LOW): lone surrogates (a merchant's text cut inside an
// emoji, `name.slice(0, 50)`) in what the service client sends.
// - i18n-2: a JSON body was written by plain `JSON.stringify`, a lone surrogate as the escape
//   `\ud83d`, which strict readers (.NET's System.Text.Json) refuse: one cut product name could
//   fail a whole catalogue batch. Each is now sent as U+FFFD, as the callback answers already are.
// - i18n-3: a path parameter holding one threw a raw `URIError` from `encodeURIComponent`; a query
//   parameter was turned into U+FFFD by URLSearchParams (another id was asked for). Both are now
//   refused as INVALID_REQUEST naming the parameter, before anything is sent.
// A real node:http server receives the bytes the client writes.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createServiceClient, ServiceValidationError } from "../../src/service/index.js";

interface Received {
  readonly method: string;
  readonly url: string;
  readonly body: Buffer;
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers
      .splice(0)
      .map((server) => new Promise<void>((resolve) => server.close(() => resolve()))),
  );
});

/** A server that keeps the bytes of each request and answers `answer` as JSON. */
async function bytesServer(answer: unknown): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer(async (request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    received.push({
      method: request.method ?? "",
      url: request.url ?? "",
      body: Buffer.concat(chunks),
    });
    response.writeHead(200, { "content-type": "application/json; charset=utf-8" });
    response.end(JSON.stringify(answer));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, received };
}

function client(url: string) {
  return createServiceClient({
    baseUrl: url,
    merchantGuid: "0b5f2c9e-1d2a-4c3b-9e8f-7a6b5c4d3e2f",
    retries: { maxAttempts: 1 },
  });
}

/** Whether a UTF-8 text, read as JSON text, holds an escape of a lone surrogate. */
function hasLoneSurrogateEscape(text: string): boolean {
  return /(?<!\\)(?:\\\\)*\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])/.test(text);
}

describe("i18n-2: a JSON body is sent well-formed", () => {
  it("a lone surrogate in a product name is sent as U+FFFD; pairs, other text and escapes as they are", async () => {
    const { url, received } = await bytesServer({ ProductCountry: [] });
    const family = "מוצר עברי 👨‍👩‍👧";
    const cut = "😀x".slice(0, 1); // the high half of an emoji
    await client(url).saveProductsList({
      products: [
        {
          Sku: "SKU-Ü-1",
          ProductName: `${cut}x`,
          Description: `end ${"\udc00"}`,
          GiftMessage: family,
          Note: "a backslash then ud800: \\ud800",
          Price: 9.5,
          Quantity: 1,
        } as never,
      ],
    });
    expect(received).toHaveLength(1);
    const bytes = received[0]?.body as Buffer;
    const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    expect(hasLoneSurrogateEscape(text)).toBe(false);
    const [product] = JSON.parse(text) as Record<string, string>[];
    expect(product?.ProductName).toBe("\ufffdx");
    expect(product?.Description).toBe("end \ufffd");
    expect(product?.GiftMessage).toBe(family);
    expect(product?.Sku).toBe("SKU-Ü-1");
    // Text that only looks like an escape is the merchant's and is kept.
    expect(product?.Note).toBe("a backslash then ud800: \\ud800");
  });

  it("a well-formed body is sent byte for byte as JSON.stringify writes it", async () => {
    const { url, received } = await bytesServer({ ProductCountry: [] });
    const products = [{ Sku: "SKU-東京-😀", ProductName: "Заказ", Price: 1, Quantity: 2 }];
    await client(url).saveProductsList({ products: products as never });
    expect(received[0]?.body.toString("utf8")).toBe(JSON.stringify(products));
  });
});

describe("i18n-3: a path or query parameter holding a lone surrogate is refused before sending", () => {
  it("getOrderRefunds({ orderId }) with a lone surrogate: INVALID_REQUEST naming orderId, no URIError", async () => {
    const { url, received } = await bytesServer({});
    const error = await client(url)
      .getOrderRefunds({ orderId: "GE-\ud800" })
      .then(
        () => undefined,
        (caught: unknown) => caught,
      );
    expect(error).toBeInstanceOf(ServiceValidationError);
    const refused = error as ServiceValidationError;
    expect(refused.code).toBe("INVALID_REQUEST");
    expect(refused.issues).toEqual([
      { path: "orderId", message: expect.stringContaining("lone surrogate") },
    ]);
    expect(received).toHaveLength(0);
  });

  it("updateParcelStatus: each path parameter is named", async () => {
    const { url, received } = await bytesServer({ Success: true });
    for (const [field, input] of [
      ["orderId", { orderId: "GE-1\udfff", parcelCode: "P1" }],
      ["parcelCode", { orderId: "GE-1", parcelCode: "P\ud83d" }],
    ] as const) {
      const error = await client(url)
        .updateParcelStatus({ ...input, merchantParcelStatusCode: "Delivered" })
        .then(
          () => undefined,
          (caught: unknown) => caught,
        );
      expect(error).toBeInstanceOf(ServiceValidationError);
      expect((error as ServiceValidationError).code).toBe("INVALID_REQUEST");
      expect((error as ServiceValidationError).issues.map((issue) => issue.path)).toEqual([field]);
    }
    expect(received).toHaveLength(0);
  });

  it("saveProductsList with a query parameter holding one: refused, not sent as U+FFFD", async () => {
    const { url, received } = await bytesServer({ ProductCountry: [] });
    const error = await client(url)
      .saveProductsList({
        products: [{ Sku: "S1", Price: 1, Quantity: 1 } as never],
        cultureCode: "ar-\udc01",
      })
      .then(
        () => undefined,
        (caught: unknown) => caught,
      );
    expect(error).toBeInstanceOf(ServiceValidationError);
    expect((error as ServiceValidationError).code).toBe("INVALID_REQUEST");
    expect((error as ServiceValidationError).issues.map((issue) => issue.path)).toEqual([
      "cultureCode",
    ]);
    expect(received).toHaveLength(0);
  });

  it("non-ASCII ids and emoji pairs are still sent, percent-encoded", async () => {
    const { url, received } = await bytesServer({});
    await client(url)
      .getOrderRefunds({ orderId: "Заказ-😀" })
      .catch(() => undefined);
    expect(received[0]?.url).toBe(`/v1/orders/${encodeURIComponent("Заказ-😀")}/refunds`);
  });
});
