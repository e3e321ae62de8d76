/**
 * Shared jest set-up (ESM + ts-jest, transpile-only: `tsc` type-checks separately).
 * Each workspace's jest.config.js spreads this. Results are also written as JSON so `./dev test`
 * can print one summary line for the whole run.
 */
export function jestConfig(packageDir, overrides = {}) {
  const name = packageDir.split('/').slice(-2).join('-');
  return {
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
