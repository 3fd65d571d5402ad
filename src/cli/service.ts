/**
 * `crossborder-callbacks service <operation> --json <file>`: calls one operation of the service
 * with the merchant GUID and credentials from the environment, and prints the typed result or the
 * typed error as JSON. Parsing of the command line stays in main.ts; this module takes the parsed
 * options and an io object and returns the exit code.
 */
import {
  type CachedToken,
  type CallOptions,
  createServiceClient,
  isServiceError,
  SERVICE_OPERATION_NAMES,
  type ServiceClient,
  type ServiceClientOptions,
  type ServiceError,
  type ServiceOperationName,
} from "../service/index.js";
import { OPERATIONS } from "../service/operations.js";
import { Redactor } from "../service/redact.js";
import { readJsonFile, UsageError } from "./errors.js";
import type { CliIo } from "./main.js";

/** The environment variables the command reads. */
export const SERVICE_ENV = {
  merchantGuid: "CROSSBORDER_MERCHANT_GUID",
  userName: "CROSSBORDER_USER_NAME",
  password: "CROSSBORDER_PASSWORD",
  baseUrl: "CROSSBORDER_BASE_URL",
  authUrl: "CROSSBORDER_AUTH_URL",
} as const;

/**
 * Exit codes: 0 the result (a billing summary that could not be calculated is a result too),
 * 1 the service refused or failed the call, 2 a usage error or a request refused before sending,
 * 3 no usable answer (network, timeout, 429, 5xx, an answer not in the documented shape).
 */
export const SERVICE_EXIT = { ok: 0, refused: 1, usage: 2, unavailable: 3 } as const;

/** The options of `service` as parsed from the command line (values as typed). */
export interface ServiceCommandOptions {
  readonly json?: unknown;
  readonly baseUrl?: unknown;
  readonly authUrl?: unknown;
  readonly timeoutMs?: unknown;
  readonly idempotencyKey?: unknown;
  readonly verbose?: unknown;
}

type Runner = (
  client: ServiceClient,
  input: never,
  options: CallOptions & { idempotencyKey?: string },
) => Promise<unknown>;

const RUNNERS: Record<ServiceOperationName, Runner> = {
  calculateBillingSummary: (c, input, options) => c.calculateBillingSummary(input, options),
  dispatchConsolidatedShipment: (c, input, options) =>
    c.dispatchConsolidatedShipment(input, options),
  getShippingDetailsExtended: (c, input, options) => c.getShippingDetailsExtended(input, options),
  voidParcel: (c, input, options) => c.voidParcel(input, options),
  updateParcelStatus: (c, input, options) => c.updateParcelStatus(input, options),
  saveProductsList: (c, input, options) => c.saveProductsList(input, options),
  async recentProductCountries(c, input, options) {
    const changes = [];
    for await (const change of c.recentProductCountries(input, options)) changes.push(change);
    return { changes, requestId: changes.at(-1)?.requestId };
  },
  locationByIp: (c, input, options) => c.locationByIp(input, options),
  vatCategoryCountries: (c, input, options) => c.vatCategoryCountries(input, options),
  getOrderRefunds: (c, input, options) => c.getOrderRefunds(input, options),
  createOrderRefund: (c, input, options) => c.createOrderRefund(input, options),
};

/** An operation by its method name or its name in the document, in any case. */
export function resolveOperation(name: string): ServiceOperationName {
  const wanted = name.trim().toLowerCase();
  const found = SERVICE_OPERATION_NAMES.find(
    (operation) =>
      operation.toLowerCase() === wanted || OPERATIONS[operation].wireName.toLowerCase() === wanted,
  );
  if (found === undefined) {
    throw new UsageError(
      `unknown operation "${name}"; one of: ${SERVICE_OPERATION_NAMES.join(", ")} (or "service list")`,
    );
  }
  return found;
}

/** The operations as a table: name, document name, method and path, token, retries. */
export function operationsTable(): string {
  const rows = SERVICE_OPERATION_NAMES.map((name) => {
    const op = OPERATIONS[name];
    return [name, op.wireName, `${op.method} ${op.path}`, op.jwt ? "token" : "GUID", op.retry];
  });
  const header = ["operation", "document", "request", "auth", "retry"];
  const widths = header.map((title, i) =>
    Math.max(title.length, ...rows.map((row) => row[i]?.length ?? 0)),
  );
  return [header, ...rows]
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

function text(value: unknown, flag: string): string | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value)) throw new UsageError(`${flag} given more than once`);
  if (typeof value === "boolean") throw new UsageError(`${flag} needs a value`);
  return String(value);
}

