/** Request targets: cheap path extraction for routing, and the URL the engine parses once. */

import { assertKnownKeys, configError } from "../auth/validate.js";
import { isPlainObject } from "./objects.js";
import { CALLBACK_NAMES, type CallbackName } from "./types.js";

/**
 * The path of a request target (`/a/b?x` or `https://host/a/b?x`), without query or fragment. In
 * the absolute form the path starts at the first `/`, `?` or `#` after the authority; when that is
 * not a `/` (`http://host?/a/b`), the path is `/`, as `new URL`, Express and Koa read it, whatever
 * the query or fragment holds. The origin form (`/…`, what clients send) costs one comparison more.
 */
export function pathnameOf(target: string): string {
  let start = 0;
  if (target.charCodeAt(0) !== 0x2f) {
    const scheme = target.indexOf("://");
    if (scheme !== -1 && scheme < target.indexOf("/")) {
      start = scheme + 3;
      for (; start < target.length; start++) {
        const c = target.charCodeAt(start);
        if (c === 0x2f || c === 0x3f || c === 0x23) break;
      }
      if (target.charCodeAt(start) !== 0x2f) return "/";
    }
  }
  let end = target.length;
  for (let i = start; i < target.length; i++) {
    const c = target.charCodeAt(i);
    if (c === 0x3f || c === 0x23) {
      end = i;
      break;
    }
  }
  return target.slice(start, end);
}

/**
 * A path as routes compare it: a leading slash, no trailing slashes, surrounding spaces trimmed.
 * A loop, not a regular expression: `/+$` backtracks quadratically on a long run of slashes.
 */
export function normalisePath(path: string): string {
  const trimmed = path.trim();
  let end = trimmed.length;
  while (end > 0 && trimmed.charCodeAt(end - 1) === 0x2f) end--;
  if (end === 0) return "";
  const body = trimmed.slice(0, end);
  return body.charCodeAt(0) === 0x2f ? body : `/${body}`;
}

/**
 * What an Express or Koa adapter calls when the endpoint did not serve a path below a mount
 * prefix (`req.baseUrl`, Koa's `ctx.originalUrl`), with the whole path, prefix included: a router
 * that serves that whole path was mounted under a prefix its own paths repeat (review migrate-4),
 * and says so once through its `onError`. Only on a path passed on, never on one served.
 */
export const MISSED_BELOW_MOUNT: unique symbol = Symbol.for(
  "crossborder-callbacks/missedBelowMount@1",
) as never;

/** `mountPrefix`: the prefix the framework cut (`req.baseUrl`); the report fits only if the router's
 * basePath starts with it (review second-mig-3). */
export type MountMissReporter = (wholePathname: string, mountPrefix?: string) => void;

/** Tells the endpoint (a router of any copy of the library) of a path missed below a mount. */
export function reportMissBelowMount(
  endpoint: object,
  wholePathname: string,
  mountPrefix: string,
): void {
  try {
    const report = (endpoint as { readonly [MISSED_BELOW_MOUNT]?: unknown })[MISSED_BELOW_MOUNT];
    if (typeof report === "function") (report as MountMissReporter)(wholePathname, mountPrefix);
  } catch {
    // A warning only: the call goes on to next() whatever happens here.
  }
}

/** Each callback's name in lower case, to its name. */
const CALLBACK_BY_LOWER_NAME: ReadonlyMap<string, CallbackName> = /* @__PURE__ */ new Map(
  CALLBACK_NAMES.map((name) => [name.toLowerCase(), name]),
);

/** The longest callback name's length: a longer last segment names none (nothing lowered). */
const LONGEST_NAME = /* @__PURE__ */ Math.max(...CALLBACK_NAMES.map((name) => name.length));

/** Unreserved characters (RFC 3986): an escape of one means the character itself. */
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

function unescapedUnreserved(escaped: string, hex: string): string {
  const character = String.fromCharCode(Number.parseInt(hex, 16));
  return UNRESERVED.test(character) ? character : escaped;
}

/**
 * The callback a pathname's last segment names (in any case, trailing slashes ignored), or
 * undefined: what keeps a single handler off another callback's path (review migrate-1). The
 * segment is read as an old receiver's URL may spell a name (review second-mig-1): escapes of
 * unreserved characters decoded (`Send%4FrderToMerchant`), then cut at its first `.` or `;`
 * (`SendOrderToMerchant.php`, `.aspx`, `;v=1`). Never throws.
 */
