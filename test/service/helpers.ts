// Shared by the service client tests: a simulator per test, a client pointed at it, and a
// recorder of everything the client hands out (hook events), for the redaction checks.
import { inspect } from "node:util";
import { afterEach, expect } from "vitest";
import {
  createServiceClient,
  type ServiceClient,
  type ServiceClientOptions,
  type ServiceRequestEvent,
  type ServiceResponseEvent,
  type ServiceRetryEvent,
} from "../../src/service/index.js";
import {
  createServiceSimulator,
  type ServiceSimulator,
  type ServiceSimulatorOptions,
} from "../../src/testing/index.js";

const open: ServiceSimulator[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((simulator) => simulator.close()));
});

/** A simulator closed after the test. */
export async function startSimulator(
  options: ServiceSimulatorOptions = {},
): Promise<ServiceSimulator> {
  const simulator = await createServiceSimulator(options);
  open.push(simulator);
  return simulator;
}

export interface Recorded {
  readonly requests: ServiceRequestEvent[];
  readonly responses: ServiceResponseEvent[];
  readonly retries: ServiceRetryEvent[];
  /** Every event as one JSON line, as a logger would write it. */
  readonly lines: string[];
}

/** Hooks that keep every event and log it as a JSON line. */
export function recorder(includeBodies = false): {
  hooks: ServiceClientOptions["hooks"];
  events: Recorded;
} {
  const events: Recorded = { requests: [], responses: [], retries: [], lines: [] };
  const log = (kind: string, event: object) =>
    events.lines.push(JSON.stringify({ kind, ...event }));
  return {
    events,
    hooks: {
      includeBodies,
      onRequest: (event) => {
        events.requests.push(event);
        log("request", event);
      },
      onResponse: (event) => {
        events.responses.push(event);
        log("response", event);
      },
      onRetry: (event) => {
        events.retries.push(event);
        log("retry", event);
      },
    },
  };
}

/** Fast retries so that tests do not wait on backoff. */
export const FAST_RETRIES = { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20 } as const;

export function clientFor(
  simulator: ServiceSimulator,
  options: Partial<ServiceClientOptions> = {},
): ServiceClient {
  return createServiceClient({
    baseUrl: simulator.url,
    merchantGuid: simulator.merchantGuid,
    credentials: simulator.credentials,
    retries: FAST_RETRIES,
    ...options,
  });
}

/** The error a promise rejects with (fails the test when it resolves). */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  expect.fail("expected the call to fail");
}

/** Every way an error can end up in a log. */
export function renderings(error: unknown): string[] {
  const e = error as Error;
  return [
    String(e),
    e.message,
    e.stack ?? "",
    JSON.stringify(e),
    inspect(e, { depth: 10, showHidden: true }),
    inspect(e.cause, { depth: 10, showHidden: true }),
    String((e.cause as Error | undefined)?.stack ?? ""),
  ];
}

/** Asserts that none of the texts contains a secret, in any case or URL-encoded. */
export function expectNoSecrets(texts: readonly string[], secrets: readonly string[]): void {
  for (const text of texts) {
    for (const secret of secrets) {
      const lower = text.toLowerCase();
      expect(lower, "a secret leaked").not.toContain(secret.toLowerCase());
      expect(lower, "a secret leaked URL-encoded").not.toContain(
        encodeURIComponent(secret).toLowerCase(),
      );
    }
  }
}

/** The token values the simulator issued (from its token answers, as recorded by a proxy fetch). */
export function tokenCollector(): {
  tokens: string[];
  fetch: (input: string, init: RequestInit) => Promise<Response>;
} {
  const tokens: string[] = [];
  return {
    tokens,
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      if (input.includes("GetAuthenticationToken") && response.ok) {
        const body = (await response.clone().json()) as { Token?: string };
        if (body.Token) tokens.push(body.Token);
      }
      return response;
    },
  };
}
