import { createPrivateKey } from "node:crypto";
import { readFile } from "node:fs/promises";
import { importPKCS8 } from "jose";
import { version } from "../../package.json";
import { createRedactor, redactCardNumbers, textOf } from "../core/redact.js";
import { MAX_TIMEOUT_MS } from "../core/timers.js";
import type { CallbackName } from "../core/types.js";
import { DEFAULT_SLOW_MS, payloadCardSecrets } from "../testing/check.js";
import { samplePayload } from "../testing/payload.js";
import { maskedUrl } from "../testing/send.js";
import { type ParsedCommand, parseCommand, renderHelp } from "./args.js";
import { type Colors, createColors } from "./colors.js";
import { readJsonFile, UsageError } from "./errors.js";
import { writeTestKeys } from "./keys.js";
import { SERVICE_ENV, serviceCommand } from "./service.js";
import {
  ALL_CALLBACKS,
  applySet,
  exitCodeOf,
  jsonRow,
  parseCartMethod,
  parseExpectation,
  parseHeaders,
  parsePaths,
  ReportWriter,
  renderHints,
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

/**
 * A positive integer flag (`--slow-ms 2000`) up to `max`, or the default. A flag that becomes a
 * timer's delay (`--timeout-ms`) passes `MAX_TIMEOUT_MS`.
 */
export function positiveInteger(
  value: string | undefined,
  flag: string,
  fallback: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(number) || number <= 0 || number > max) {
    const bound = max < Number.MAX_SAFE_INTEGER ? ` (at most ${max})` : "";
    throw new UsageError(
      `${flag} must be a positive whole number of milliseconds${bound}, got "${value}"`,
    );
  }
  return number;
}

/** The most seconds `--expires-in` takes either way: ten years. */
const MAX_LIFETIME_SECONDS = 10 * 366 * 24 * 3600;

/**
 * The highest expired lifetime `--expires-in` takes: a token expired by less is still accepted by
 * a verifier that allows clock skew (the library's `verifyJwt` allows 60 s; .NET's default is
 * 300 s), so an expired-token test would fail a correct endpoint. 0 too: `exp == iat == now` is
 * expired for a verifier with no tolerance and valid for one with some.
 */
const MAX_EXPIRED_LIFETIME_SECONDS = -300;

/**
 * `--expires-in`: the tokens' lifetime in whole seconds (`exp` = `iat` + it, `iat` now), negative
 * for an already expired token: `-3600` is past any verifier's clock tolerance; 0 and
 * -1 … -299 are refused (see {@link MAX_EXPIRED_LIFETIME_SECONDS}). Absent, undefined
 * (the default lifetime, 300 s). It needs a key: without one no token is sent, and an
 * expired-token test would pass for the wrong reason (no token at all).
 */
export function lifetimeSeconds(value: string | undefined, signing: boolean): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value.trim());
  if (
    !/^[+-]?\d+$/.test(value.trim()) ||
    !Number.isSafeInteger(number) ||
    Math.abs(number) > MAX_LIFETIME_SECONDS
  ) {
    throw new UsageError(
      `--expires-in must be a whole number of seconds (at most ${MAX_LIFETIME_SECONDS} either way; negative: an already expired token), got "${value}"`,
    );
  }
  if (number <= 0 && number > MAX_EXPIRED_LIFETIME_SECONDS) {
    throw new UsageError(
      `--expires-in ${value.trim()} is within a verifier's clock tolerance (the library allows 60 s of skew, others up to 300 s), so a correct endpoint may still accept the token: for an expired token use ${MAX_EXPIRED_LIFETIME_SECONDS} or less (--expires-in -3600); for a valid one, a positive lifetime`,
    );
  }
  if (!signing) {
    throw new UsageError(
      "--expires-in needs --private-key: without a key no token is sent, so its lifetime is not tested",
    );
  }
  return number;
}