function httpUrl(value: string, flag: string): string {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new UsageError(`${flag} is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`${flag} must be http or https, got ${url.protocol}`);
  }
  return url.href;
}

async function readInput(file: string | undefined): Promise<unknown> {
  if (file === undefined)
    throw new UsageError("--json <file> is required: the operation's request as JSON");
  return readJsonFile(file, "--json");
}

/**
 * The options of the client the command sets, each with the flag or environment variable its value
 * came from; `credentials.userName` before `credentials`, the longer name first.
 */
type Sources = Readonly<Record<string, string>>;

/**
 * The client, or a usage error for options it refuses (its messages never quote a value), naming
 * the flag or variable the user gave rather than the library's option (`baseUrl` is
 * `--base-url`, or `CROSSBORDER_BASE_URL` when the value came from there).
 */
function clientOrUsageError(options: ServiceClientOptions, sources: Sources): ServiceClient {
  try {
    return createServiceClient(options);
  } catch (error) {
    if (error instanceof TypeError) throw new UsageError(renamed(error.message, sources));
    throw error;
  }
}

function renamed(message: string, sources: Sources): string {
  const text = message.replace(/^createServiceClient: /, "");
  for (const [option, source] of Object.entries(sources)) {
    if (text.startsWith(`${option} `)) return `${source}${text.slice(option.length)}`;
  }
  return text;
}

/** The exit code of a typed error. */
export function exitCodeOf(error: ServiceError): number {
  if (error.code === "INVALID_REQUEST" || error.code === "NO_CREDENTIALS")
    return SERVICE_EXIT.usage;
  if (error.kind === "network" || error.kind === "timeout" || error.kind === "rate-limit") {
    return SERVICE_EXIT.unavailable;
  }
  if (
    error.kind === "server" &&
    (error.status === undefined || error.status >= 500 || error.code === "INVALID_RESPONSE")
  ) {
    return SERVICE_EXIT.unavailable;
  }
  return SERVICE_EXIT.refused;
}

/** `service list`, or `service <operation>`: returns the exit code. */
export async function serviceCommand(
  operationName: string,
  options: ServiceCommandOptions,
  io: CliIo,
): Promise<number> {
  if (operationName.trim().toLowerCase() === "list") {
    io.stdout.write(`${operationsTable()}\n`);
    return SERVICE_EXIT.ok;
  }
  const operation = resolveOperation(operationName);
  const baseUrlText = text(options.baseUrl, "--base-url") ?? io.env[SERVICE_ENV.baseUrl];
  if (baseUrlText === undefined || baseUrlText.trim() === "") {
    throw new UsageError(
      `--base-url (or ${SERVICE_ENV.baseUrl}) is required: the service's base address`,
    );
  }
  const authUrlText = text(options.authUrl, "--auth-url") ?? io.env[SERVICE_ENV.authUrl];
  const merchantGuid = io.env[SERVICE_ENV.merchantGuid];
  if (merchantGuid === undefined || merchantGuid.trim() === "") {
    throw new UsageError(`${SERVICE_ENV.merchantGuid} is required in the environment`);
  }
  const userName = io.env[SERVICE_ENV.userName];
  const password = io.env[SERVICE_ENV.password];
  if ((userName === undefined) !== (password === undefined)) {
    throw new UsageError(
      `set both ${SERVICE_ENV.userName} and ${SERVICE_ENV.password}, or neither`,
    );
  }
  const timeoutText = text(options.timeoutMs, "--timeout-ms");
  const timeoutMs = timeoutText === undefined ? undefined : Number(timeoutText);
  if (timeoutMs !== undefined && (!/^\d+$/.test(timeoutText ?? "") || timeoutMs <= 0)) {
    throw new UsageError("--timeout-ms must be a positive whole number of milliseconds");
  }
  const idempotencyKey = text(options.idempotencyKey, "--idempotency-key");
  // The other operations send no Idempotency-Key: the key would be ignored (the client refuses it).
  if (idempotencyKey !== undefined && operation !== "calculateBillingSummary") {
    throw new UsageError(
      `--idempotency-key is calculateBillingSummary's only (${operation} sends none)`,
    );
  }
  const input = await readInput(text(options.json, "--json"));

  const redactor = new Redactor([merchantGuid, password]);
  const tokens = new Map<string, CachedToken>();
  const verbose = options.verbose === true;
  const log = (event: object) => io.stderr.write(`${JSON.stringify(redactor.value(event))}\n`);
  const baseUrlSource =
    text(options.baseUrl, "--base-url") === undefined ? SERVICE_ENV.baseUrl : "--base-url";
  const authUrlSource =
    text(options.authUrl, "--auth-url") === undefined ? SERVICE_ENV.authUrl : "--auth-url";
  const sources: Sources = {
    baseUrl: baseUrlSource,
    authUrl: authUrlSource,
    timeoutMs: "--timeout-ms",
    merchantGuid: SERVICE_ENV.merchantGuid,
    "credentials.userName": SERVICE_ENV.userName,
    credentials: `${SERVICE_ENV.userName} and ${SERVICE_ENV.password}`,
  };
  const client = clientOrUsageError(
    {
      baseUrl: httpUrl(baseUrlText, baseUrlSource),
      authUrl: authUrlText === undefined ? undefined : httpUrl(authUrlText, authUrlSource),
      merchantGuid,
      credentials:
        userName === undefined || password === undefined ? undefined : { userName, password },
      timeoutMs,
      // Every token the client gets passes through here, so the output can be scrubbed of it.
      tokenCache: {
        get: (key) => tokens.get(key),
        set: (key, value) => {
          redactor.addToken(value.token);
          tokens.set(key, value);
        },
      },
      hooks: verbose
        ? {
            onRequest: (event) => log({ event: "request", ...event }),
            onResponse: (event) => log({ event: "response", ...event }),
            onRetry: (event) => log({ event: "retry", ...event }),
          }
        : undefined,
    },
    sources,
  );
  const callOptions = idempotencyKey === undefined ? {} : { idempotencyKey };
  try {
    const result = await RUNNERS[operation](client, input as never, callOptions);
    // The merchant's data (a resume requestId, a tracking number) as sent: secrets out only.
    io.stdout.write(`${JSON.stringify(redactor.data({ operation, result }), null, 2)}\n`);
    return SERVICE_EXIT.ok;
  } catch (error) {
    if (!isServiceError(error)) throw error;
    io.stderr.write(`${JSON.stringify(redactor.value({ error: error.toJSON() }), null, 2)}\n`);
    return exitCodeOf(error);
  }
}
