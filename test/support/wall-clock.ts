/**
 * A wall clock that steps (an NTP correction) or disagrees with another machine's, for one test
 * file: `Date.now` is replaced by the real value plus an offset for the file's tests, back in step
 * after each test, restored after the file. Timers, `performance.now()` and other processes'
 * clocks are left alone, as a real step leaves them.
 */
import { afterAll, afterEach, beforeAll } from "vitest";

export interface SteppedWallClock {
  /** Steps the wall clock to `ms` from the real one (0: back in step). */
  step(ms: number): void;
  /** The real wall clock, whatever the step. */
  realNow(): number;
}

export function useSteppedWallClock(): SteppedWallClock {
  const realNow = Date.now;
  let offset = 0;
  beforeAll(() => {
    Date.now = () => realNow() + offset;
  });
  afterEach(() => {
    offset = 0;
  });
  afterAll(() => {
    Date.now = realNow;
  });
  return {
    step: (ms) => {
      offset = ms;
    },
    realNow: () => realNow(),
  };
}