/** The base URL: http(s) only. */
export function baseUrl(value: string | undefined): string {
  if (value === undefined || value.trim() === "") {
    throw new UsageError("--url is required: the base URL the callbacks are mounted under");
  }
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    // Its query may hold a urlSecret: masked as everywhere the CLI prints the URL (review final2).
    throw new UsageError(`--url is not a URL: "${value.replace(/\?[\s\S]*/, "?***")}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`--url must be http or https, got ${url.protocol}`);
  }
  // fetch refuses such a URL, and the banner would print the password.
  if (url.username !== "" || url.password !== "") {
    throw new UsageError(
      "--url must not carry a user name or password: the service authenticates with its token",
    );
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

/**
 * `--guid` as typed; absent, undefined (the samples' GUID). Empty or blank is a usage error: no
 * merchant GUID is (createAuth refuses one), and it is what `--guid "$MERCHANT_GUID"` gives in a
 * terminal where the variable is unset, which would send every call to a 401.
 */
function guidOf(value: string | undefined): string | undefined {
  if (value !== undefined && value.trim() === "") {
    throw new UsageError(
      '--guid is empty: give the merchant GUID your endpoint checks (an unset variable, e.g. "$MERCHANT_GUID" in a terminal where it is not exported?), or leave --guid out to send the samples\' GUID',
    );
  }
  return value;
}

/**
 * `--header-file <file>`, repeated: headers read from files, one `Name: value` per line; blank
 * lines and lines starting with `#` skipped. A secret in a file is not in the process list or the
 * shell history, as a `--header` value is (review cli-3). No message quotes a line: it may be the
 * secret.
 */
export async function readHeaderFiles(files: readonly string[]): Promise<Record<string, string>> {
  const headers: Record<string, string> = {};
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new UsageError(`cannot read --header-file ${file}${code ? ` (${code})` : ""}`);
    }
    for (const [index, line] of text
      .replace(/^\uFEFF/, "")
      .split(/\r?\n/)
      .entries()) {
      if (line.trim() === "" || line.trimStart().startsWith("#")) continue;
      try {
        Object.assign(headers, parseHeaders([line]));
      } catch (error) {
        if (!(error instanceof UsageError)) throw error;
        throw new UsageError(
          `--header-file ${file}, line ${index + 1}: ${error.message.replace(/^--header:? ?/, "")}`,
        );
      }
    }
  }
  return headers;
}

/** The payload of each callback: its sample, or `--payload`, then every `--set`. */
async function payloadsOf(
  callbacks: readonly CallbackName[],
  file: string | undefined,
  sets: readonly string[],
): Promise<Partial<Record<CallbackName, unknown>>> {
  if (file !== undefined && callbacks.length !== 1) {
    throw new UsageError("--payload replaces the payload of one callback: name one, not several");
  }
  const fromFile = file === undefined ? undefined : await readJsonFile(file, "--payload");
  const payloads: Partial<Record<CallbackName, unknown>> = {};
  // None given: simulate sends the samples, and the captured forms after them.
  if (fromFile === undefined && sets.length === 0) return payloads;
  for (const callback of callbacks) {
    let payload: unknown = fromFile ?? samplePayload(callback);
    for (const assignment of sets) payload = applySet(payload, assignment);
    payloads[callback] = payload;
  }
  return payloads;
}

