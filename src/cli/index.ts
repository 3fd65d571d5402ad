#!/usr/bin/env node
// The `crossborder-callbacks` bin; the logic lives in ./main.ts.
import { runCli } from "./main.js";

runCli(process.argv.slice(2), process).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  },
);
