// urlSecret values that no URL carries as written (whitespace, control characters: a trailing
// newline read from a file, say) are refused at start-up, naming the option, instead of failing
// every callback. A value holding "+", "%", "&" or "#" is accepted (review migrate-5): it matches
// the URL's query parameter as decoded (the URL registered with the secret percent-encoded) or as
// written (a literal "+" or "%", which a decoder would change).
import { describe, expect, it } from "vitest";
import { type AuthConfig, createAuth, createGetCheckoutCartInfoHandler } from "../../src/index.js";
import { collector } from "../core/helpers.js";

async function refused(config: AuthConfig, path: RegExp): Promise<void> {
  const attempt = createAuth(config);
  await expect(attempt).rejects.toBeInstanceOf(TypeError);
  await expect(attempt).rejects.toThrow(path);
}

/** The status of a cart call whose query carries `key=<written>` (as written, not encoded). */
async function statusWith(value: AuthConfig["urlSecret"], written: string): Promise<number> {
  const auth = await createAuth({ urlSecret: value });
  const handler = createGetCheckoutCartInfoHandler(() => ({ productsList: [] }), {
    auth,
    onError: () => undefined,
  });
  const response = await handler.handle({
    method: "GET",
    url: `/cart?merchantCartToken=t&key=${written}`,
    headers: {},
  });
  return response.status;
}

describe("urlSecret values the query parser changes", () => {
  const unusable = ["a b", " ab", "ab\t", "a\nb", "a\u0000b", "a\u007fb"];

  it("refuses them at createAuth, naming the option path", async () => {
    for (const value of unusable) {
      await refused(
        { urlSecret: { parameter: "key", value } },
        /createAuth: urlSecret\.value cannot contain whitespace or control characters/,
      );
      await refused(
        {
          urlSecret: { parameter: "key", value: "fine" },
          callbacks: { UpdateOrderStatus: { urlSecret: { parameter: "key", value } } },
        },
        /createAuth: callbacks\.UpdateOrderStatus\.urlSecret\.value cannot contain/,
      );
    }
  });

  it("accepts URL-safe secrets, which match as written in the callback URL", async () => {
    for (const value of ["Zm9v-YmFy_cQ", "a.b~c", "Zm9vYmFy/cQ==", "päss/word:1;x?y", "k3y"]) {
      const auth = await createAuth({ urlSecret: { parameter: "key", value } });
      const { failures, onError } = collector();
      const handler = createGetCheckoutCartInfoHandler(() => ({ productsList: [] }), {
        auth,
        onError,
      });
      const call = (secret: string) =>
        handler.handle({
          method: "GET",
          url: `/cart?merchantCartToken=t&key=${secret}`,
          headers: {},
        });
      const written = await call(value);
      expect(written.status, `${value}: ${failures.map((f) => f.reason).join()}`).toBe(200);
      expect((await call(encodeURIComponent(value))).status, value).toBe(200);
      expect((await call(`${value}x`)).status, value).toBe(401);
    }
  });
});

describe('migrate-5: urlSecret values holding "+", "%", "&" or "#"', () => {
  it("are accepted, and match the URL percent-encoded or, for + and %, written as they are", async () => {
    const cases: [string, string[], string[]][] = [
      // [secret, URLs' query values that match, that do not]
      [
        "Zm9v+YmFy/c2VjcmV0",
        ["Zm9v%2BYmFy%2Fc2VjcmV0", "Zm9v+YmFy/c2VjcmV0", "Zm9v%2bYmFy/c2VjcmV0"],
        ["Zm9v%20YmFy/c2VjcmV0", "Zm9vYmFy/c2VjcmV0", "Zm9v+YmFy/c2VjcmV0x"],
      ],
      ["100%", ["100%25", "100%"], ["100", "100%2"]],
      ["a%2Bb", ["a%252Bb", "a%2Bb"], ["a+b", "a%2bb", "a%2B"]],
      ["a&b", ["a%26b"], ["a&b", "a"]],
      ["a#b", ["a%23b"], ["a#b", "a"]],
    ];
    for (const [secret, good, bad] of cases) {
      for (const written of good) {
        expect(await statusWith({ parameter: "key", value: secret }, written), written).toBe(200);
      }
      for (const written of bad) {
        expect(await statusWith({ parameter: "key", value: secret }, written), written).toBe(401);
      }
    }
  });

  it("a repeated parameter is still refused, whichever of its values matches", async () => {
    expect(await statusWith({ parameter: "key", value: "a+b" }, "a+b&key=a+b")).toBe(401);
    expect(await statusWith({ parameter: "key", value: "a+b" }, "a%2Bb&key=x")).toBe(401);
  });

  it("a list of values (rotation): any of them matches", async () => {
    const rotating = { parameter: "key", value: ["old+secret", "new-secret"] } as const;
    expect(await statusWith(rotating, "old%2Bsecret")).toBe(200);
    expect(await statusWith(rotating, "old+secret")).toBe(200);
    expect(await statusWith(rotating, "new-secret")).toBe(200);
    expect(await statusWith(rotating, "other")).toBe(401);
    await refused({ urlSecret: { parameter: "key", value: [] } }, /urlSecret\.value/);
    await refused(
      { urlSecret: { parameter: "key", value: ["ok", "a\nb"] } },
      /urlSecret\.value\[1\] cannot contain whitespace/,
    );
    await refused({ urlSecret: { parameter: "key", value: ["ok", ""] } }, /urlSecret\.value\[1\]/);
  });

  it("a wrong secret sent written and encoded is masked in onError as the URL carries it", async () => {
    const auth = await createAuth({ urlSecret: { parameter: "key", value: "right+one" } });
    const { failures, onError } = collector();
    const handler = createGetCheckoutCartInfoHandler(() => ({ productsList: [] }), {
      auth,
      onError,
    });
    const response = await handler.handle({
      method: "GET",
      url: "/cart?merchantCartToken=t&key=wrong+guess%2Bx",
      headers: {},
    });
    expect(response.status).toBe(401);
    expect(JSON.stringify(failures)).not.toMatch(/wrong|guess/);
  });
});

describe("second-mig-4: a secret mixing + or % with a character the URL parser escapes", () => {
  it("matches the registered URL carrying the whole value encoded (README), not written as it is", async () => {
    for (const value of ["a+'b", "p\u00e4ss+word"]) {
      const urlSecret = { parameter: "key", value };
      expect(await statusWith(urlSecret, encodeURIComponent(value)), value).toBe(200);
      // As the README says: written as it is, the parser's escapes change the written text.
      expect(await statusWith(urlSecret, value), value).toBe(401);
    }
    // Without the parser's escapes, written as it is still matches.
    expect(await statusWith({ parameter: "key", value: "Zm9v+YmFy/cQ==" }, "Zm9v+YmFy/cQ==")).toBe(
      200,
    );
  });
});
