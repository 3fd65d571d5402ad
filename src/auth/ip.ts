import ipaddr from "ipaddr.js";
import { AuthenticationError } from "../core/errors.js";
import { isPlainObject } from "../core/objects.js";
import type { IpAllowListOptions } from "./config.js";
import type { AuthRequest } from "./types.js";
import { assertKnownKeys, configError } from "./validate.js";

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Range = [Address, number];

/** Longest X-Forwarded-For read; a longer one is refused rather than walked. */
const MAX_FORWARDED_LENGTH = 16 * 1024;

/** Ranges split by family so a lookup never compares an IPv4 address with an IPv6 range. */
class RangeSet {
  private readonly v4: Range[] = [];
  private readonly v6: Range[] = [];

  add(range: Range): void {
    (range[0].kind() === "ipv4" ? this.v4 : this.v6).push(range);
  }

  get size(): number {
    return this.v4.length + this.v6.length;
  }

  has(address: Address): boolean {
    const ranges = address.kind() === "ipv4" ? this.v4 : this.v6;
    for (const range of ranges) if (address.match(range)) return true;
    return false;
  }

  /**
   * Whether the ranges together hold every IPv4 or every IPv6 address (`0.0.0.0/0`, `::/0`,
   * `::ffff:0.0.0.0/96`, or halves and quarters that add up to one of those): anyone can call
   * from some address of a family.
   */
  coversAFamily(): boolean {
    return coversAll(this.v4, 32) || coversAll(this.v6, 128);
  }
}

/** Whether the ranges, of one family of `bits`-bit addresses, leave no address out. */
function coversAll(ranges: readonly Range[], bits: number): boolean {
  const spans = ranges
    .map(([address, prefix]): [bigint, bigint] => {
      let start = 0n;
      for (const byte of address.toByteArray()) start = (start << 8n) | BigInt(byte);
      const size = 1n << BigInt(bits - prefix);
      start -= start % size; // the range's first address: its host bits cleared
      return [start, start + size];
    })
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  let reached = 0n;
  for (const [start, end] of spans) {
    if (start > reached) return false;
    if (end > reached) reached = end;
  }
  return reached === 1n << BigInt(bits);
}

/**
 * Parses one address strictly: dotted-quad IPv4 only (no `127.1`, `0x7f…`, `010…`), IPv6 as RFC
 * 4291 §2.2 writes it (any case, zeros compressed or not, a dotted-quad tail, a zone id), an
 * optional `[…]` and port as proxies write them. Only IPv4-mapped IPv6 (`::ffff:1.2.3.4`,
 * `::ffff:102:304`, `0:0:0:0:0:ffff:…`) becomes IPv4; the IPv4-compatible `::1.2.3.4` (`::/96`,
 * as Node prints such a peer) stays the IPv6 address it is. ipaddr.js is not asked to parse the
 * text: it reads `::1.2.3.4` as `::ffff:1.2.3.4` and takes `010` or `0x7f` in a dotted tail.
 */
export function parseAddress(text: string): Address | undefined {
  let host = text;
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(host);
  if (bracketed !== null) host = bracketed[1] as string;
  else {
    const v4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(host);
    if (v4WithPort !== null) host = v4WithPort[1] as string;
  }
  if (!host.includes(":")) {
    const octets = dottedQuad(host);
    return octets === undefined ? undefined : new ipaddr.IPv4(octets);
  }
  const words = ipv6Words(host);
  if (words === undefined) return undefined;
  if (words[0] === 0 && words[1] === 0 && words[2] === 0 && words[3] === 0 && words[4] === 0) {
    if (words[5] === 0xffff) {
      const [high, low] = [words[6] as number, words[7] as number];
      return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
    }
  }
  return new ipaddr.IPv6(words);
}

/** `0`-`255` in decimal, without a leading zero. */
const DEC_OCTET = "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)";
const DOTTED_QUAD = new RegExp(`^${DEC_OCTET}(?:\\.${DEC_OCTET}){3}$`);
const HEX_GROUP = /^[0-9a-f]{1,4}$/i;
/** A zone id as interface names are written (RFC 6874's unreserved characters): not compared. */
const ZONE_ID = /^[\w.~-]+$/;

