/** Configuration checks shared by the modes: every mistake is a TypeError naming its path. */

export function configError(path: string, problem: string): TypeError {
  return new TypeError(`createAuth: ${path} ${problem}`);
}

/** A misspelt option (`isuser`) would silently switch a check off: refuse unknown names. */
export function assertKnownKeys(
  value: Record<string, unknown>,
  known: readonly string[],
  path: string,
): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) {
      throw configError(path, `has an unknown option "${key}" (known: ${known.join(", ")})`);
    }
  }
}

/** A non-empty string, or the configuration is refused. */
export function requireString(value: unknown, path: string): string {
  if (typeof value !== "string" || value.length === 0) {
    throw configError(path, "must be a non-empty string");
  }
  return value;
}
