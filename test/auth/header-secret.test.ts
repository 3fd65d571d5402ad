// headerSecret takes a list of values for a rotation, as urlSecret, basic, jwt keys and
// merchantGuid do: during the switch the service may send the old or the new secret, and a merchant
// with one value had to choose which deliveries to refuse (401 = a lost callback).
import { describe, expect, it } from "vitest";
import { type AuthConfig, createAuth, createUpdateOrderStatusHandler } from "../../src/index.js";

async function refused(config: AuthConfig, path: RegExp): Promise<void> {
  const attempt = createAuth(config);
  await expect(attempt).rejects.toBeInstanceOf(TypeError);
  await expect(attempt).rejects.toThrow(path);
}

async function statusWith(
  headerSecret: AuthConfig["headerSecret"],
  headers: Record<string, string | string[]>,
): Promise<number> {
  const auth = await createAuth({ headerSecret });
  const handler = createUpdateOrderStatusHandler(() => undefined, {
    auth,
    onError: () => undefined,
  });
  const response = await handler.handle({
    method: "POST",
    url: "/UpdateOrderStatus",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ OrderId: "GE1", MerchantGUID: "guid-1", StatusCode: "new" }),
  });
  return response.status;
}

describe("headerSecret with several values (a rotation)", () => {
  it("any of the values matches; another value, a missing or repeated header does not", async () => {
    const rotating = { name: "X-Secret", value: ["old-secret", "new-secret"] } as const;
    expect(await statusWith(rotating, { "x-secret": "old-secret" })).toBe(200);
    expect(await statusWith(rotating, { "x-secret": "new-secret" })).toBe(200);
    expect(await statusWith(rotating, { "x-secret": "other" })).toBe(401);
    expect(await statusWith(rotating, {})).toBe(401);
    expect(await statusWith(rotating, { "x-secret": ["old-secret", "new-secret"] })).toBe(401);
  });

  it("one value still works as before", async () => {
    expect(await statusWith({ name: "X-Secret", value: "s3cret" }, { "x-secret": "s3cret" })).toBe(
      200,
    );
    expect(await statusWith({ name: "X-Secret", value: "s3cret" }, { "x-secret": "nope" })).toBe(
      401,
    );
  });

  it("refuses an empty list and names the bad entry of a list", async () => {
    await refused({ headerSecret: { name: "X-Secret", value: [] } }, /headerSecret\.value/);
    await refused(
      { headerSecret: { name: "X-Secret", value: ["ok", " padded"] } },
      /headerSecret\.value\[1\] cannot start or end with whitespace/,
    );
    await refused(
      { headerSecret: { name: "X-Secret", value: ["ok", "a,b"] } },
      /headerSecret\.value\[1\] cannot contain a comma/,
    );
    await refused(
      // @ts-expect-error: a number is not a secret
      { headerSecret: { name: "X-Secret", value: ["ok", 5] } },
      /headerSecret\.value\[1\]/,
    );
  });
});