/** The four octets of a strict dotted quad, or undefined. */
function dottedQuad(text: string): number[] | undefined {
  if (!DOTTED_QUAD.test(text)) return undefined;
  return text.split(".").map(Number);
}

/**
 * The eight 16-bit groups of IPv6 text (RFC 4291 §2.2: 1-4 hex digits a group, at most one `::`
 * standing for at least one zero group, an optional dotted quad as the last 32 bits), its zone id
 * (`%eth0`) dropped; undefined for anything else.
 */
function ipv6Words(text: string): number[] | undefined {
  let host = text;
  const percent = host.indexOf("%");
  if (percent >= 0) {
    if (!ZONE_ID.test(host.slice(percent + 1))) return undefined;
    host = host.slice(0, percent);
  }
  const halves = host.split("::");
  if (halves.length > 2) return undefined;
  const head = groupsOf(halves[0] as string, halves.length === 1);
  const tail = halves.length === 2 ? groupsOf(halves[1] as string, true) : [];
  if (head === undefined || tail === undefined) return undefined;
  const count = head.length + tail.length;
  if (halves.length === 1 ? count !== 8 : count > 7) return undefined;
  return [...head, ...new Array<number>(8 - count).fill(0), ...tail];
}

/** The groups of `a:b:c` (empty text: none); a dotted quad is taken last only when `last`. */
function groupsOf(text: string, last: boolean): number[] | undefined {
  if (text === "") return [];
  const pieces = text.split(":");
  const groups: number[] = [];
  for (let i = 0; i < pieces.length; i++) {
    const piece = pieces[i] as string;
    if (HEX_GROUP.test(piece)) groups.push(Number.parseInt(piece, 16));
    else if (last && i === pieces.length - 1) {
      const octets = dottedQuad(piece);
      if (octets === undefined) return undefined;
      const [a, b, c, d] = octets as [number, number, number, number];
      groups.push((a << 8) | b, (c << 8) | d);
    } else return undefined;
  }
  return groups;
}

/**
 * Whether configuration text is an IPv4-compatible IPv6 address written with a dotted tail
 * (`::203.0.113.5`, in `::/96`): it reads like the IPv4 address, but is an IPv6 one that no IPv4
 * caller matches, so a list holding it would silently let no one in. The hex form (`::cb00:7105`)
 * and `::1` say what they are and are kept.
 */
function isCompatibleDotted(address: Address, text: string): boolean {
  if (address.kind() !== "ipv6" || !text.includes(".")) return false;
  return address
    .toByteArray()
    .slice(0, 12)
    .every((byte) => byte === 0);
}

function parseRange(text: unknown, path: string): Range {
  if (typeof text !== "string") throw configError(path, "must be a string");
  const trimmed = text.trim();
  const slash = trimmed.indexOf("/");
  const address = parseAddress(slash < 0 ? trimmed : trimmed.slice(0, slash));
  const prefixText = slash < 0 ? undefined : trimmed.slice(slash + 1);
  if (address === undefined) throw configError(path, `is not an IP address or CIDR: "${text}"`);
  if (isCompatibleDotted(address, slash < 0 ? trimmed : trimmed.slice(0, slash))) {
    throw configError(
      path,
      `is an IPv4-compatible IPv6 address ("${text}"), which no IPv4 caller matches: write the IPv4 address or range ("203.0.113.5", "10.0.0.0/8") or its IPv4-mapped form ("::ffff:203.0.113.5")`,
    );
  }
  const mapped = slash >= 0 && address.kind() === "ipv4" && trimmed.includes(":");
  const max = address.kind() === "ipv4" ? 32 : 128;
  if (prefixText === undefined) return [address, max];
  if (!/^\d{1,3}$/.test(prefixText)) throw configError(path, `has an invalid prefix: "${text}"`);
  let prefix = Number(prefixText);
  // `::ffff:10.0.0.0/104` is the IPv4 range 10.0.0.0/8: addresses are compared as IPv4.
  if (mapped) {
    if (prefix < 96 || prefix > 128) {
      throw configError(path, `maps IPv4 with a prefix outside 96-128: "${text}"`);
    }
    prefix -= 96;
  }
  if (prefix > max) throw configError(path, `has a prefix longer than ${max}: "${text}"`);
  return [address, prefix];
}

