// Review DEPLOY-3: the README's advice for a body parser that must come first gave it a limit
// (`express.json({ limit: "2mb" })`, `express.raw({ type: "*/*" })` at body-parser's 100 kB) under
// the library's own (1 MiB, 16 MiB for the two callbacks that carry documents): following it, the
// parser answered valid calls with its own HTML 413. The advice is read from the README here, and
// applied to real Express and Koa apps.
import { readFileSync } from "node:fs";
import { bodyParser } from "@koa/bodyparser";
import express from "express";
import Koa from "koa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toExpress } from "../../src/adapters/express.js";
import { toKoa } from "../../src/adapters/koa.js";
import { DEFAULT_DOCUMENT_MAX_BODY_BYTES } from "../../src/core/engine.js";
import { type CallbackRouter, createCallbackRouter } from "../../src/index.js";
import { samplePayload } from "../../src/testing/index.js";
import { listen, type Running } from "./support/servers.js";

const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
const section = readme.slice(
  readme.indexOf("### Body parsers: mount the callbacks first"),
  readme.indexOf("### Express (4 and 5)"),
);

/** The argument of the first `call(…)` in the section, as the README writes it. */
function advised(call: string): Record<string, string> {
  const at = section.indexOf(`${call}({`);
  expect(at, `README "Body parsers" gives ${call}(…)`).toBeGreaterThan(-1);
  const text = section.slice(at + call.length + 1, section.indexOf("})", at) + 1);
  return Object.fromEntries(
    [...text.matchAll(/(\w+): "([^"]*)"/g)].map((m) => [m[1] as string, m[2] as string]),
  );
}

/** body-parser's and co-body's size text (`bytes`: 1 mb = 1024 kb). */
function bytesOf(limit: string | undefined): number {
  const match = /^(\d+)(kb|mb)$/i.exec(limit ?? "");
  expect(match, `a limit such as "17mb": ${limit}`).not.toBeNull();
  const [, n, unit] = match as RegExpExecArray;
  return Number(n) * 1024 ** ((unit as string).toLowerCase() === "mb" ? 2 : 1);
}

const json = () => advised("express.json");
const raw = () => advised("express.raw");
const koa = () => advised("bodyParser");

let router: CallbackRouter;
const running: Running[] = [];
beforeAll(() => {
  router = createCallbackRouter({
    basePath: "/crossborder",
    auth: false,
    handlers: {
      SendOrderToMerchant: (order) => ({ InternalOrderId: `M-${order.OrderId}` }),
      SendAdditionalRequiredDocumentsToMerchant: () => ({}),
    },
  });
});
afterAll(async () => {
  await Promise.all(running.map((r) => r.close()));
});

/** A 1.8 MB PDF as DocumentData: 2.4 MB of JSON, under the documents' 16 MiB. */
function documents(): string {
  const payload = samplePayload("SendAdditionalRequiredDocumentsToMerchant") as {
    Documents: { DocumentData: string }[];
  };
  (payload.Documents[0] as { DocumentData: string }).DocumentData = Buffer.alloc(
    1_800_000,
    7,
  ).toString("base64");
  return JSON.stringify(payload);
}

/** An order of 400 lines: about 150 kB, under the 1 MiB of an order. */
function largeOrder(): string {
  const order = samplePayload("SendOrderToMerchant") as unknown as {
    Products: Record<string, unknown>[];
  };
  const line = order.Products[0] as Record<string, unknown>;
  order.Products = Array.from({ length: 400 }, (_, i) => ({ ...line, CartItemId: String(i) }));
  const text = JSON.stringify(order);
  expect(text.length).toBeGreaterThan(100_000);
  return text;
}

async function post(server: Running, name: string, body: string) {
  const response = await server.send(`/crossborder/${name}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  return `${response.status} ${response.headers.get("content-type")}`;
}

const OK = "200 application/json; charset=utf-8";

describe("README: a body parser placed first, with the limits it advises", () => {
  it("advises limits above the library's largest (16 MiB, the documents callbacks)", () => {
    expect(raw().type).toBe("*/*");
    const { jsonLimit, formLimit, textLimit } = koa();
    for (const limit of [json().limit, raw().limit, jsonLimit, formLimit, textLimit]) {
      expect(bytesOf(limit)).toBeGreaterThan(DEFAULT_DOCUMENT_MAX_BODY_BYTES);
    }
  });

  it("express.json as advised keeps a 2.4 MB documents call", async () => {
    const app = express().use(express.json(json())).use(toExpress(router));
    const server = await listen(app);
    running.push(server);
    expect(await post(server, "SendAdditionalRequiredDocumentsToMerchant", documents())).toBe(OK);
  });

  it("express.raw as advised keeps a 150 kB order and a 2.4 MB documents call", async () => {
    const app = express().use(express.raw(raw())).use(toExpress(router));
    const server = await listen(app);
    running.push(server);
    expect(await post(server, "SendOrderToMerchant", largeOrder())).toBe(OK);
    expect(await post(server, "SendAdditionalRequiredDocumentsToMerchant", documents())).toBe(OK);
  });

  it("@koa/bodyparser as advised keeps a 2.4 MB documents call", async () => {
    const app = new Koa().use(bodyParser(koa())).use(toKoa(router));
    const server = await listen(app.callback());
    running.push(server);
    expect(await post(server, "SendAdditionalRequiredDocumentsToMerchant", documents())).toBe(OK);
  });
});
