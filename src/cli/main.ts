import { createPrivateKey } from "node:crypto";
import { readFile } from "node:fs/promises";
import { cac } from "cac";
import { importPKCS8 } from "jose";
import { version } from "../../package.json";
import { DEFAULT_SLOW_MS } from "../testing/check.js";
import { type Colors, createColors } from "./colors.js";
import { UsageError } from "./errors.js";
import { writeTestKeys } from "./keys.js";
import { SERVICE_ENV, type ServiceCommandOptions, serviceCommand } from "./service.js";
import {
  ALL_CALLBACKS,
  exitCodeOf,
  renderReport,
  renderSummary,
  resolveCallbacks,
  simulate,
} from "./simulate.js";

/** Where the CLI writes and what it reads from its environment; tests pass their own. */
export interface CliIo {
  readonly stdout: { write(text: string): unknown; readonly isTTY?: boolean | undefined };
  readonly stderr: { write(text: string): unknown; readonly isTTY?: boolean | undefined };
  readonly env: Readonly<Record<string, string | undefined>>;
}

export const PROGRAM = "crossborder-callbacks";
const DEFAULT_TIMEOUT_MS = 10_000;

/** The options of `simulate` as cac parses them (mri may turn digit-only values into numbers). */
export interface SimulateFlags {
  readonly url?: unknown;
  readonly privateKey?: unknown;
  readonly guid?: unknown;
  readonly cartToken?: unknown;
  readonly authToken?: unknown;
  readonly sessionId?: unknown;
  readonly issuer?: unknown;
  readonly audience?: unknown;
  readonly slowMs?: unknown;
  readonly timeoutMs?: unknown;
}

/**
 * The value of `--name` exactly as typed (`--name value` or `--name=value`), last one winning.
 * cac's parser (mri) turns digit-only values into numbers: `--cart-token 000123` would become
 * `123`, so text options are read back from the arguments.
 */
export function rawOptionValue(args: readonly string[], flag: string): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "--") break;
    if (arg === flag && i + 1 < args.length) value = args[i + 1];
    else if (arg.startsWith(`${flag}=`)) value = arg.slice(flag.length + 1);
  }
  return value;
}

const TEXT_OPTIONS: Record<string, string> = {
  url: "--url",
  privateKey: "--private-key",
  guid: "--guid",
  cartToken: "--cart-token",
  authToken: "--auth-token",
  sessionId: "--session-id",
  issuer: "--issuer",
  audience: "--audience",
  out: "--out",
  json: "--json",
  baseUrl: "--base-url",
  authUrl: "--auth-url",
  idempotencyKey: "--idempotency-key",
};

/** cac's options with every text option that mri turned into a number restored as typed. */
function restoreText<T extends object>(flags: T, args: readonly string[]): T {
  const restored = { ...flags } as Record<string, unknown>;
  for (const [key, flag] of Object.entries(TEXT_OPTIONS)) {
    if (typeof restored[key] !== "number") continue;
    restored[key] = rawOptionValue(args, flag) ?? String(restored[key]);
  }
  return restored as T;
}

function optionalText(value: unknown, flag: string): string | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value)) throw new UsageError(`${flag} given more than once`);
  if (typeof value === "boolean") throw new UsageError(`${flag} needs a value`);
  return String(value);
}

/** A positive integer flag (`--slow-ms 2000`), or the default. */
export function positiveInteger(value: unknown, flag: string, fallback: number): number {
  const text = optionalText(value, flag);
  if (text === undefined) return fallback;
  const number = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(number) || number <= 0) {
    throw new UsageError(`${flag} must be a positive whole number of milliseconds, got "${text}"`);
  }
  return number;
}

