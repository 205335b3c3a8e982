import { configDefaults, defineConfig } from "vitest/config";
import { E2E, INTEGRATION, TEST_FILES } from "./vitest.projects.ts";

export default defineConfig({
  test: {
    pool: "forks",
    // isolated-vm asks for --no-node-snapshot on Node >= 20.
    execArgv: ["--no-node-snapshot"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    fileParallelism: true,
    maxWorkers: 2,
    // Which project a file belongs to: vitest.projects.ts (test/README.md says where a new test goes).
    projects: [
      // The edit loop: no sockets or processes (the guard throws), modules shared within a worker for speed.
      {
        extends: true,
        test: { name: "unit", include: [TEST_FILES], exclude: [...configDefaults.exclude, ...INTEGRATION, ...E2E], setupFiles: ["test/helpers/unit-guard.ts"], isolate: false },
      },
      { extends: true, test: { name: "integration", include: INTEGRATION, exclude: [...configDefaults.exclude, ...E2E] } },
      { extends: true, test: { name: "e2e", include: E2E, exclude: [...configDefaults.exclude] } },
    ],
  },
});
