/**
 * What `npm test` runs before the tests: `npm run typecheck`, `npm run lint` and `npm run build`,
 * side by side (the type-checker and the build's declaration pass are each one core's work for
 * most of a minute; one after the other they were two minutes of CI). Each one's output is printed
 * whole when it ends, under its name; the exit code is 1 when any of them failed.
 */
import { spawn } from "node:child_process";

const SCRIPTS = ["typecheck", "lint", "build"];
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

function run(script) {
  const began = performance.now();
  return new Promise((resolve) => {
    const child = spawn(npm, ["run", "--silent", script], {
      stdio: ["ignore", "pipe", "pipe"],
      shell: process.platform === "win32",
    });
    const output = [];
    child.stdout.on("data", (chunk) => output.push(chunk));
    child.stderr.on("data", (chunk) => output.push(chunk));
    child.on("error", (error) => output.push(Buffer.from(`${error.message}\n`)));
    child.on("close", (code, signal) => {
      const seconds = ((performance.now() - began) / 1000).toFixed(1);
      const ok = code === 0;
      process.stdout.write(
        `== npm run ${script}: ${ok ? "passed" : `failed (${signal ?? `exit ${code}`})`} in ${seconds} s\n`,
      );
      process.stdout.write(Buffer.concat(output));
      resolve(ok);
    });
  });
}

const results = await Promise.all(SCRIPTS.map(run));
if (results.includes(false)) process.exitCode = 1;
