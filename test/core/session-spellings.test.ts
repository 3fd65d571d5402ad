// Review privacy-1: the shopper's session values (AuthToken, SessionId) and a gift card's PIN were
// masked only when quoted as sent. A session store's error quotes a base64 token URL-encoded (a URL
// path or query), form-encoded or JSON-escaped (`\/`): each reached onError, the default line and
// the answer in clear. They are masked in the spellings the cart token's check masks
// (`secretSpellings`, one expansion for both).
import { readFileSync } from "node:fs";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import {
  CallbackError,
  type CallbackFailure,
  createValidateGiftCardHandler,
} from "../../src/index.js";

const fixture = JSON.parse(
  readFileSync(new URL("../fixtures/ValidateGiftCard.json", import.meta.url), "utf8"),
);
/** A base64 bearer token, as an AuthToken usually is (`+`, `/`, `=`). */
const TOKEN = "q7Zr+Kx/9mWb3Ty1Lp8N==";
const SESSION = "Wq3v id/7Q+x==";
/** With `~` and `!`, which a form encoder (URLSearchParams, PHP urlencode) escapes and encodeURIComponent does not. */
const PIN = "Zpq8+4/9 8~1!*(=";
/** The start of each secret, before any character an encoding changes: any spelling quotes it. */
const HEADS = ["q7Zr", "Wq3v", "Zpq8"];

const spellings: [string, (secret: string) => string][] = [
  ["URL-encoded", (t) => `GET https://sessions.internal/s/${encodeURIComponent(t)} failed: 503`],
  ["form-encoded", (t) => `lookup failed for token=${encodeURIComponent(t).replace(/%20/g, "+")}`],
  [
    "JSON-escaped with \\/",
    (t) => `upstream said {"token":${JSON.stringify(t).replace(/\//g, "\\/")}}`,
  ],
  ["JSON-escaped", (t) => `upstream said {"token":${JSON.stringify(t)}}`],
  // Review second-adapt-2: lower-case hex (the service itself writes it so, wire-facts §4) and a
  // form encoder's escapes of ! ' ( ) ~.
  [
    "URL-encoded in lower-case hex",
    (t) =>
      `GET https://sessions.internal/s/${encodeURIComponent(t).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase())} failed: 503`,
  ],
  ["form-encoded by URLSearchParams", (t) => `lookup failed for ${new URLSearchParams({ t })}`],
  // Review final4-1/2: .NET's HttpUtility.UrlEncode (keeps ! * ( ), escapes ' and ~ in lower-case
  // hex), and a JSON body written by .NET's System.Text.Json (+ as \u002B) or Gson (= as \u003d).
  [
    "URL-encoded by .NET's HttpUtility.UrlEncode",
    (t) =>
      `GET /s?t=${encodeURIComponent(t)
        .replace(/%20/g, "+")
        .replace(/'/g, "%27")
        .replace(/~/g, "%7e")
        .replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase())} failed`,
  ],
  [
    "JSON-escaped by System.Text.Json",
    (t) => `upstream said {"token":${JSON.stringify(t).replace(/\+/g, "\\u002B")}}`,
  ],
  [
    "JSON-escaped by Gson",
    (t) => `upstream said {"token":${JSON.stringify(t).replace(/=/g, "\\u003d")}}`,
  ],
  [
    "form-encoded by URLSearchParams, lower-case hex",
    (t) =>
      `lookup failed for ${String(new URLSearchParams({ t })).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase())}`,
  ],
];

let printed: string[];
let spy: ReturnType<typeof vi.spyOn>;
beforeEach(() => {
  printed = [];
  spy = vi
    .spyOn(console, "error")
    .mockImplementation((...args) => void printed.push(args.join(" ")));
});
afterEach(() => spy.mockRestore());

function body() {
  return JSON.stringify({
    ...fixture,
    AuthToken: TOKEN,
    SessionId: SESSION,
    CardFields: { ...fixture.CardFields, Pin: PIN },
  });
}

function request() {
  return {
    method: "POST",
    url: "/cb/ValidateGiftCard",
    headers: { "content-type": "application/json" },
    body: body(),
  };
}

it.each(spellings)(
  "privacy-1: a verifySession error quoting the session values %s is masked in onError and on the default line",
  async (_name, quote) => {
    const reports: CallbackFailure[] = [];
    for (const onError of [(f: CallbackFailure) => void reports.push(f), undefined]) {
      const handler = createValidateGiftCardHandler(() => ({ IsValid: true, Balance: "1.00" }), {
        auth: false,
        ...(onError === undefined ? {} : { onError }),
        verifySession: () => {
          throw new Error(`${quote(TOKEN)} ${quote(SESSION)}`);
        },
      });
      const response = await handler.handle(request());
      expect(response.status).toBe(500);
    }
    const text = [
      ...reports.map(
        (r) =>
          `${r.reason} ${(r.error as Error | undefined)?.message} ${(r.error as Error | undefined)?.stack}`,
      ),
      JSON.stringify(reports),
      ...printed,
    ].join("\n");
    expect(reports).toHaveLength(1);
    expect(printed.length).toBeGreaterThan(0);
    for (const head of HEADS.slice(0, 2)) expect(text).not.toContain(head);
    expect(text).toContain("***");
  },
);

it.each(spellings)(
  "privacy-1: a CallbackError and an Error of the function quoting the session and the PIN %s are masked in the answer and the report",
  async (_name, quote) => {
    for (const thrown of [
      () =>
        new CallbackError(
          "SESSION",
          `no session ${quote(TOKEN)}`,
          `pin ${quote(PIN)} ${quote(SESSION)}`,
        ),
      () => new Error(`card store: ${quote(PIN)} ${quote(TOKEN)} ${quote(SESSION)}`),
    ]) {
      const reports: CallbackFailure[] = [];
      const handler = createValidateGiftCardHandler(
        () => {
          throw thrown();
        },
        { auth: false, onError: (f) => void reports.push(f) },
      );
      const response = await handler.handle(request());
      const text = [
        String(response.body),
        ...reports.map(
          (r) =>
            `${r.reason} ${(r.error as Error | undefined)?.message} ${(r.error as Error | undefined)?.stack}`,
        ),
        JSON.stringify(reports),
      ].join("\n");
      expect(reports.length).toBeGreaterThan(0);
      for (const head of HEADS) expect(text).not.toContain(head);
    }
  },
);

it("review last4-1: a long secret gets the few spellings of its own text only (100 fields of 9,000 characters stayed under a second)", async () => {
  const { secretSpellings } = await import("../../src/core/redact.js");
  const long = `${"a~b!c(d)e'f*g+h/i=j k".repeat(500)}`;
  expect(secretSpellings([long]).length).toBeLessThanOrEqual(5);
  expect(secretSpellings(["q7Zr+Kx/9mWb3Ty1~!"]).length).toBeGreaterThan(5);
});
