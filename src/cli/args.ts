/**
 * The command line, read with Node's `util.parseArgs`: values stay the text typed (`--guid 007`
 * is "007"), and a mistake is reported as typed, with the nearest option suggested.
 */
import { parseArgs } from "node:util";
import { closest } from "../auth/validate.js";
import { DEFAULT_SLOW_MS } from "../testing/check.js";
import { UsageError } from "./errors.js";

const PROGRAM = "crossborder-callbacks";

interface OptionSpec {
  readonly type: "string" | "boolean";
  readonly multiple?: boolean;
  /** How the value is named in the help (`<file>`). */
  readonly value?: string;
  readonly description: string;
}

interface CommandSpec {
  readonly usage: string;
  readonly summary: string;
  /** The positional argument the command requires, if any. */
  readonly positional?: string;
  readonly options: Readonly<Record<string, OptionSpec>>;
  readonly examples: readonly string[];
  readonly notes?: readonly string[];
}

export type CommandName = "keys" | "simulate" | "service";

export const COMMANDS: Readonly<Record<CommandName, CommandSpec>> = {
  keys: {
    usage: "keys [--out <dir>] [--force]",
    summary:
      "Write a test key pair: service-test-public.pem and service-test-private.pem (mode 0600)",
    options: {
      out: { type: "string", value: "<dir>", description: "Directory to write into (default: .)" },
      force: { type: "boolean", description: "Replace an existing pair" },
    },
    examples: [`${PROGRAM} keys --out ./keys`],
  },
  simulate: {
    usage: "simulate <callback|all> --url <base> [options]",
    summary:
      "Send callbacks to a running merchant endpoint, as the service does, and check each answer",
    positional: "<callback|all>",
    options: {
      url: {
        type: "string",
        value: "<base>",
        description: "Base URL the callbacks are mounted under: each goes to <base>/<CallbackName>",
      },
      "private-key": {
        type: "string",
        value: "<file>",
        description: "PEM private key to sign the tokens (without it: no Authorization header)",
      },
      guid: {
        type: "string",
        value: "<guid>",
        description: "Merchant GUID written into the payloads",
      },
      "cart-token": {
        type: "string",
        value: "<token>",
        description: "A cart your endpoint knows (merchantCartToken, CartToken, CartId)",
      },
      "auth-token": {
        type: "string",
        value: "<token>",
        description:
          "A shopper session token your endpoint knows (AuthToken of the gift-card callbacks)",
      },
      "session-id": {
        type: "string",
        value: "<id>",
        description: "The session id that goes with it (SessionId)",
      },
      "cart-method": {
        type: "string",
        value: "<GET|POST>",
        description:
          "How GetCheckoutCartInfo is sent: GET with its parameters in the query (default), or POST with a JSON body",
      },
      path: {
        type: "string",
        multiple: true,
        value: "<Callback=/path>",
        description:
          "A callback mounted elsewhere under --url (the router's paths option): UpdateParcelDispatch=/parcels",
      },
      header: {
        type: "string",
        multiple: true,
        value: "<Name: value>",
        description:
          "A header sent with every call (a headerSecret, Basic credentials); never printed, but visible to other local users in the process list: prefer --header-file for a secret",
      },
      "header-file": {
        type: "string",
        multiple: true,
        value: "<file>",
        description:
          'Headers sent with every call, read from a file: one "Name: value" per line (blank lines and lines starting with # skipped); masked as --header',
      },
      expect: {
        type: "string",
        multiple: true,
        value: "<what>",
        description:
          "What the answers must be: a status (401) and/or refusal; default a 2xx success",
      },
      payload: {
        type: "string",
        value: "<file>",
        description: "Send this JSON instead of the sample payload (one callback only)",
      },
      set: {
        type: "string",
        multiple: true,
        value: "<path=value>",
        description: "Change the payload: OrderId=GE-1 (text), Products.0.Quantity:=2 (JSON)",
      },
      json: { type: "boolean", description: "Print the results as JSON on stdout" },
      "show-body": {
        type: "boolean",
        description:
          "Print the body of each failed answer (card numbers, header values and credentials masked)",
      },
      issuer: { type: "string", value: "<iss>", description: "iss claim of the tokens" },
      audience: { type: "string", value: "<aud>", description: "aud claim of the tokens" },
      "expires-in": {
        type: "string",
        value: "<seconds>",
        description:
          "Lifetime of the tokens, from iat to exp (default: 300); negative for an already expired token, past the verifier's clock tolerance (the library's is 60 s): -300 or less, e.g. --expires-in -3600; 0 to -299 are refused",
      },
      "slow-ms": {
        type: "string",
        value: "<n>",
        description: `Answers slower than this are a problem (default: ${DEFAULT_SLOW_MS})`,
      },
      "timeout-ms": {
        type: "string",
        value: "<n>",
        description: "Give up on an answer after this long (default: 10000)",
      },
    },
    examples: [
      `${PROGRAM} simulate all --url http://127.0.0.1:3000/crossborder --private-key keys/service-test-private.pem --guid "\${MERCHANT_GUID:?set MERCHANT_GUID to the GUID your endpoint checks}"`,
      `${PROGRAM} simulate SendOrderToMerchant --url … --private-key … --set OrderId=GE-42 --show-body`,
      `${PROGRAM} simulate all --url … --private-key stranger.pem --expect 401   # a forged call is refused`,
      `${PROGRAM} simulate all --url … --private-key … --guid … --expires-in -3600 --expect 401   # an expired token is refused`,
      `${PROGRAM} simulate GetCheckoutCartInfo --url … --private-key … --cart-token nope --expect refusal`,
      `${PROGRAM} simulate all --url … --private-key … --cart-method POST --path UpdateParcelDispatch=/parcels --header "X-Shop-Secret: $SECRET"`,
    ],
    notes: [
      "Exit code 0 when every answer is as expected; 1 when any is not (a non-2xx status, a refusal, an HTML page, a malformed answer) or gets no answer; 2 for a usage error.",
      "An option that takes one value may be given once; those marked … may be repeated.",
    ],
  },
  service: {
    usage: "service <operation|list> --json <file> --base-url <url>",
    summary: "Call an operation of the service and print the typed result",
    positional: "<operation|list>",
    options: {
      json: { type: "string", value: "<file>", description: "The operation's request, as JSON" },
      "base-url": {
        type: "string",
        value: "<url>",
        description: "The service's base address (or CROSSBORDER_BASE_URL)",
      },
      "auth-url": {
        type: "string",
        value: "<url>",
        description: "The token operation's base address (or CROSSBORDER_AUTH_URL)",
      },
      "timeout-ms": { type: "string", value: "<n>", description: "Per attempt (default: 15000)" },
      "idempotency-key": {
        type: "string",
        value: "<uuid>",
        description: "The billing summary's Idempotency-Key (default: a new one)",
      },
      verbose: { type: "boolean", description: "Print each attempt (redacted) to stderr" },
    },
    examples: [
      `${PROGRAM} service list`,
      `CROSSBORDER_MERCHANT_GUID=… ${PROGRAM} service VoidParcel --json void.json --base-url https://service.example`,
    ],
    notes: [
      "Credentials for the operations that send a token: CROSSBORDER_USER_NAME, CROSSBORDER_PASSWORD.",
      "Exit code 0 the result, 1 the service refused or failed the call, 2 a usage error, 3 no usable answer.",
    ],
  },
};