/** The base URL: http(s) only. */
export function baseUrl(value: unknown): string {
  const text = optionalText(value, "--url");
  if (text === undefined || text.trim() === "") {
    throw new UsageError("--url is required: the base URL the callbacks are mounted under");
  }
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new UsageError(`--url is not a URL: "${text}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`--url must be http or https, got ${url.protocol}`);
  }
  return url.href;
}

/** Reads a PEM private key (PKCS#8 or PKCS#1 RSA) for RS256 signing. */
export async function loadPrivateKey(file: string): Promise<CryptoKey> {
  let pem: string;
  try {
    pem = await readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`cannot read --private-key ${file}${code ? ` (${code})` : ""}`);
  }
  try {
    const key = createPrivateKey(pem);
    if (key.asymmetricKeyType !== "rsa") throw new Error("not RSA");
    const pkcs8 = key.export({ type: "pkcs8", format: "pem" }).toString();
    return await importPKCS8(pkcs8, "RS256");
  } catch {
    throw new UsageError(
      `--private-key ${file} is not an RSA private key in PEM (e.g. from "${PROGRAM} keys")`,
    );
  }
}

/** `simulate <callback|all>`: sends, prints the table, returns the exit code. */
export async function simulateCommand(
  spec: string,
  flags: SimulateFlags,
  io: CliIo,
  colors: Colors,
  errorColors: Colors = colors,
): Promise<number> {
  const callbacks = resolveCallbacks(String(spec));
  const url = baseUrl(flags.url);
  const slowMs = positiveInteger(flags.slowMs, "--slow-ms", DEFAULT_SLOW_MS);
  const timeoutMs = positiveInteger(flags.timeoutMs, "--timeout-ms", DEFAULT_TIMEOUT_MS);
  const keyFile = optionalText(flags.privateKey, "--private-key");
  const merchantGuid = optionalText(flags.guid, "--guid");
  const cartToken = optionalText(flags.cartToken, "--cart-token");
  const authToken = optionalText(flags.authToken, "--auth-token");
  const sessionId = optionalText(flags.sessionId, "--session-id");
  const issuer = optionalText(flags.issuer, "--issuer");
  const audience = optionalText(flags.audience, "--audience");
  const privateKey = keyFile === undefined ? undefined : await loadPrivateKey(keyFile);

  const count = `${callbacks.length} callback${callbacks.length === 1 ? "" : "s"}`;
  io.stdout.write(`Simulating ${count} against ${colors.bold(url)}\n`);
  if (privateKey === undefined) {
    io.stderr.write(
      errorColors.yellow(
        "No --private-key: requests carry no Authorization header, so a merchant that verifies tokens answers 401.\n",
      ),
    );
  }
  const rows = await simulate({
    url,
    callbacks,
    privateKey,
    merchantGuid,
    cartToken,
    authToken,
    sessionId,
    issuer,
    audience,
    slowMs,
    timeoutMs,
  });
  io.stdout.write(`\n${renderReport(rows, colors)}\n${renderSummary(rows, colors)}\n`);
  return exitCodeOf(rows);
}

/** `keys`: writes the pair, prints the paths. */
export async function keysCommand(
  flags: { readonly out?: unknown; readonly force?: unknown },
  io: CliIo,
  colors: Colors,
): Promise<number> {
  const out = optionalText(flags.out, "--out") ?? ".";
  const written = await writeTestKeys(out, { force: flags.force === true });
  io.stdout.write(
    `${colors.green("Wrote")} ${written.publicKeyPath}\n` +
      `${colors.green("Wrote")} ${written.privateKeyPath} (mode 0600)\n\n` +
      "Configure the public key as the service's test key (createAuth: jwt.keys.test), then:\n" +
      `  ${PROGRAM} simulate all --url <base> --private-key ${written.privateKeyPath}\n`,
  );
  return 0;
}

function isCacError(error: unknown): boolean {
  return error instanceof Error && error.name === "CACError";
}

/**
 * Runs the CLI on the arguments after the program name and returns the exit code: 0 success,
 * 1 a malformed answer or failed request (simulate) or an unexpected error, 2 a usage error.
 */
export async function runCli(args: readonly string[], io: CliIo): Promise<number> {
  const colors = createColors({ isTTY: io.stdout.isTTY, env: io.env });
  const errorColors = createColors({ isTTY: io.stderr.isTTY, env: io.env });
  const cli = cac(PROGRAM);
  let pending: Promise<number> | undefined;

  cli
    .command(
      "keys",
      "Write a test key pair: service-test-public.pem and service-test-private.pem (0600)",
    )
    .option("--out <dir>", "Directory to write into (created if missing)", { default: "." })
    .option("--force", "Replace an existing pair")
    .action((flags) => {
      pending = keysCommand(restoreText(flags, args), io, colors);
    });

  cli
    .command(
      "simulate <callback>",
      `Send callbacks to a running merchant endpoint and check every answer`,
    )
    .usage("simulate <callback|all> --url <base> [options]")
    .option(
      "--url <base>",
      "Base URL the callbacks are mounted under: each goes to <base>/<CallbackName>",
    )
    .option(
      "--private-key <file>",
      "PEM private key to sign the tokens (without it: no Authorization header)",
    )
    .option("--guid <guid>", "Merchant GUID written into the payloads")
    .option(
      "--cart-token <token>",
      "A cart token your endpoint knows (merchantCartToken, CartToken)",
    )
    .option(
      "--auth-token <token>",
      "A shopper session token your endpoint knows (AuthToken of the gift-card callbacks)",
    )
    .option("--session-id <id>", "The session id that goes with it (SessionId)")
    .option("--issuer <iss>", "iss claim of the tokens")
    .option("--audience <aud>", "aud claim of the tokens")
    .option("--slow-ms <n>", `Answers slower than this are a problem (default: ${DEFAULT_SLOW_MS})`)
    .option(
      "--timeout-ms <n>",
      `Give up on an answer after this long (default: ${DEFAULT_TIMEOUT_MS})`,
    )
    .example(
      `  ${PROGRAM} simulate all --url http://127.0.0.1:3000/crossborder --private-key service-test-private.pem`,
    )
    .example(
      `  ${PROGRAM} simulate SendOrderToMerchant,UpdateOrderStatus --url https://shop.example/crossborder`,
    )
    .example(`  "all" sends: ${ALL_CALLBACKS.join(", ")}`)
    .action((callback: string, flags: SimulateFlags) => {
      pending = simulateCommand(callback, restoreText(flags, args), io, colors, errorColors);
    });

  // The logic of `service` lives in ./service.ts; only its flags are declared here.
  cli
    .command("service <operation>", "Call an operation of the service and print the typed result")
    .usage("service <operation|list> --json <file> --base-url <url>")
    .option("--json <file>", "The operation's request, as JSON")
    .option("--base-url <url>", `The service's base address (or ${SERVICE_ENV.baseUrl})`)
    .option("--auth-url <url>", `The token operation's base address (or ${SERVICE_ENV.authUrl})`)
    .option("--timeout-ms <n>", "Per attempt (default: 15000)")
    .option(
      "--idempotency-key <uuid>",
      "The billing summary's Idempotency-Key (default: a new one)",
    )
    .option("--verbose", "Print each attempt (redacted) to stderr")
    .example(`  ${PROGRAM} service list`)
    .example(
      `  ${SERVICE_ENV.merchantGuid}=… ${PROGRAM} service VoidParcel --json void.json --base-url https://service.example`,
    )
    .example(
      `  Credentials for the operations that send a token: ${SERVICE_ENV.userName}, ${SERVICE_ENV.password}`,
    )
    .action((operation: string, flags: ServiceCommandOptions) => {
      pending = serviceCommand(String(operation), restoreText(flags, args), io);
    });

  cli.help();
  cli.version(version);

  try {
    cli.parse(["node", PROGRAM, ...args], { run: false });
    if (cli.options.help || cli.options.version) return 0;
    if (!cli.matchedCommand) {
      const name = cli.args[0];
      io.stderr.write(
        `${errorColors.red("error")} ${name === undefined ? "no command given" : `unknown command "${name}"`}; run ${PROGRAM} --help\n`,
      );
      return 2;
    }
    await cli.runMatchedCommand();
    return await (pending ?? Promise.resolve(0));
  } catch (error) {
    if (error instanceof UsageError || isCacError(error)) {
      io.stderr.write(`${errorColors.red("error")} ${(error as Error).message}\n`);
      return 2;
    }
    io.stderr.write(
      `${errorColors.red("error")} ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return 1;
  }
}
