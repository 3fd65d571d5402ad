// Shared by the engine, card-data and pipeline tests: requests, bodies, stub authenticators.
import { inspect } from "node:util";
import { afterEach, beforeEach, vi } from "vitest";
import {
  AuthenticationError,
  type Authenticator,
  type AuthRequest,
  type AuthResult,
  type BodyInput,
  type CallbackFailure,
  type CallbackName,
  type CallbackRequest,
  type CallbackResponse,
} from "../../src/index.js";

export const encoder = new TextEncoder();

/** A framework's already-parsed body (the engine accepts any non-stream value as one). */
export function parsed(value: unknown): BodyInput {
  return value as BodyInput;
}

export function post(
  body: BodyInput,
  headers: Record<string, string> = {},
  url = "/callback",
): CallbackRequest {
  return { method: "POST", url, headers: { "content-type": "application/json", ...headers }, body };
}

export function json(response: CallbackResponse): unknown {
  return JSON.parse(response.body);
}

/** An onError hook that keeps every failure. */
export function collector(): {
  failures: CallbackFailure[];
  onError: (f: CallbackFailure) => void;
} {
  const failures: CallbackFailure[] = [];
  return { failures, onError: (failure) => void failures.push(failure) };
}

export interface StreamState {
  pulls: number;
  cancelled: boolean;
}

/**
 * A pull-based stream that records how much of it was read. `highWaterMark: 0` keeps the stream
 * from pulling on its own: every pull is a read by the engine.
 */
export function trackedStream(chunks: readonly Uint8Array[]): {
  stream: ReadableStream<Uint8Array>;
  state: StreamState;
} {
  const state: StreamState = { pulls: 0, cancelled: false };
  let next = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        state.pulls++;
        const chunk = chunks[next++];
        if (chunk === undefined) controller.close();
        else controller.enqueue(chunk);
      },
      cancel() {
        state.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, state };
}

/** Splits a text into byte chunks of `size`. */
export function chunked(text: string, size: number): Uint8Array[] {
  const bytes = encoder.encode(text);
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.slice(i, i + size));
  return chunks;
}

export interface IterableState {
  yielded: number;
  finished: boolean;
}

/** An async iterable (like a Node `IncomingMessage`) that records how far it was iterated. */
export function trackedIterable(chunks: readonly Uint8Array[]): {
  iterable: AsyncIterable<Uint8Array>;
  state: IterableState;
} {
  const state: IterableState = { yielded: 0, finished: false };
  async function* generate() {
    try {
      for (const chunk of chunks) {
        state.yielded++;
        yield chunk;
      }
    } finally {
      state.finished = true;
    }
  }
  return { iterable: generate(), state };
}

export type StubBehaviour =
  | "allow"
  | "deny"
  | "type-error"
  | "header-too-large"
  | "deny-payload"
  | "type-error-payload";

/** A real `Authenticator` whose answer the test chooses. */
export class StubAuthenticator implements Authenticator {
  readonly #needsRawBody: (callback: CallbackName) => boolean;
  readonly requests: AuthRequest[] = [];
  /** The callbacks `needsRawBody` was asked about, in order. */
  readonly rawBodyQueries: CallbackName[] = [];
  readonly payloads: unknown[] = [];
  readonly rawBodies: (Uint8Array | undefined)[] = [];

  constructor(
    private readonly behaviour: StubBehaviour = "allow",
    private readonly options: {
      /** Whether the raw body is needed: for every callback, or per callback. */
      needsRawBody?: boolean | ((callback: CallbackName) => boolean);
      /** What `authenticatePayload` returns: the result it was given, extended (default: nothing). */
      payloadResult?: (result: AuthResult) => AuthResult | undefined;
    } = {},
  ) {
    const needs = options.needsRawBody ?? false;
    this.#needsRawBody = typeof needs === "function" ? needs : () => needs;
  }

  needsRawBody(callback: CallbackName): boolean {
    this.rawBodyQueries.push(callback);
    return this.#needsRawBody(callback);
  }

  authenticateRequest(request: AuthRequest): AuthResult {
    this.requests.push(request);
    switch (this.behaviour) {
      case "deny":
        throw new AuthenticationError("token signature invalid");
      case "type-error":
        throw new TypeError("Key for the HS256 algorithm must be of type CryptoKey");
      case "header-too-large":
        throw new AuthenticationError("authorization header over 16384 bytes", "header_too_large");
      default:
        return { methods: ["stub"], claims: { sub: "service" } };
    }
  }

  async authenticatePayload(
    result: AuthResult,
    payload: unknown,
    rawBody: Uint8Array | undefined,
  ): Promise<AuthResult | undefined> {
    this.payloads.push(payload);
    this.rawBodies.push(rawBody === undefined ? undefined : rawBody.slice());
    if (this.behaviour === "deny-payload") throw new AuthenticationError("merchant GUID mismatch");
    if (this.behaviour === "type-error-payload") throw new TypeError("digest compare failed");
    return this.options.payloadResult?.(result);
  }
}

/** Resolves after pending promise jobs and one macrotask: long enough for a rejection to surface. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 20));
}

/**
 * Keeps what each test writes on the console (every method; objects inspected 10 deep), in the
 * array returned, emptied before each test. Call at the top level of a test file.
 */
export function captureConsole(): string[] {
  const logs: string[] = [];
  let spies: ReturnType<typeof vi.spyOn>[] = [];
  beforeEach(() => {
    logs.length = 0;
    spies = (["error", "warn", "log", "info", "debug"] as const).map((method) =>
      vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
        logs.push(
          args.map((a) => (typeof a === "string" ? a : inspect(a, { depth: 10 }))).join(" "),
        );
      }),
    );
  });
  afterEach(() => {
    for (const spy of spies) spy.mockRestore();
  });
  return logs;
}
