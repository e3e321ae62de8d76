# syntax=docker/dockerfile:1
#
# One Dockerfile for the six services; SERVICE picks which (and PORT its listening port).
#
# Build from the repository root (the build context is the whole monorepo):
#   docker build -f infra/docker/service.Dockerfile --build-arg SERVICE=gateway --build-arg PORT=8080 -t wdr/gateway:<tag> .
#   ports: gateway 8080, fetch-orchestrator 8081, billing-ledger 8082, browser-renderer 8083,
#          recipe-extractor 8084, webhook-dispatcher 8085
#
# One image runs both the service (default CMD) and its database migrations, from the same
# WORKDIR (see the "migrate" initContainer in k8s/base/<service>.yaml):
#   npx --no-install wdr-prisma migrate deploy

ARG NODE_IMAGE=node:24.21.0-bookworm-slim
ARG SERVICE

# ------------------------------------------------------------------------------------------ build
FROM ${NODE_IMAGE} AS build
ARG SERVICE
RUN test -n "$SERVICE" || (echo 'build with --build-arg SERVICE=<service>' >&2; exit 1)
ENV CI=true \
    TURBO_TELEMETRY_DISABLED=1 \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false \
    NPM_CONFIG_AUDIT=false
WORKDIR /srv/wdr

# 1. Dependencies, in their own layer so it stays cached until a manifest or the lockfile changes.
#    Every workspace's package.json is copied, not only this service's: the lockfile covers them all.
#    prisma-engine is copied whole (a small package of .mjs files) because its bin, wdr-prisma, must exist when npm
#    links it.
#    `npm install` + a drift check instead of `npm ci`: the committed lockfile lists platform
#    packages (@turbo/*, @unrs/*) for Linux only, because the registry mirror it is resolved against
#    carries nothing else, and npm ci refuses such a lockfile (see ensure_deps in ./dev). Every
#    version in it is pinned; the check below fails the build if npm installed anything other than
#    what the committed lockfile says (entries npm adds for other platforms are allowed). Switch back
#    to `npm ci --ignore-scripts` once the lockfile is complete.
#    --ignore-scripts: the only install scripts in the lockfile are Prisma's engine download (not
#    used: the schema engine is the WASM shim in packages/prisma-engine) and a dev-only file watcher;
#    skipping them keeps the build reproducible and off every host but the npm registry.
COPY package.json package-lock.json ./
COPY packages/contracts/package.json packages/contracts/
COPY packages/kit/package.json packages/kit/
COPY packages/testkit/package.json packages/testkit/
COPY apps/gateway/package.json apps/gateway/
COPY apps/fetch-orchestrator/package.json apps/fetch-orchestrator/
COPY apps/billing-ledger/package.json apps/billing-ledger/
COPY apps/browser-renderer/package.json apps/browser-renderer/
COPY apps/recipe-extractor/package.json apps/recipe-extractor/
COPY apps/webhook-dispatcher/package.json apps/webhook-dispatcher/
COPY packages/prisma-engine/ packages/prisma-engine/
RUN --mount=type=cache,target=/root/.npm \
    cp package-lock.json /tmp/package-lock.committed.json \
 && npm install --ignore-scripts \
 && node -e "const was = require('/tmp/package-lock.committed.json').packages, now = require('./package-lock.json').packages; const drift = Object.keys(was).filter((k) => now[k]?.version !== was[k].version); if (drift.length) { console.error('installed tree differs from package-lock.json:', drift); process.exit(1); }"

# 2. Sources and build. Every workspace is copied, not just this service's: the contracts package
#    generates the public OpenAPI types from the gateway's controllers, and every service depends on
#    contracts. turbo builds only @wdr/$SERVICE and its dependencies (generate: Prisma client
#    [+ tsoa routes for the gateway], then tsc).
COPY tsconfig.base.json turbo.json .nvmrc ./
COPY packages/ packages/
COPY apps/ apps/
RUN npx turbo run build --filter=@wdr/${SERVICE}...

# 3. Drop dev dependencies with `npm prune --omit=dev` rather than `turbo prune`: turbo prune
#    would install from a lockfile it rewrote for a subset of the workspaces, not the committed one
#    checked above; npm prune works on the tree just installed and never edits the lockfile. The
#    cost: production dependencies of all six services stay (npm hoists one shared node_modules), a
#    few MB beyond what this service needs.
#    The Prisma CLI survives the prune (it is a peerOptional dependency of @prisma/client), which is
#    what lets this image run its own migrations; the check fails the build if that ever changes.
RUN npm prune --omit=dev --ignore-scripts \
 && test -f node_modules/prisma/package.json \
 && test -x node_modules/.bin/wdr-prisma

# ---------------------------------------------------------------------------------------- runtime
FROM ${NODE_IMAGE} AS runtime
ARG SERVICE
ARG PORT=8080

# tini as PID 1 so child processes (Chromium's) are reaped and SIGTERM still reaches node. The
# browser-renderer also gets Debian's Chromium (what CHROMIUM_PATH points at) and fonts.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini ca-certificates \
 && if [ "$SERVICE" = browser-renderer ]; then apt-get install -y --no-install-recommends chromium fonts-liberation; fi \
 && rm -rf /var/lib/apt/lists/*

# HOST: the code's default (127.0.0.1) is unreachable from outside the container. npx (used for
# migrations) keeps its cache and logs in /tmp and Prisma's update check is off, so a read-only root
# filesystem with a writable /tmp is enough.
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=${PORT} \
    NPM_CONFIG_CACHE=/tmp/.npm \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    CHECKPOINT_DISABLE=1 \
    CHROMIUM_PATH=/usr/bin/chromium \
    HOME=/tmp
WORKDIR /srv/wdr/apps/${SERVICE}

# Only what runs: the pruned node_modules, the shared packages (workspace links point at them) and
# this service's compiled code, Prisma schema, migrations and config. Files stay owned by root, so
# the service cannot modify its own code.
COPY --from=build /srv/wdr/package.json /srv/wdr/
COPY --from=build /srv/wdr/node_modules/ /srv/wdr/node_modules/
COPY --from=build /srv/wdr/packages/ /srv/wdr/packages/
COPY --from=build /srv/wdr/apps/${SERVICE}/package.json /srv/wdr/apps/${SERVICE}/prisma.config.ts ./
COPY --from=build /srv/wdr/apps/${SERVICE}/prisma/ ./prisma/
COPY --from=build /srv/wdr/apps/${SERVICE}/dist/ ./dist/

# The base image's unprivileged "node" user, by number so Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
EXPOSE ${PORT}
# The service stops gracefully on SIGTERM within SHUTDOWN_GRACE_MS (default 15 s).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/main.js"]
