// A request object that is only structurally a Node stream (no `off`, so listeners cannot be
// removed): the body read by events must still be what was sent when a `close` or an `error`
// follows the `end` (found by review: a late `close` zeroed the one chunk that was the body).
import { EventEmitter } from "node:events";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type NodeRequestLike, nodeBody } from "../../src/adapters/internal.js";
import { readBody } from "../../src/core/body.js";
import { headerReader } from "../../src/core/headers.js";

interface Structural {
  on(event: string, listener: (...args: never[]) => void): unknown;
  emit(event: string, ...args: unknown[]): boolean;
  resume(): void;
}

/** Only `on`, `emit` and `resume`: what a minimal hand-made request offers (no `off`). */
function structuralRequest(): Structural {
  const emitter = new EventEmitter();
  return {
    on: (event, listener) => emitter.on(event, listener as (...args: unknown[]) => void),
    emit: (event, ...args) => emitter.emit(event, ...args),
    resume: () => undefined,
  };
}

describe("reading a body by events from a request without `off`", () => {
  for (const late of ["close", "error", "aborted"] as const) {
    it(`"${late}" after "end" leaves the body as it was sent`, async () => {
      const req = structuralRequest();
      const body = nodeBody(req as unknown as NodeRequestLike);
      const reading = readBody(body, headerReader({}), 1024, 5_000);
      const chunk = new TextEncoder().encode('{"OrderId":"GE1"}');
      req.emit("data", chunk);
      req.emit("end");
      if (late === "error") req.emit("error", new Error("late"));
      else req.emit(late);
      const read = await reading;
      expect(read.kind).toBe("bytes");
      if (read.kind !== "bytes") return;
      expect(new TextDecoder().decode(read.bytes)).toBe('{"OrderId":"GE1"}');
    });
  }

  it("data after a refusal for size is not collected again", async () => {
    const req = structuralRequest();
    const reading = readBody(
      nodeBody(req as unknown as NodeRequestLike),
      headerReader({}),
      4,
      5_000,
    );
    req.emit("data", new TextEncoder().encode("12345"));
    req.emit("data", new TextEncoder().encode("6"));
    req.emit("end");
    expect((await reading).kind).toBe("too_large");
  });
});

// Hand mutation testing, round 2: without clearing its timer, the reader kept one per request
// until the deadline, and the timer then zeroed the chunk that was the body.
describe("the body deadline's timer", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("is cleared once the body is read: none left, and the body stays as sent past the deadline", async () => {
    vi.useFakeTimers();
    const req = structuralRequest();
    const reading = readBody(
      nodeBody(req as unknown as NodeRequestLike),
      headerReader({}),
      1024,
      5_000,
    );
    req.emit("data", new TextEncoder().encode('{"OrderId":"GE1"}'));
    req.emit("end");
    const read = await reading;
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(10_000);
    expect(read.kind).toBe("bytes");
    if (read.kind !== "bytes") return;
    expect(new TextDecoder().decode(read.bytes)).toBe('{"OrderId":"GE1"}');
  });
});

describe("a request stream already destroyed when the engine reads it", () => {
  it("is a failed read at once (the client gone), with the stream's own error, not a wait for the deadline", async () => {
    const error = new Error("socket hang up");
    const req = Object.assign(structuralRequest(), { destroyed: true, errored: error });
    const started = Date.now();
    const read = await readBody(
      nodeBody(req as unknown as NodeRequestLike),
      headerReader({}),
      1024,
      60_000,
    );
    expect(read).toStrictEqual({ kind: "failed", error });
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});
