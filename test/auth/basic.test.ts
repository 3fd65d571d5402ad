import { afterEach, describe, expect, it, vi } from "vitest";
import { createAuth } from "../../src/auth/index.js";
import { makeRequest, refusal } from "./helpers.js";

afterEach(() => {
  vi.restoreAllMocks();
});

/** `Basic base64(utf8(user:password))`, as RFC 7617 with charset=UTF-8 writes it. */
function basicHeader(userAndPassword: string, scheme = "Basic"): string {
  const bytes = new TextEncoder().encode(userAndPassword);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return `${scheme} ${btoa(binary)}`;
}

const withAuthorization = (value: string | undefined) =>
  makeRequest({ headers: { Authorization: value } });

describe("security.md — Other modes: HTTP Basic", () => {
  it("29. Basic: ':' in the password, non-ASCII password, same-length wrong user, missing header; constant-time compare", async () => {
    const auth = await createAuth({
      basic: [
        { username: "merchant", password: "pa:ss:word" },
        { username: "zoë", password: "pässwörd-🔑" },
      ],
    });

    // A password containing ':' — split on the first colon only.
    await expect(
      auth.authenticateRequest(withAuthorization(basicHeader("merchant:pa:ss:word"))),
    ).resolves.toEqual({ methods: ["basic"] });
    // Non-ASCII user and password, UTF-8 encoded.
    await expect(
      auth.authenticateRequest(withAuthorization(basicHeader("zoë:pässwörd-🔑"))),
    ).resolves.toEqual({ methods: ["basic"] });
    // NFD spelling of the same password (RFC 7617 asks for NFC) is the same credential.
    await expect(
      auth.authenticateRequest(withAuthorization(basicHeader("zoe\u0308:pa\u0308sswo\u0308rd-🔑"))),
    ).resolves.toEqual({ methods: ["basic"] });

    // A wrong user of the same length, with the right password.
    const wrongUser = await refusal(
      auth.authenticateRequest(withAuthorization(basicHeader("merchanT:pa:ss:word"))),
    );
    expect(wrongUser.message).toBe("Basic credentials do not match");
    // The password of the other credential does not cross over.
    await refusal(auth.authenticateRequest(withAuthorization(basicHeader("merchant:pässwörd-🔑"))));
    await refusal(auth.authenticateRequest(withAuthorization(basicHeader("merchant:pa:ss:wor"))));
    await refusal(auth.authenticateRequest(withAuthorization(basicHeader("merchant:pa"))));

    // Missing header.
    const missing = await refusal(auth.authenticateRequest(withAuthorization(undefined)));
    expect(missing.message).toBe("Authorization header missing");

    // No early return on a user mismatch: user and password are both digested every time.
    const digest = vi.spyOn(crypto.subtle, "digest");
    await refusal(auth.authenticateRequest(withAuthorization(basicHeader("xxxxxxxx:nope"))));
    expect(digest).toHaveBeenCalledTimes(2);
    digest.mockClear();
    await auth.authenticateRequest(withAuthorization(basicHeader("merchant:pa:ss:word")));
    expect(digest).toHaveBeenCalledTimes(2);
  });

  it("accepts the scheme in any case and refuses malformed Basic values without crashing", async () => {
    const auth = await createAuth({ basic: { username: "merchant", password: "secret" } });
    await expect(
      auth.authenticateRequest(withAuthorization(basicHeader("merchant:secret", "bAsIc"))),
    ).resolves.toEqual({ methods: ["basic"] });
    const latin1 = `Basic ${btoa("merchant:s\xe9cret")}`; // not UTF-8
    for (const value of [
      "Basic",
      "Basic ",
      "Basic !!!!",
      "Basic bWVyY2hhbnQ", // "merchant": no colon
      `Bearer ${btoa("merchant:secret")}`,
      btoa("merchant:secret"),
      `${basicHeader("merchant:secret")}, ${basicHeader("merchant:secret")}`,
      latin1,
    ]) {
      await refusal(auth.authenticateRequest(withAuthorization(value)));
    }
    await refusal(
      auth.authenticateRequest(withAuthorization(`Basic ${"A".repeat(17 * 1024)}`)),
      "header_too_large",
    );
  });
});