/** `simulate <callback|all>`: sends, streams one line per answer, returns the exit code. */
export async function simulateCommand(
  command: ParsedCommand,
  io: CliIo,
  colors: Colors,
  errorColors: Colors = colors,
): Promise<number> {
  const { values } = command;
  const text = (name: string) => command.text(name);
  const callbacks = resolveCallbacks(command.positionals[0] ?? "");
  const url = baseUrl(text("url"));
  const slowMs = positiveInteger(text("slow-ms"), "--slow-ms", DEFAULT_SLOW_MS);
  const timeoutMs = positiveInteger(
    text("timeout-ms"),
    "--timeout-ms",
    DEFAULT_TIMEOUT_MS,
    MAX_TIMEOUT_MS,
  );
  if (text("slow-ms") !== undefined && timeoutMs < slowMs) {
    throw new UsageError(
      `--timeout-ms ${timeoutMs} is below --slow-ms ${slowMs}: an answer slower than --slow-ms is given up on first, so the slow limit never applies; raise --timeout-ms or lower --slow-ms`,
    );
  }
  const expect = parseExpectation(command.list("expect"));
  const cartMethod = parseCartMethod(text("cart-method"));
  const paths = parsePaths(command.list("path"));
  const headers = {
    ...(await readHeaderFiles(command.list("header-file"))),
    ...parseHeaders(command.list("header")),
  };
  const json = values.json === true;
  const showBody = values["show-body"] === true;
  const payloads = await payloadsOf(callbacks, text("payload"), command.list("set"));
  const merchantGuid = guidOf(text("guid"));
  const keyFile = text("private-key");
  const expiresInSeconds = lifetimeSeconds(text("expires-in"), keyFile !== undefined);
  const privateKey = keyFile === undefined ? undefined : await loadPrivateKey(keyFile);
  // An unexpected error from here on may quote what a call sent (a failure quoting the body):
  // printed masked by the card data of every payload sent (the captured forms carry none).
  const sent = createRedactor(
    callbacks.flatMap((callback) =>
      payloadCardSecrets(payloads[callback] ?? samplePayload(callback)),
    ),
  );
  try {
    // With --json, stdout carries the JSON only; progress goes to a terminal's stderr.
    const progress = json ? (io.stderr.isTTY ? io.stderr : undefined) : io.stdout;
    const progressColors = json ? errorColors : colors;
    const count = `${callbacks.length} callback${callbacks.length === 1 ? "" : "s"}`;
    // The --url's query values (a urlSecret) are never printed (review second-obs-2).
    const shownUrl = maskedUrl(url);
    progress?.write(`Simulating ${count} against ${progressColors.bold(shownUrl)}\n`);
    if (privateKey === undefined) {
      io.stderr.write(
        errorColors.yellow(
          "No --private-key: requests carry no Authorization header, so a merchant that verifies tokens answers 401.\n",
        ),
      );
    }
    const report =
      progress === undefined
        ? undefined
        : new ReportWriter(callbacks, (line) => progress.write(line), progressColors, showBody);
    const rows = await simulate({
      url,
      callbacks,
      privateKey,
      merchantGuid,
      cartToken: text("cart-token"),
      authToken: text("auth-token"),
      sessionId: text("session-id"),
      issuer: text("issuer"),
      audience: text("audience"),
      expiresInSeconds,
      slowMs,
      timeoutMs,
      expect,
      cartMethod,
      paths,
      headers,
      payloads,
      onSend: (callback) => report?.sending(callback),
      onRow: (row) => report?.answered(row),
    });
    const code = exitCodeOf(rows);
    if (json) {
      const results = rows.map((row) => jsonRow(row, showBody));
      const passed = results.filter((row) => row.ok === true).length;
      const output = {
        url: shownUrl,
        ok: code === 0,
        passed,
        failed: rows.length - passed,
        results,
      };
      io.stdout.write(`${JSON.stringify(output, null, 2)}\n`);
      if (progress !== undefined) progress.write(`${renderSummary(rows, progressColors)}\n`);
      return code;
    }
    io.stdout.write(`\n${renderSummary(rows, colors)}\n`);
    // The forged-call checks, as README "The simulator" runs them (review cli-4).
    const target = `npx ${PROGRAM} simulate ${shellWord(command.positionals[0] ?? "all")} --url ${shellWord(shownUrl)}`;
    const hintContext = {
      forgedCheck: `${target} --private-key <another key> --expect 401`,
      expiredCheck:
        privateKey === undefined
          ? undefined
          : `${target} --private-key ${shellWord(keyFile ?? "")}${merchantGuid === undefined ? "" : ` --guid ${shellWord(merchantGuid)}`} --expires-in -3600 --expect 401`,
    };
    for (const hint of renderHints(rows, expect, hintContext)) {
      io.stdout.write(`${colors.dim(hint)}\n`);
    }
    return code;
  } catch (error) {
    io.stderr.write(`${errorColors.red("error")} ${unexpectedErrorText(error, sent)}\n`);
    return 1;
  }
}

/**
 * `text` as one word of a command line for the platform's usual shell. Elsewhere than Windows, a
 * POSIX shell's: as is when nothing in it is special, else in '…'. On Windows, cmd.exe's (also
 * read right by PowerShell): as is when nothing in it is special, else in "…" — cmd.exe passes
 * single quotes on as part of the word. A Windows path holds no `"`; a `%NAME%` in it would still
 * expand in cmd.exe, which no quoting there prevents.
 */