/** A parsed command: its options as typed, and its positional argument. */
export interface ParsedCommand {
  readonly name: CommandName;
  readonly values: Readonly<Record<string, string | boolean | (string | boolean)[] | undefined>>;
  readonly positionals: readonly string[];
  /** A text option's value (an option taking one value is given at most once). */
  text(name: string): string | undefined;
  /** A repeatable option's values. */
  list(name: string): string[];
}

export type Parsed =
  | { readonly kind: "help"; readonly command?: CommandName | undefined }
  | { readonly kind: "version" }
  | { readonly kind: "run"; readonly command: ParsedCommand };

function isCommand(name: string | undefined): name is CommandName {
  return name !== undefined && Object.hasOwn(COMMANDS, name);
}

function unknownOption(command: CommandName, typed: string): UsageError {
  const name = typed.replace(/^-+/, "").split("=")[0] ?? "";
  const elsewhere = (Object.keys(COMMANDS) as CommandName[]).find(
    (other) => other !== command && Object.hasOwn(COMMANDS[other].options, name),
  );
  if (elsewhere !== undefined) {
    return new UsageError(
      `unknown option ${typed} for ${command} (--${name} is an option of ${elsewhere}); run ${PROGRAM} ${command} --help`,
    );
  }
  const suggestion = closest(name, Object.keys(COMMANDS[command].options));
  if (suggestion !== undefined) {
    return new UsageError(`unknown option ${typed} for ${command}; did you mean --${suggestion}?`);
  }
  return new UsageError(`unknown option ${typed} for ${command}; run ${PROGRAM} ${command} --help`);
}