function parseRanges(list: unknown, path: string, allowEmpty: boolean): RangeSet {
  if (!Array.isArray(list)) throw configError(path, "must be an array");
  if (!allowEmpty && list.length === 0) throw configError(path, "must not be empty");
  const set = new RangeSet();
  for (const [index, item] of list.entries()) set.add(parseRange(item, `${path}[${index}]`));
  return set;
}

/** The IP allow-list, with its ranges parsed once. */
export class IpVerifier {
  /**
   * Whether anyone can pass: `allow` holds every address of a family, or `trustedProxies` does
   * (any caller is then a trusted proxy, and names an allowed client in `X-Forwarded-For`). Such
   * a list proves nothing about the caller (`createAuth`'s `allowWeakAuth` guard).
   */
  readonly admitsAnyone: boolean;
  /** The option paths of the lists that let anyone pass (`ipAllowList.trustedProxies`), if any. */
  readonly admitsAnyoneThrough: readonly string[];

  private constructor(
    private readonly allow: RangeSet,
    private readonly trusted: RangeSet | undefined,
    path: string,
  ) {
    const through: string[] = [];
    if (allow.coversAFamily()) through.push(`${path}.allow`);
    if (trusted?.coversAFamily() === true) through.push(`${path}.trustedProxies`);
    this.admitsAnyoneThrough = through;
    this.admitsAnyone = through.length > 0;
  }

  static compile(options: IpAllowListOptions, path: string): IpVerifier {
    if (!isPlainObject(options)) throw configError(path, "must be an object");
    assertKnownKeys(options, ["allow", "trustedProxies"], path);
    const allow = parseRanges(options.allow, `${path}.allow`, false);
    const trusted =
      options.trustedProxies === undefined
        ? undefined
        : parseRanges(options.trustedProxies, `${path}.trustedProxies`, true);
    const proxies = trusted === undefined || trusted.size === 0 ? undefined : trusted;
    // `this`, not the class's name: a class body that names its class is built as `class _X`
    // (esbuild), and `constructor.name` and util.inspect would say so.
    return new this(allow, proxies, path);
  }

  verify(request: AuthRequest): void {
    if (request.remoteAddress === undefined || request.remoteAddress === "") {
      throw new AuthenticationError("peer address unknown; the IP allow-list cannot be checked");
    }
    let client = parseAddress(request.remoteAddress);
    if (client === undefined) throw new AuthenticationError("peer address is not an IP address");
    const trusted = this.trusted;
    if (trusted?.has(client)) {
      const forwarded = request.headers.get("x-forwarded-for");
      if (forwarded !== null) {
        if (forwarded.length > MAX_FORWARDED_LENGTH) {
          throw new AuthenticationError("X-Forwarded-For header too long");
        }
        // Walk from the right: each trusted hop vouches for the entry to its left; the left-most
        // entry vouches for nothing, so it is where the walk stops at the latest.
        let end = forwarded.length;
        let more = true;
        while (more && trusted.has(client)) {
          const comma = forwarded.lastIndexOf(",", end - 1);
          const hop = parseAddress(forwarded.slice(comma + 1, end).trim());
          if (hop === undefined) {
            throw new AuthenticationError(
              "X-Forwarded-For holds an entry that is not an IP address",
            );
          }
          client = hop;
          more = comma >= 0;
          end = comma;
        }
      }
    }
    if (!this.allow.has(client)) {
      throw new AuthenticationError("client address not in the IP allow-list");
    }
  }
}