export function shellWord(text: string, platform: NodeJS.Platform = process.platform): string {
  if (platform === "win32") return /^[\w@+:./\\~-]+$/.test(text) ? text : `"${text}"`;
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

/**
 * The `--guid` word of the line `keys` prints. README step 4 sets MERCHANT_GUID only for the
 * server's command and step 5 runs the simulator in a second terminal, where it is unset: the
 * shell (POSIX sh, bash, zsh) then stops with this message instead of sending an empty GUID.
 */
const GUID_WORD = `"\${MERCHANT_GUID:?set MERCHANT_GUID to the GUID your endpoint checks}"`;

/**
 * `keys`: writes the pair, prints the paths and the whole `simulate` line to run next, with the
 * README's URL and `--guid`: every server the README shows refuses a call without its merchant
 * GUID (401), so a line without it fails.
 */
export async function keysCommand(
  command: ParsedCommand,
  io: CliIo,
  colors: Colors,
): Promise<number> {
  const out = command.text("out") ?? ".";
  const written = await writeTestKeys(out, { force: command.values.force === true });
  io.stdout.write(
    `${colors.green("Wrote")} ${written.publicKeyPath}\n` +
      `${colors.green("Wrote")} ${written.privateKeyPath} (mode 0600)\n\n` +
      "Configure the public key as the service's test key (createAuth: jwt.keys.test), start your\n" +
      "endpoint, then run (--url where it answers, MERCHANT_GUID the merchant GUID it checks):\n" +
      `  npx ${PROGRAM} simulate all --url http://127.0.0.1:3000/crossborder --private-key ${shellWord(written.privateKeyPath)} --guid ${GUID_WORD}\n`,
  );
  return 0;
}

/**
 * Runs the CLI on the arguments after the program name and returns the exit code: 0 success,
 * 1 an answer not as expected, a request without an answer, or an unexpected error, 2 a usage
 * error (`service` has its own codes, see its help).
 */
export async function runCli(args: readonly string[], io: CliIo): Promise<number> {
  const colors = createColors({ isTTY: io.stdout.isTTY, env: io.env });
  const errorColors = createColors({ isTTY: io.stderr.isTTY, env: io.env });
  try {
    const parsed = parseCommand(args);
    if (parsed.kind === "version") {
      io.stdout.write(`${PROGRAM} ${version}\n`);
      return 0;
    }
    if (parsed.kind === "help") {
      io.stdout.write(renderHelp(parsed.command, { version, allCallbacks: ALL_CALLBACKS }));
      return 0;
    }
    const command = parsed.command;
    switch (command.name) {
      case "keys":
        return await keysCommand(command, io, colors);
      case "simulate":
        return await simulateCommand(command, io, colors, errorColors);
      case "service":
        return await serviceCommand(
          command.positionals[0] ?? "",
          {
            json: command.text("json"),
            baseUrl: command.text("base-url"),
            authUrl: command.text("auth-url"),
            timeoutMs: command.text("timeout-ms"),
            idempotencyKey: command.text("idempotency-key"),
            verbose: command.values.verbose === true,
          },
          io,
        );
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`${errorColors.red("error")} ${redactCardNumbers(error.message)}\n`);
      return 2;
    }
    io.stderr.write(`${errorColors.red("error")} ${unexpectedErrorText(error)}\n`);
    return 1;
  }
}

/**
 * An unexpected error as printed: its name and message with card numbers masked (and, given
 * `redact`, what it masks: `simulate`'s card data sent), then the frames of its stack only (file
 * and line). The stack's own first lines repeat the message as written, which may quote a
 * payload: they are left out.
 */
function unexpectedErrorText(
  error: unknown,
  redact: (text: string) => string = redactCardNumbers,
): string {
  if (!(error instanceof Error)) return redact(textOf(error));
  const head = redact(`${textOf(error.name)}: ${textOf(error.message)}`);
  const stack = typeof error.stack === "string" ? error.stack : "";
  const frames = stack.split("\n").filter((line) => /^\s+at /.test(line));
  return [head, ...frames.map(redact)].join("\n");
}

export { SERVICE_ENV };
