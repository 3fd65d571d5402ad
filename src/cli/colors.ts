import pc from "picocolors";

/** The colour functions the CLI uses (picocolors' shape). */
export type Colors = ReturnType<typeof pc.createColors>;

/** What colour support depends on. */
export interface ColorEnvironment {
  readonly isTTY?: boolean | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/**
 * Whether to colour output: never with `NO_COLOR` set (non-empty, per no-color.org) or
 * `TERM=dumb`; forced with `FORCE_COLOR` (non-empty, not `0`); otherwise only on a TTY.
 * picocolors' own default also colours when `CI` is set, even into a pipe, hence this decision.
 */
export function shouldUseColor({ isTTY, env }: ColorEnvironment): boolean {
  if (env.NO_COLOR) return false;
  if (env.FORCE_COLOR && env.FORCE_COLOR !== "0") return true;
  return isTTY === true && env.TERM !== "dumb";
}

/** picocolors, enabled or not by `shouldUseColor`. */
export function createColors(environment: ColorEnvironment): Colors {
  return pc.createColors(shouldUseColor(environment));
}
