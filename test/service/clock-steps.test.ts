/**
 * The service client when this machine's wall clock steps (an NTP correction) or disagrees with
 * the service's: `deadlineMs`, the retry check and `durationMs` are measured on a monotonic clock,
 * and a `Retry-After` HTTP date is read against the answer's own `Date` header. A step or a skew
 * is simulated by replacing `Date.now` (the real value plus an offset); timers are left alone, as
 * a real step would leave them. Each test has a control without a step.
 */
import { describe, expect, it } from "vitest";
import { parseRetryAfter } from "../../src/service/retry.js";
import { useSteppedWallClock } from "../support/wall-clock.js";
import { clientFor, recorder, startSimulator } from "./helpers.js";

const { step, realNow } = useSteppedWallClock();

const isToken = (input: unknown) => String(input).includes("Token");
const outcomeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => "ok",
    (error: { name?: string; code?: string }) => `${error.name} ${error.code}`,
  );

describe("deadlineMs and durationMs across a wall-clock step (clock-4)", () => {
  /**
   * The first attempt answers 503 while the clock steps by `stepMs`; the second hangs until its
   * timer aborts it (timeoutMs 3 s). deadlineMs 1.5 s must end the call by about 1.5 s.
   */
  async function hungRetry(stepMs: number) {
    const simulator = await startSimulator();
    let attempts = 0;
    const client = clientFor(simulator, {
      deadlineMs: 1_500,
      timeoutMs: 3_000,
      fetch: (input, init) => {
        if (isToken(input)) return fetch(input, init);
        if (++attempts === 1) {
          step(stepMs);
          return Promise.resolve(new Response("", { status: 503 }));
        }
        return new Promise<Response>((_, reject) =>
          init?.signal?.addEventListener("abort", () => reject(init.signal?.reason), {
            once: true,
          }),
        );
      },
    });
    const started = performance.now();
    const outcome = await outcomeOf(
      client.getShippingDetailsExtended({ amount: 10, currencyCode: "EUR" }),
    );
    return { outcome, attempts, tookMs: performance.now() - started };
  }

  it("control: no step, a retry that hangs ends at deadlineMs (1.5 s)", async () => {
    const r = await hungRetry(0);
    expect(r.outcome).toMatch(/^ServiceTimeoutError (TIMEOUT|DEADLINE_EXCEEDED)$/);
    expect(r.tookMs).toBeLessThan(2_500);
  });

  it("a wall clock stepped −60 s during the first attempt: the call still ends at deadlineMs", async () => {
    const r = await hungRetry(-60_000);
    expect(r.outcome).toMatch(/^ServiceTimeoutError (TIMEOUT|DEADLINE_EXCEEDED)$/);
    expect(r.tookMs).toBeLessThan(2_500);
  });

  /** The first attempt answers 503 while the clock steps by `stepMs`; the second succeeds. */
  async function retried(stepMs: number) {
    const simulator = await startSimulator();
    let attempts = 0;
    const client = clientFor(simulator, {
      deadlineMs: 5_000,
      fetch: (input, init) => {
        if (isToken(input)) return fetch(input, init);
        if (++attempts === 1) {
          step(stepMs);
          return Promise.resolve(new Response("", { status: 503 }));
        }
        return fetch(input, init);
      },
    });
    const outcome = await outcomeOf(
      client.getShippingDetailsExtended({ amount: 10, currencyCode: "EUR" }),
    );
    return { outcome, attempts };
  }

  it("control: no step, a 503 is retried within the deadline", async () => {
    expect(await retried(0)).toEqual({ outcome: "ok", attempts: 2 });
  });

  it("a wall clock stepped +60 s during the first attempt: the retry is still sent (time is left on the deadline)", async () => {
    expect(await retried(60_000)).toEqual({ outcome: "ok", attempts: 2 });
  });

  /** An attempt during which the clock steps by `stepMs`: the durationMs onResponse reports. */
  async function durations(stepMs: number) {
    const simulator = await startSimulator();
    const { hooks, events } = recorder();
    const client = clientFor(simulator, {
      hooks,
      fetch: async (input, init) => {
        const answer = await fetch(input, init);
        if (!isToken(input)) step(stepMs);
        return answer;
      },
    });
    await client.getShippingDetailsExtended({ amount: 10, currencyCode: "EUR" });
    return events.responses.map((event) => event.durationMs);
  }

  it("control: no step, durationMs is what the attempt took", async () => {
    for (const ms of await durations(0)) expect(ms).toBeGreaterThanOrEqual(0);
  });

  it("a wall clock stepped −30 s during an attempt: durationMs stays what the attempt took", async () => {
    const measured = await durations(-30_000);
    expect(measured.length).toBeGreaterThan(0);
    for (const ms of measured) {
      expect(ms).toBeGreaterThanOrEqual(0);
      expect(ms).toBeLessThan(5_000);
    }
  });
});

