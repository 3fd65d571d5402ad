import { describe, expect, it } from "vitest";
import { createAuth, type IpAllowListOptions } from "../../src/auth/index.js";
import { makeRequest, refusal } from "./helpers.js";

async function ipAuth(options: IpAllowListOptions, allowWeakAuth = false) {
  const auth = await createAuth({ ipAllowList: options, allowWeakAuth });
  return {
    pass: (remoteAddress: string | undefined, forwardedFor?: string) =>
      auth.authenticateRequest(
        makeRequest({
          remoteAddress,
          headers: forwardedFor === undefined ? {} : { "X-Forwarded-For": forwardedFor },
        }),
      ),
  };
}

describe("security.md — Other modes: IP allow-list", () => {
  it("30. behind a proxy, a spoofed left-most X-Forwarded-For entry does not pass", async () => {
    const ip = await ipAuth({ allow: ["203.0.113.7"], trustedProxies: ["10.0.0.0/8"] });
    // The real client (198.51.100.9) was appended by our proxy; the left-most entry is a lie.
    const spoofed = await refusal(ip.pass("10.0.0.2", "203.0.113.7, 198.51.100.9"));
    expect(spoofed.message).toBe("client address not in the IP allow-list");
    // Two trusted hops: the walk continues past 10.0.0.5 to the client.
    await refusal(ip.pass("10.0.0.2", "203.0.113.7, 198.51.100.9, 10.0.0.5"));
    // The genuine case: our proxy saw 203.0.113.7.
    await expect(ip.pass("10.0.0.2", "203.0.113.7")).resolves.toEqual({ methods: ["ip"] });
    await expect(ip.pass("10.0.0.2", "1.1.1.1, 203.0.113.7, 10.9.9.9")).resolves.toEqual({
      methods: ["ip"],
    });
    // A peer that is not a trusted proxy cannot vouch for anyone: its X-Forwarded-For is ignored.
    await refusal(ip.pass("198.51.100.9", "203.0.113.7"));
  });

  it("ignores X-Forwarded-For entirely without trustedProxies", async () => {
    const ip = await ipAuth({ allow: ["203.0.113.7"] });
    await refusal(ip.pass("198.51.100.9", "203.0.113.7"));
    await expect(ip.pass("203.0.113.7", "6.6.6.6")).resolves.toEqual({ methods: ["ip"] });
  });

  it("never trusts the left-most entry, even when it is a trusted proxy address", async () => {
    const ip = await ipAuth({ allow: ["203.0.113.0/24"], trustedProxies: ["10.0.0.0/8"] });
    // All hops look like proxies: the walk stops at the left-most one, which is not allowed.
    await refusal(ip.pass("10.0.0.2", "10.0.0.7, 10.0.0.8"));
    // A trusted peer without X-Forwarded-For is itself the client.
    await refusal(ip.pass("10.0.0.2"));
  });

  it("matches IPv4, IPv6, CIDR ranges and IPv4-mapped IPv6 both ways", async () => {
    const ip = await ipAuth({
      allow: ["192.0.2.10", "198.51.100.0/24", "2001:db8::/32", "::1", "::ffff:100.64.0.0/106"],
    });
    for (const allowed of [
      "192.0.2.10",
      "198.51.100.200",
      "2001:db8:1::42",
      "::1",
      "::ffff:192.0.2.10", // mapped form of an allowed IPv4
      "::ffff:198.51.100.1",
      "100.64.3.4", // plain IPv4 inside a range configured in mapped form
    ]) {
      await expect(ip.pass(allowed), allowed).resolves.toEqual({ methods: ["ip"] });
    }
    for (const refused of [
      "192.0.2.11",
      "198.51.101.1",
      "2001:db9::1",
      "::2",
      "::ffff:192.0.2.11",
      "100.128.0.1",
    ]) {
      await refusal(ip.pass(refused));
    }
  });

  it("refuses a missing peer address, garbage addresses and malformed X-Forwarded-For", async () => {
    // Allowing every address proves nothing about the caller: only with allowWeakAuth.
    const ip = await ipAuth({ allow: ["0.0.0.0/0", "::/0"], trustedProxies: ["10.0.0.0/8"] }, true);
    const missing = await refusal(ip.pass(undefined));
    expect(missing.message).toMatch(/peer address unknown/);
    await refusal(ip.pass(""));
    await refusal(ip.pass("not-an-ip"));
    await refusal(ip.pass("127.1")); // non-decimal IPv4 forms are not addresses here
    await refusal(ip.pass("10.0.0.2", "203.0.113.7,,"));
    await refusal(ip.pass("10.0.0.2", "203.0.113.7, bogus"));
    await refusal(ip.pass("10.0.0.2", " , 10.0.0.3, 10.0.0.4"));
    await refusal(ip.pass("10.0.0.2", `${"1.2.3.4, ".repeat(2000)}1.2.3.4`));
    // Ports and brackets as some proxies write them are understood.
    await expect(ip.pass("10.0.0.2", "203.0.113.7:51234")).resolves.toBeDefined();
    await expect(ip.pass("10.0.0.2", "[2001:db8::1]:443")).resolves.toBeDefined();
  });
});
