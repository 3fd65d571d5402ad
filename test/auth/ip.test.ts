import fc from "fast-check";
import type ipaddr from "ipaddr.js";
import { describe, expect, it } from "vitest";
import { createAuth, type IpAllowListOptions } from "../../src/auth/index.js";
import { parseAddress } from "../../src/auth/ip.js";
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

/** The address `parseAddress` gives, as text: `v4 a.b.c.d` or `v6` and its eight groups in hex. */
function parsed(text: string): string | undefined {
  const address = parseAddress(text);
  if (address === undefined) return undefined;
  return address.kind() === "ipv4"
    ? `v4 ${address.toString()}`
    : `v6 ${(address as ipaddr.IPv6).parts.map((part) => part.toString(16)).join(":")}`;
}

describe("IPv4-compatible (::/96) and IPv4-mapped (::ffff:0:0/96) IPv6 text", () => {
  it("only ::ffff:-mapped text, in any form, is IPv4; ::a.b.c.d and its hex form are IPv6", () => {
    for (const mapped of [
      "::ffff:203.0.113.5",
      "::FFFF:203.0.113.5",
      "::ffff:cb00:7105",
      "::FFFF:CB00:7105",
      "0:0:0:0:0:ffff:203.0.113.5",
      "0:0:0:0:0:ffff:cb00:7105",
      "0000:0000:0000:0000:0000:ffff:cb00:7105",
      "0000:0000:0000:0000:0000:FFFF:203.0.113.5",
      "::0:ffff:203.0.113.5",
      "0::ffff:cb00:7105",
      "[::ffff:203.0.113.5]",
      "[::ffff:203.0.113.5]:443",
      "::ffff:203.0.113.5%eth0",
    ]) {
      expect(parsed(mapped), mapped).toBe("v4 203.0.113.5");
    }
    for (const compatible of [
      "::203.0.113.5",
      "::cb00:7105",
      "::CB00:7105",
      "0:0:0:0:0:0:203.0.113.5",
      "0:0:0:0:0:0:cb00:7105",
      "0000:0000:0000:0000:0000:0000:203.0.113.5",
      "::0:203.0.113.5",
      "0::203.0.113.5",
      "[::203.0.113.5]",
      "[::203.0.113.5]:443",
      "::203.0.113.5%eth0",
    ]) {
      expect(parsed(compatible), compatible).toBe("v6 0:0:0:0:0:0:cb00:7105");
    }
    // Other prefixes around an embedded IPv4 are IPv6 too (SIIT, NAT64).
    expect(parsed("::ffff:0:203.0.113.5")).toBe("v6 0:0:0:0:ffff:0:cb00:7105");
    expect(parsed("64:ff9b::203.0.113.5")).toBe("v6 64:ff9b:0:0:0:0:cb00:7105");
    expect(parsed("::1:ffff:203.0.113.5")).toBe("v6 0:0:0:0:1:ffff:cb00:7105");
  });

  it("reads zone ids as interface names write them, and refuses what is no address", () => {
    for (const zoned of ["fe80::1%eth0", "fe80::1%br-1a2b", "fe80::1%veth0.1", "FE80::1%en_0"]) {
      expect(parsed(zoned), zoned).toBe("v6 fe80:0:0:0:0:0:0:1");
    }
    expect(parsed("[fe80::1%eth0]:443")).toBe("v6 fe80:0:0:0:0:0:0:1");
    for (const bad of [
      "",
      "::ffff:203.000.113.5", // dotted parts are strict decimal, as for plain IPv4
      "::ffff:0203.0.113.5",
      "::ffff:0x cb.0.113.5",
      "::ffff:203.0.113",
      "::ffff:203.0.113.256",
      "::203.0.113.5:1", // the dotted part comes last
      "1.2.3.4::",
      "1:2:3:4:5:6:7:8:9",
      "1:2:3:4:5:6:7",
      "1:2:3:4:5:6:7:1.2.3.4",
      "1::2::3",
      ":::",
      ":1:2:3:4:5:6:7",
      "1:2:3:4:5:6:7:",
      "12345::",
      "g::1",
      "fe80::1%",
      "fe80::1%eth 0",
      "fe80::1%eth0%1",
      "203.0.113.5%eth0",
      "0203.0.113.5",
      "127.1",
    ]) {
      expect(parsed(bad), bad).toBeUndefined();
    }
  });

  it("a peer or forwarded ::a.b.c.d is not the IPv4 host of an IPv4 allow-list", async () => {
    const ip = await ipAuth({ allow: ["203.0.113.0/24"], trustedProxies: ["10.0.0.1"] });
    for (const peer of [
      "::203.0.113.5",
      "::cb00:7105",
      "0:0:0:0:0:0:203.0.113.5",
      "::203.0.113.5%eth0",
    ]) {
      await refusal(ip.pass(peer));
      await refusal(ip.pass("10.0.0.1", peer));
      await refusal(ip.pass("10.0.0.1", `[${peer}]:443`));
      await refusal(ip.pass("10.0.0.1", `203.0.113.5, ${peer}`));
    }
    for (const peer of ["::ffff:203.0.113.5", "::FFFF:CB00:7105", "0:0:0:0:0:ffff:203.0.113.5"]) {
      await expect(ip.pass(peer), peer).resolves.toEqual({ methods: ["ip"] });
      await expect(ip.pass("10.0.0.1", peer), peer).resolves.toEqual({ methods: ["ip"] });
    }
    // A proxy at ::10.0.0.1 is not the trusted 10.0.0.1: its X-Forwarded-For is ignored.
    await refusal(ip.pass("::10.0.0.1", "203.0.113.5"));
    await expect(ip.pass("::ffff:10.0.0.1", "203.0.113.5")).resolves.toEqual({ methods: ["ip"] });
  });

  it("::a.b.c.d in the configuration is refused at creation (it would match no IPv4 peer); ::ffff:a.b.c.d is the IPv4 range", async () => {
    // The deprecated IPv4-compatible form, written with a dotted tail, reads like the IPv4
    // address but is an IPv6 range in ::/96 that no IPv4 caller is in: an allow-list that
    // silently lets no one in (or a trusted proxy that is never trusted). Refused, naming the
    // forms that mean IPv4.
    for (const [list, text] of [
      ["allow", "::203.0.113.0/120"],
      ["allow", "::203.0.113.5"],
      ["allow", "0:0:0:0:0:0:10.0.0.1"],
      ["trustedProxies", "[::10.0.0.1]"],
      ["trustedProxies", "::0:10.0.0.0/104"],
    ] as const) {
      const options =
        list === "allow" ? { allow: [text] } : { allow: ["203.0.113.5"], trustedProxies: [text] };
      const attempt = ipAuth(options);
      await expect(attempt, text).rejects.toThrow(TypeError);
      await expect(attempt, text).rejects.toThrow(
        `createAuth: ipAllowList.${list}[0] is an IPv4-compatible IPv6 address ("${text}"), which no IPv4 caller matches: write the IPv4 address or range ("203.0.113.5", "10.0.0.0/8") or its IPv4-mapped form ("::ffff:203.0.113.5")`,
      );
    }
    // The same range written in hex, and ::1 or :: (no dotted tail), stay the IPv6 they say.
    const ip = await ipAuth({ allow: ["::cb00:7100/120", "::1"] });
    await expect(ip.pass("::203.0.113.5")).resolves.toEqual({ methods: ["ip"] });
    await expect(ip.pass("::cb00:7105")).resolves.toEqual({ methods: ["ip"] });
    await expect(ip.pass("::1")).resolves.toEqual({ methods: ["ip"] });
    await refusal(ip.pass("203.0.113.5"));
    await refusal(ip.pass("::ffff:203.0.113.5"));
    const mapped = await ipAuth({ allow: ["::ffff:203.0.113.0/120"] });
    await expect(mapped.pass("203.0.113.5")).resolves.toEqual({ methods: ["ip"] });
    await refusal(mapped.pass("::203.0.113.5"));
  });

  it("any address, written in any RFC 4291 form, parses to its own bytes and family", () => {
    const group = (n: number, upper: boolean, pad: boolean) => {
      const hex = n.toString(16);
      const text = pad ? hex.padStart(4, "0") : hex;
      return upper ? text.toUpperCase() : text;
    };
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 0xffff })), {
          minLength: 8,
          maxLength: 8,
        }),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        fc.nat(),
        (parts, mapped, upper, pad, dotted, cut) => {
          const words = mapped ? [0, 0, 0, 0, 0, 0xffff, parts[6], parts[7]] : parts;
          let groups = words.map((word) => group(word as number, upper, pad));
          if (dotted) {
            const [a, b] = [words[6] as number, words[7] as number];
            groups = [...groups.slice(0, 6), `${a >> 8}.${a & 255}.${b >> 8}.${b & 255}`];
          }
          // Compress one run of zero groups (any run, not only the longest) when there is one.
          const zeros: [number, number][] = [];
          for (let i = 0; i < 6 + (dotted ? 0 : 2); i++) {
            if (words[i] !== 0) continue;
            let j = i;
            while (j + 1 < (dotted ? 6 : 8) && words[j + 1] === 0) j++;
            zeros.push([i, j]);
          }
          let text = groups.join(":");
          if (zeros.length > 0) {
            const [i, j] = zeros[cut % zeros.length] as [number, number];
            text = `${groups.slice(0, i).join(":")}::${groups.slice(j + 1).join(":")}`;
          }
          const isMapped = words.slice(0, 5).every((w) => w === 0) && words[5] === 0xffff;
          const [c, d] = [words[6] as number, words[7] as number];
          expect(parsed(text), text).toBe(
            isMapped
              ? `v4 ${c >> 8}.${c & 255}.${d >> 8}.${d & 255}`
              : `v6 ${words.map((w) => (w as number).toString(16)).join(":")}`,
          );
        },
      ),
      { numRuns: 2000 },
    );
  });
});
