// urlSecret values the query parser would change (a "+" reads as a space, "%xx" is decoded, "&" and
// "#" cut the value) could never match the URL the service calls as the merchant wrote it: they
// are refused at start-up, naming the option, instead of failing every callback.
import { describe, expect, it } from "vitest";
import { type AuthConfig, createAuth, createGetCheckoutCartInfoHandler } from "../../src/index.js";
import { collector } from "../core/helpers.js";

async function refused(config: AuthConfig, path: RegExp): Promise<void> {
  const attempt = createAuth(config);
  await expect(attempt).rejects.toBeInstanceOf(TypeError);
  await expect(attempt).rejects.toThrow(path);
}

describe("urlSecret values the query parser changes", () => {
  const unusable = [
    "Zm9v+YmFy/cQ==",
    "100%",
    "a%2Bb",
    "a&b",
    "a#b",
    "a b",
    " ab",
    "ab\t",
    "a\nb",
    "a\u0000b",
    "a\u007fb",
  ];

  it("refuses them at createAuth, naming the option path", async () => {
    for (const value of unusable) {
      await refused(
        { urlSecret: { parameter: "key", value } },
        /createAuth: urlSecret\.value cannot contain/,
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
