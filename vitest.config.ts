import { configDefaults, defineConfig } from "vitest/config";

/**
 * The files that install the packed tarball into new projects and run them (npm install, a
 * Next.js build): CPU-heavy for a minute or more each, so they run after the rest, among
 * themselves, rather than beside the tests that time a trickling body or a lease.
 */
const PACKAGED = [
  "test/examples/standalone.test.ts",
  "test/package/install.test.ts",
  "test/docs/readme-flow.test.ts",
];
/** Three server processes under 150 requests at a time: it runs last, alone. */
const UNDER_LOAD = ["test/idempotency/multi-process.test.ts"];

export default defineConfig({
  test: {
    globalSetup: ["test/support/link-package.ts"],
    testTimeout: 20_000,
    hookTimeout: 60_000,
    // Vitest's default is one worker fewer than the cores: on a 2-core machine, one file at a
    // time, although most files wait on servers and child processes. Two at a time, in three
    // groups run one after the other.
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...PACKAGED, ...UNDER_LOAD],
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "packaged",
          include: PACKAGED,
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: "under-load",
          include: UNDER_LOAD,
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
