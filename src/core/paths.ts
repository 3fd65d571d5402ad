/** Request targets: cheap path extraction for routing, and the URL the engine parses once. */

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

/** Parses the request URL; a path-only target gets a placeholder origin. Throws when malformed. */
export function requestUrl(target: string): URL {
  return new URL(target, "http://localhost");
}