/** The option as typed in an error of parseArgs (`'--privat-key'`). */
function quotedOption(message: string): string | undefined {
  return /'(-[^' ]+)/.exec(message)?.[1];
}

/** The options whose value may be a negative number (`--expires-in -3600`). */
const NEGATIVE_VALUES: ReadonlySet<string> = new Set(["expires-in"]);

/**
 * The arguments with `--expires-in -3600` written `--expires-in=-3600`: parseArgs takes a value
 * starting with "-" for an option and refuses it as ambiguous; a negative number is never one.
 */
function joinNegativeValues(args: readonly string[], spec: CommandSpec): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const next = args[i + 1];
    const name = arg.startsWith("--") ? arg.slice(2) : "";
    if (
      NEGATIVE_VALUES.has(name) &&
      Object.hasOwn(spec.options, name) &&
      next !== undefined &&
      /^-\d/.test(next)
    ) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

/**
 * The first option that takes one value (not `multiple`) given more than once: which of two
 * `--url`s was meant is not for the CLI to guess.
 */
function givenTwice(
  tokens: readonly { readonly kind: string; readonly name?: string }[],
  spec: CommandSpec,
): string | undefined {
  const seen = new Set<string>();
  for (const token of tokens) {
    if (token.kind !== "option" || token.name === undefined || token.name === "help") continue;
    if (spec.options[token.name]?.multiple === true) continue;
    if (seen.has(token.name)) return token.name;
    seen.add(token.name);
  }
  return undefined;
}