describe("a Retry-After HTTP date is read against the answer's own Date header (clock-5)", () => {
  /**
   * The service refuses with 429 for 1 s, on its own (true) clock, and says so as an HTTP date
   * with its `Date` header (both whole seconds, as HTTP dates are); this machine's clock reads
   * `skewMs` off the service's. The call must wait and succeed on its second attempt.
   */
  async function rateLimited(skewMs: number, withDate = true) {
    const simulator = await startSimulator();
    step(skewMs);
    const until = realNow() + 1_000;
    let attempts = 0;
    const client = clientFor(simulator, {
      fetch: (input, init) => {
        if (isToken(input)) return fetch(input, init);
        attempts++;
        const serviceNow = realNow();
        if (serviceNow >= until) return fetch(input, init);
        const headers = new Headers({
          "content-type": "application/json",
          "Retry-After": new Date(Math.ceil(until / 1000) * 1000).toUTCString(),
        });
        if (withDate) headers.set("Date", new Date(serviceNow).toUTCString());
        return Promise.resolve(new Response('{"Message":"slow down"}', { status: 429, headers }));
      },
    });
    const outcome = await outcomeOf(
      client.getShippingDetailsExtended({ amount: 10, currencyCode: "EUR" }),
    );
    return { outcome, attempts };
  }

  it("control: clocks that agree, the date is waited for and the second attempt succeeds", async () => {
    expect(await rateLimited(0)).toEqual({ outcome: "ok", attempts: 2 });
  });

  it("this machine's clock 10 s ahead of the service's: the date is still waited for", async () => {
    expect(await rateLimited(10_000)).toEqual({ outcome: "ok", attempts: 2 });
  });

  it("this machine's clock 70 s behind the service's: a wait of a second is not read as 71 s past the deadline", async () => {
    expect(await rateLimited(-70_000)).toEqual({ outcome: "ok", attempts: 2 });
  });

  it("control: no Date header, clocks that agree: read against this machine's clock", async () => {
    expect(await rateLimited(0, false)).toEqual({ outcome: "ok", attempts: 2 });
  });

  it("parseRetryAfter takes the wait from the answer's Date header when it is a valid date", () => {
    const now = Date.parse("Wed, 21 Oct 2026 07:28:00 GMT");
    const asked = "Wed, 21 Oct 2026 07:28:30 GMT";
    // The answer's clock 10 s behind this one's: 40 s on its clock.
    expect(parseRetryAfter(asked, now, "Wed, 21 Oct 2026 07:27:50 GMT")).toBe(40_000);
    expect(parseRetryAfter(asked, now + 10_000, "Wed, 21 Oct 2026 07:28:00 GMT")).toBe(30_000);
    expect(parseRetryAfter(asked, now - 70_000, "Wed, 21 Oct 2026 07:28:00 GMT")).toBe(30_000);
    // A Date header in the same second as this clock: this clock, finer than whole seconds.
    expect(parseRetryAfter(asked, now + 400, "Wed, 21 Oct 2026 07:28:00 GMT")).toBe(29_600);
    // No Date header, or one that is not a date: this machine's clock.
    expect(parseRetryAfter(asked, now, null)).toBe(30_000);
    expect(parseRetryAfter(asked, now, "yesterday")).toBe(30_000);
    // A date before the answer's own: now.
    expect(parseRetryAfter(asked, now, "Wed, 21 Oct 2026 07:29:00 GMT")).toBe(0);
    // Delta-seconds need no clock.
    expect(parseRetryAfter("3", now + 99_000, "Wed, 21 Oct 2026 07:28:00 GMT")).toBe(3_000);
  });
});
