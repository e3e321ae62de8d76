/**
 * Shared jest set-up (ESM + ts-jest, transpile-only: `tsc` type-checks separately).
 * Each workspace's jest.config.js spreads this. Results are also written as JSON so `./dev test`
 * can print one summary line for the whole run, and its slowest files.
 */
export function jestConfig(packageDir, overrides = {}, resultsName = packageDir.split('/').slice(-2).join('-')) {
  const name = resultsName;
  return {
    rootDir: packageDir,
    testEnvironment: 'node',
    extensionsToTreatAsEsm: ['.ts'],
    moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
    transform: { '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: `${packageDir}/tsconfig.json` }] },
    testMatch: ['<rootDir>/src/**/*.test.ts', '<rootDir>/test/**/*.test.ts'],
    testPathIgnorePatterns: ['/node_modules/', '/dist/'],
    testTimeout: 30_000,
    reporters: ['default', ['<rootDir>/../../scripts/jest-summary-reporter.js', { name }]],
    ...overrides,
  };
}

/**
 * The same set-up as two jest projects: the files under `<sharedDir>` share one fleet, started once
 * by the project's global setup (packages/testkit/src/shared-fleet.ts) and only when one of them
 * is selected; every other file runs as before. Reporters and the time-out stay global.
 */
export function jestConfigWithSharedFleet(packageDir, sharedDir, overrides = {}, lateFiles = []) {
  const { reporters, ...project } = jestConfig(packageDir, overrides);
  const name = packageDir.split('/').slice(-1)[0];
  const shared = `<rootDir>/${sharedDir}/`;
  const testkit = `${packageDir}/../../packages/testkit/dist/jest`;
  // `./dev test` runs this package's files in two lanes: WDR_JEST_LANE=late selects only `lateFiles`
  // (globs under the package; none shares the fleet), WDR_JEST_LANE=main every other file. Unset:
  // every file, as one run.
  const lane = process.env.WDR_JEST_LANE;
  if (lane === 'late') {
    return {
      ...jestConfig(packageDir, overrides, `${packageDir.split('/').slice(-2).join('-')}-late`),
      displayName: `${name} (late lane)`,
      testMatch: lateFiles.map((f) => `<rootDir>/${f}`),
    };
  }
  // jest's testMatch takes negated globs: the main lane leaves the late files out.
  const notLate = lane === 'main' ? lateFiles.map((f) => `!${packageDir}/${f}`) : [];
  return {
    reporters,
    testTimeout: project.testTimeout,
    projects: [
      {
        ...project,
        displayName: name,
        testMatch: [...project.testMatch, ...notLate],
        testPathIgnorePatterns: [...project.testPathIgnorePatterns, shared],
      },
      {
        ...project,
        displayName: `${name} (shared fleet)`,
        testMatch: [`${shared}**/*.test.ts`],
        globalSetup: `${testkit}/shared-fleet-setup.js`,
        globalTeardown: `${testkit}/shared-fleet-teardown.js`,
        // After each file: wait until the requests it started have ended (the next file gets a quiet fleet).
        setupFilesAfterEnv: [`${testkit}/shared-fleet-file.js`],
      },
    ],
  };
}