/** Reads the arguments after the program name. Throws `UsageError` for a mistake. */
export function parseCommand(args: readonly string[]): Parsed {
  const [first, ...rest] = args;
  if (first === undefined) throw new UsageError(`no command given; run ${PROGRAM} --help`);
  if (first === "--help" || first === "-h" || first === "help") {
    const topic = rest[0];
    return { kind: "help", command: isCommand(topic) ? topic : undefined };
  }
  if (first === "--version" || first === "-v") return { kind: "version" };
  if (!isCommand(first)) {
    if (first.startsWith("-"))
      throw new UsageError(`unknown option ${first}; run ${PROGRAM} --help`);
    const suggestion = closest(first, Object.keys(COMMANDS));
    throw new UsageError(
      `unknown command "${first}"${suggestion ? `; did you mean ${suggestion}?` : ""} (run ${PROGRAM} --help)`,
    );
  }
  const spec = COMMANDS[first];
  const options: Record<
    string,
    { type: "string" | "boolean"; multiple?: boolean; short?: string }
  > = {
    help: { type: "boolean", short: "h" },
  };
  for (const [name, option] of Object.entries(spec.options)) {
    options[name] = { type: option.type, ...(option.multiple ? { multiple: true } : {}) };
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: joinNegativeValues(rest, spec),
      options,
      allowPositionals: true,
      strict: true,
      tokens: true,
    });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const message = error instanceof Error ? error.message : String(error);
    const typed = quotedOption(message);
    if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && typed !== undefined) {
      throw unknownOption(first, typed);
    }
    if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && typed !== undefined) {
      const option = typed.replace(/^-+/, "");
      throw new UsageError(
        spec.options[option]?.type === "boolean"
          ? `${typed} takes no value`
          : `${typed} needs a value (${typed} ${spec.options[option]?.value ?? "<value>"})`,
      );
    }
    throw new UsageError(message);
  }
  const values = parsed.values as ParsedCommand["values"];
  if (values.help === true) return { kind: "help", command: first };
  const twice = givenTwice(parsed.tokens ?? [], spec);
  if (twice !== undefined) {
    throw new UsageError(
      `--${twice} given twice: it takes one value (the options marked … in ${PROGRAM} ${first} --help may be repeated)`,
    );
  }
  const positionals = parsed.positionals;
  if (spec.positional === undefined && positionals.length > 0) {
    throw new UsageError(`${first} takes no argument, got "${positionals[0]}"`);
  }
  if (spec.positional !== undefined && positionals.length === 0) {
    throw new UsageError(`${first} needs ${spec.positional}: ${PROGRAM} ${spec.usage}`);
  }
  if (positionals.length > 1) {
    throw new UsageError(
      `${first} takes one ${spec.positional}, got ${positionals.map((p) => `"${p}"`).join(" ")} (separate several callbacks with commas)`,
    );
  }
  const command: ParsedCommand = {
    name: first,
    values,
    positionals,
    text(name) {
      const value = values[name];
      if (Array.isArray(value))
        return value.at(-1) === undefined ? undefined : String(value.at(-1));
      return typeof value === "string" ? value : undefined;
    },
    list(name) {
      const value = values[name];
      if (value === undefined || typeof value === "boolean") return [];
      return (Array.isArray(value) ? value : [value]).map(String);
    },
  };
  return { kind: "run", command };
}

function optionLines(spec: CommandSpec): string[] {
  const entries = Object.entries(spec.options).map(([name, option]) => [
    `--${name}${option.value ? ` ${option.value}` : ""}${option.multiple ? " …" : ""}`,
    option.description,
  ]);
  entries.push(["-h, --help", "Show this help"]);
  const width = Math.max(...entries.map(([flag]) => (flag ?? "").length));
  return entries.map(([flag, description]) => `  ${(flag ?? "").padEnd(width)}  ${description}`);
}

/** The help: the list of commands, or one command's options. */
export function renderHelp(
  command: CommandName | undefined,
  about: { readonly version: string; readonly allCallbacks: readonly string[] },
): string {
  if (command === undefined) {
    const names = Object.keys(COMMANDS) as CommandName[];
    const width = Math.max(...names.map((name) => COMMANDS[name].usage.length));
    return [
      `${PROGRAM} ${about.version}`,
      "",
      `Usage: ${PROGRAM} <command> [options]`,
      "",
      "Commands:",
      ...names.map((name) => `  ${COMMANDS[name].usage.padEnd(width)}  ${COMMANDS[name].summary}`),
      "",
      `Run ${PROGRAM} <command> --help for its options.`,
      "",
      "  -v, --version  the version",
      "",
    ].join("\n");
  }
  const spec = COMMANDS[command];
  const lines = [
    `Usage: ${PROGRAM} ${spec.usage}`,
    "",
    spec.summary,
    "",
    "Options:",
    ...optionLines(spec),
    "",
    "Examples:",
    ...spec.examples.map((example) => `  ${example}`),
  ];
  if (command === "simulate") {
    lines.push("", `"all" sends: ${about.allCallbacks.join(", ")}`);
  }
  for (const note of spec.notes ?? []) lines.push("", note);
  return `${lines.join("\n")}\n`;
}
