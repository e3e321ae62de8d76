// Layering rules, checked by `npm run lint:layers` (and `./dev test`, check_static). The report must say
// "no dependency violations found": no cycles (type-only imports counted) and none of the rules below broken.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle (type-only imports count too): break it by moving the shared part into its own module.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-not-to-api',
      severity: 'error',
      comment: "A service's domain/ never reaches its HTTP layer (api/) or the wiring in app.ts: take dependencies from deps.ts.",
      from: { path: '^apps/[^/]+/src/domain/' },
      to: { path: ['^apps/[^/]+/src/api/', '^apps/[^/]+/src/app\\.ts$', '^apps/[^/]+/src/routes/'] },
    },
    {
      name: 'apps-not-to-other-apps',
      severity: 'error',
      comment: 'Services talk over Kafka and HTTP (contracts in @wdr/contracts), never by importing each other.',
      from: { path: '^apps/([^/]+)/' },
      to: { path: '^apps/', pathNot: '^apps/$1/' },
    },
    {
      name: 'packages-not-to-apps',
      severity: 'error',
      comment: 'Shared packages know no service.',
      from: { path: '^packages/' },
      to: { path: '^apps/' },
    },
    {
      name: 'no-testkit-in-production',
      severity: 'error',
      comment: '@wdr/testkit (fake solver, fleet, fixtures) is for tests only: production code never imports it.',
      from: { path: '^(apps|packages)/[^/]+/src/', pathNot: ['^packages/testkit/', '\\.test\\.[cm]?[jt]s$'] },
      to: { path: ['^packages/testkit/', '@wdr/testkit'] },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that resolves to no file (typo, or a workspace package not built): the rules above would not see it.',
      from: { path: '^(apps|packages)/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: ['node_modules', '/dist/'] },
    exclude: { path: ['/generated/', '^apps/gateway/src/routes/', '\\.d\\.ts$', '/coverage/'] },
    tsPreCompilationDeps: true,
    moduleSystems: ['es6', 'cjs'],
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
