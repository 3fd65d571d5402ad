import pc from "picocolors";

/** The colour functions the CLI uses (picocolors' shape). */
export type Colors = ReturnType<typeof pc.createColors>;

/** What colour support depends on. */
export interface ColorEnvironment {
  readonly isTTY?: boolean | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/**
 * Whether to colour output: never with `NO_COLOR` set (non-empty, per no-color.org),
 * `FORCE_COLOR=0` or `FORCE_COLOR=false` (as Node and chalk read them: no colour, even on a TTY)
 * or `TERM=dumb`; forced with any other non-empty `FORCE_COLOR`; otherwise only on a TTY.
 * picocolors' own default also colours when `CI` is set, even into a pipe, hence this decision.
 */
export function shouldUseColor({ isTTY, env }: ColorEnvironment): boolean {
  if (env.NO_COLOR) return false;
  const force = env.FORCE_COLOR?.trim().toLowerCase();
  if (force === "0" || force === "false") return false;
  if (force) return true;
  return isTTY === true && env.TERM !== "dumb";
}

/** picocolors, enabled or not by `shouldUseColor`. */
export function createColors(environment: ColorEnvironment): Colors {
  return pc.createColors(shouldUseColor(environment));
}