export function callbackNamedBy(pathname: string): CallbackName | undefined {
  const path = normalisePath(pathname);
  let segment = path.slice(path.lastIndexOf("/") + 1);
  if (segment.indexOf("%") !== -1)
    segment = segment.replace(/%([0-9A-Fa-f]{2})/g, unescapedUnreserved);
  const cut = segment.search(/[.;]/);
  if (cut !== -1) segment = segment.slice(0, cut);
  if (segment.length > LONGEST_NAME) return undefined;
  return CALLBACK_BY_LOWER_NAME.get(segment.toLowerCase());
}

/**
 * What an adapter calls on a single handler (of any copy of the library) whose path `matches`
 * refused and that it answered with the router's 404: the handler reports it through its onError.
 * Only a report: a handler without it (a wrapper) is refused all the same.
 */
export const NOT_SERVED: unique symbol = Symbol.for("crossborder-callbacks/notServed@1") as never;

/** Tells a single handler of a path it was not given (see `NOT_SERVED`); never throws. */
export function reportNotServed(endpoint: object, pathname: string): void {
  try {
    const report = (endpoint as { readonly [NOT_SERVED]?: unknown })[NOT_SERVED];
    if (typeof report === "function") (report as (pathname: string) => void)(pathname);
  } catch {
    // A report only.
  }
}

/**
 * The characters a request path carries as they are (RFC 3986 `pchar` and `/`): a client
 * percent-encodes any other (a space, `ö`, `\`, `|`), and the router compares the path as sent.
 */
const PATH_CHARACTER = /[A-Za-z0-9\-._~!$&'()*+,;=:@/]/;

/**
 * Why a route path no request can reach, or undefined: the first character a client would send
 * percent-encoded (`%20` for a space), or a `%` that starts no `%XX` escape. Surrounding spaces
 * are left out, as `normalisePath` trims them.
 */
function unreachableCharacter(value: string): string | undefined {
  const path = value.trim();
  for (let i = 0; i < path.length; i++) {
    const c = path[i] as string;
    if (c === "%") {
      if (/^[0-9A-Fa-f]{2}$/.test(path.slice(i + 1, i + 3))) i += 2;
      else return '"%" not followed by two hex digits';
    } else if (!PATH_CHARACTER.test(c)) {
      const point = path.codePointAt(i) as number;
      const character = String.fromCodePoint(point);
      const hex = point.toString(16).toUpperCase().padStart(4, "0");
      return `${JSON.stringify(character)} (U+${hex})`;
    }
  }
  return undefined;
}

/**
 * The router's `basePath` and `paths`, checked once: a request's path is cut at its first `?` or
 * `#`, and is compared as sent, percent-escapes and all, so a route holding one of those or a
 * character a client percent-encodes (a space, `ö`) is matched by no request (every call to it a
 * 404); a misspelt callback name in `paths` would leave that callback at its default path. The
 * messages name the option and the character at fault, never the value (a path may carry a
 * secret).
 */
export function checkRoutePaths(basePath: unknown, paths: unknown, owner: string): void {
  const assertPath = (value: unknown, path: string) => {
    if (typeof value !== "string" || /[?#]/.test(value)) {
      throw configError(path, 'must be a path (a string without "?" or "#")', owner);
    }
    const unreachable = unreachableCharacter(value);
    if (unreachable !== undefined) {
      throw configError(
        path,
        `must be a path a request carries as written (RFC 3986: letters, digits, "-._~!$&'()*+,;=:@/" and %XX escapes, compared as sent), not ${unreachable}, which a client may send percent-encoded (RFC 3986 clients do; browsers and fetch do for some) and the route would then not match: write the path as clients send it (a space as %20)`,
        owner,
      );
    }
  };
  assertPath(basePath, "basePath");
  if (!isPlainObject(paths)) throw configError("paths", "must be an object", owner);
  assertKnownKeys(paths, CALLBACK_NAMES, "paths", owner);
  for (const [name, value] of Object.entries(paths)) {
    // null, as undefined, keeps the default path (read with `??`).
    if (value != null) assertPath(value, `paths.${name}`);
  }
}

/**
 * Whether `requestUrl` cannot throw on a target: a path (`/` then anything but a second `/` or
 * `\\`, or the tab and line breaks the URL parser removes before reading it), which parses
 * against the placeholder origin, its host and scheme, whatever its characters (the path, query
 * and fragment states percent-encode, never fail).
 */
export function isPathTarget(target: string): boolean {
  if (target.charCodeAt(0) !== 0x2f) return false;
  const second = target.charCodeAt(1);
  return (
    second !== 0x2f && second !== 0x5c && second !== 0x09 && second !== 0x0a && second !== 0x0d
  );
}

/** Parses the request URL; a path-only target gets a placeholder origin. Throws when malformed. */
export function requestUrl(target: string): URL {
  return new URL(target, "http://localhost");
}
