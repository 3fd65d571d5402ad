#!/usr/bin/env node
// The `crossborder-callbacks` bin; the logic lives in ./main.ts.
import { runCli } from "./main.js";

// A reader that goes away early (`simulate all … | head -1`) makes every later write an EPIPE,
// which Node emits as an 'error' event: unhandled, it crashed the run with a stack trace. What can
// no longer be written is dropped (the stream is destroyed, later writes do nothing), and the run
// ends with its own status. Any other error of the streams is still thrown.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
  });
}

runCli(process.argv.slice(2), process).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  },
);
