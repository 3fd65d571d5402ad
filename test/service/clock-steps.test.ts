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

  it("durationMs is a whole number of milliseconds (second-clock-3)", async () => {
    const simulator = await startSimulator();
    const { hooks, events } = recorder();
    const client = clientFor(simulator, { hooks });
    for (let i = 0; i < 3; i++) {
      await client.getShippingDetailsExtended({ amount: 10, currencyCode: "EUR" });
    }
    const measured = events.responses.map((event) => event.durationMs);
    expect(measured.length).toBeGreaterThan(0);
    expect(measured.filter((ms) => !Number.isInteger(ms))).toEqual([]);
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

  /**
   * The service answers 429 with a Date header and a Retry-After date `retryInMs` later, both from
   * the real clock (whole seconds, as HTTP dates are); the answer takes `transitMs` to arrive, and
   * this machine's clock reads `skewMs` off the service's (with `stepDuringMs`, it steps by that
   * while the answer travels instead).
   */
  async function slowRateLimit(o: {
    transitMs: number;
    retryInMs: number;
    deadlineMs: number;
    skewMs?: number;
    stepDuringMs?: number;
  }) {
    const simulator = await startSimulator();
    step(o.skewMs ?? 0);
    let attempts = 0;
    const client = clientFor(simulator, {
      deadlineMs: o.deadlineMs,
      fetch: async (input, init) => {
        if (isToken(input)) return fetch(input, init);
        if (++attempts > 1) return fetch(input, init);
        const serviceNow = realNow();
        const headers = new Headers({
          "content-type": "application/json",
          Date: new Date(serviceNow).toUTCString(),
          "Retry-After": new Date(serviceNow + o.retryInMs).toUTCString(),
        });
        if (o.stepDuringMs !== undefined) step(o.stepDuringMs);
        await new Promise((resolve) => setTimeout(resolve, o.transitMs));
        return new Response('{"Message":"slow down"}', { status: 429, headers });
      },
    });
    const started = performance.now();
    const outcome = await client
      .getShippingDetailsExtended({ amount: 10, currencyCode: "EUR" })
      .then(
        () => "ok",
        (e: { name?: string; retryAfterMs?: number }) => `${e.name} retryAfterMs=${e.retryAfterMs}`,
      );
    return { outcome, attempts, tookMs: performance.now() - started };
  }

  it("clocks that agree and an answer 1.2 s on its way: the wait is not stretched by the transit, the retry fits deadlineMs 3 s (second-clock-1)", async () => {
    const r = await slowRateLimit({ transitMs: 1_200, retryInMs: 2_000, deadlineMs: 3_000 });
    expect({ outcome: r.outcome, attempts: r.attempts }).toEqual({ outcome: "ok", attempts: 2 });
    // 1.2 s of transit, then what is left of the 1-2 s (the header's truncation) asked for.
    expect(r.tookMs).toBeLessThan(2_900);
  });

  it("a wall clock stepped +60 s while the answer travels: the date is still waited for (read against the Date header)", async () => {
    const r = await slowRateLimit({
      transitMs: 300,
      retryInMs: 2_000,
      deadlineMs: 10_000,
      stepDuringMs: 60_000,
    });
    expect({ outcome: r.outcome, attempts: r.attempts }).toEqual({ outcome: "ok", attempts: 2 });
    // The wait is 0.7-2 s, not 0 (the step read as time passed).
    expect(r.tookMs).toBeGreaterThan(900);
  });

  it("parseRetryAfter trusts this machine's clock while the Date header falls within the attempt (second-clock-1)", () => {
    const sent = Date.parse("Wed, 21 Oct 2026 07:28:00 GMT");
    const header = "Wed, 21 Oct 2026 07:28:00 GMT";
    const asked = "Wed, 21 Oct 2026 07:28:02 GMT";
    // Clocks that agree: sent at 07:27:59.900, the header written at 07:28:00.500, the answer
    // read at 07:28:01.200 (1.3 s into the attempt): 800 ms to go, not 2 s from the header.
    expect(parseRetryAfter(asked, sent + 1_200, header, 1_300)).toBe(800);
    // Read within the header's second, at the attempt's very start: the same.
    expect(parseRetryAfter(asked, sent + 400, header, 0)).toBe(1_600);
    // This machine's clock 0.5 s ahead of the service's, 0.7 s of transit: the header written at
    // 07:28:00.300 (service), read at 07:28:01.000 (service) = 01.500 here, 800 ms into the
    // attempt. The true wait is 1 s; within the skew, not stretched by the transit (2 s).
    const ahead = parseRetryAfter(asked, sent + 1_500, header, 800) ?? Number.NaN;
    expect(Math.abs(ahead - 1_000)).toBeLessThanOrEqual(500);
    // 0.5 s behind, 0.7 s of transit: the header written at 07:28:00.800 (service), read at
    // 07:28:01.500 (service) = 01.000 here, 800 ms into the attempt. The true wait is 500 ms.
    const behind = parseRetryAfter(asked, sent + 1_000, header, 800) ?? Number.NaN;
    expect(Math.abs(behind - 500)).toBeLessThanOrEqual(500);
    // A header older than the attempt (by more than its truncation): the clocks disagree, the
    // wait is measured from the header, however long the attempt.
    expect(parseRetryAfter(asked, sent + 10_000, header, 2_000)).toBe(2_000);
    // A header later than this machine's clock: measured from the header.
    expect(parseRetryAfter(asked, sent - 500, header, 300)).toBe(2_000);
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
