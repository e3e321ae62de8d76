# syntax=docker/dockerfile:1
#
# One Dockerfile, one image per service: SERVICE picks which (and PORT its listening port). Each
# image carries only that service's workspaces and their production dependencies (turbo prune,
# then npm prune --omit=dev), plus the OCI labels below.
#
# Build from the repository root (the build context is the whole monorepo; this Dockerfile's own
# ignore file, service.Dockerfile.dockerignore, replaces the root .dockerignore):
#   docker build -f infra/docker/service.Dockerfile \
#     --build-arg SERVICE=gateway --build-arg PORT=8080 \
#     --build-arg VERSION=2026.11.25 --build-arg REVISION=$(git rev-parse HEAD) \
#     --build-arg CREATED=$(date -u +%Y-%m-%dT%H:%M:%SZ) \
#     -t registry.example.com/wdr/gateway:2026.11.25 .
#   ports: gateway 8080, fetch-orchestrator 8081, billing-ledger 8082, browser-renderer 8083,
#          recipe-extractor 8084, webhook-dispatcher 8085
# The pruned tree of every service is checked by ./dev test (infra/docker/check-prune.mjs): the same
# `turbo prune` and workspace selection as below, without Docker.
#
# One image runs both the service (default CMD) and its database migrations, from the same
# WORKDIR (see the "migrate" initContainer in k8s/base/<service>.yaml):
#   npx --no-install wdr-prisma migrate deploy

ARG NODE_IMAGE=node:24.21.0-bookworm-slim
ARG SERVICE

# ------------------------------------------------------------------------------------------ prune
# turbo prune @wdr/$SERVICE --docker: the service's workspaces (and those it builds with) in
# /out/json (package.json files only, for the dependency layer) and /out/full (sources), and a
# lockfile cut down to them. turbo is the version the root package.json pins. The cut lockfile is
# then checked against the committed one: every package it lists must have the committed version.
FROM ${NODE_IMAGE} AS prune
ARG SERVICE
RUN test -n "$SERVICE" || (echo 'build with --build-arg SERVICE=<service>' >&2; exit 1)
ENV TURBO_TELEMETRY_DISABLED=1 NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/root/.npm \
    npx --yes "turbo@$(node -p "require('./package.json').devDependencies.turbo")" prune "@wdr/${SERVICE}" --docker --out-dir /out \
 && node -e "const was = require('./package-lock.json').packages, cut = require('/out/package-lock.json').packages; const drift = Object.keys(cut).filter((k) => k !== '' && !/^(apps|packages)\/[^/]+$/.test(k) && cut[k].version !== was[k]?.version); if (drift.length) { console.error('pruned lockfile differs from package-lock.json:', drift); process.exit(1); }" \
 && cp tsconfig.base.json .nvmrc /out/full/

# ------------------------------------------------------------------------------------------ build
FROM ${NODE_IMAGE} AS build
ARG SERVICE
ENV CI=true \
    TURBO_TELEMETRY_DISABLED=1 \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false \
    NPM_CONFIG_AUDIT=false
WORKDIR /srv/wdr

# 1. Dependencies of the pruned workspaces, in their own layer (cached until a manifest or the
#    lockfile changes). prisma-engine is copied whole (a small package of .mjs files) because its
#    bin, wdr-prisma, must exist when npm links it.
#    `npm install` + a drift check instead of `npm ci`: the lockfile lists platform packages
#    (@turbo/*, @unrs/*) for Linux only, because the registry mirror it is resolved against carries
#    nothing else, and npm ci refuses such a lockfile (see ensure_deps in ./dev). The check fails
#    the build if npm installed anything other than what the (pruned) lockfile says.
#    --ignore-scripts: the only install scripts in the lockfile are Prisma's engine download (not
#    used: the schema engine is the WASM shim in packages/prisma-engine) and a dev-only file watcher.
COPY --from=prune /out/json/ ./
COPY --from=prune /out/package-lock.json ./
COPY --from=prune /out/full/packages/prisma-engine/ packages/prisma-engine/
RUN --mount=type=cache,target=/root/.npm \
    cp package-lock.json /tmp/package-lock.pruned.json \
 && npm install --ignore-scripts \
 && node -e "const was = require('/tmp/package-lock.pruned.json').packages, now = require('./package-lock.json').packages; const drift = Object.keys(was).filter((k) => now[k]?.version !== was[k].version); if (drift.length) { console.error('installed tree differs from the pruned lockfile:', drift); process.exit(1); }"

# 2. Sources and build: only the pruned workspaces are here. The service's own code generation
#    (Prisma client, + tsoa routes for the gateway), then tsc for it and its workspace dependencies
#    in dependency order. --only keeps turbo from running @wdr/contracts' generate step, which reads
#    the gateway's controllers (not in a pruned tree) to rewrite files that are committed anyway.
COPY --from=prune /out/full/ ./
RUN npx turbo run generate --filter=@wdr/${SERVICE} --only \
 && npx turbo run build --filter=@wdr/${SERVICE}... --only --concurrency=1

# 3. Production dependencies only: npm prune --omit=dev drops the dev packages, then
#    runtime-workspaces.mjs deletes the workspaces only needed to build (@wdr/testkit) and npm's
#    links to them, keeping the service, its `dependencies` workspaces and @wdr/prisma-engine (the
#    migrations). The Prisma CLI survives the prune (a peerOptional dependency of @prisma/client),
#    which is what lets this image run its own migrations; the checks fail the build otherwise.
COPY infra/docker/runtime-workspaces.mjs /tmp/runtime-workspaces.mjs
RUN npm prune --omit=dev --ignore-scripts \
 && node /tmp/runtime-workspaces.mjs "${SERVICE}" --apply \
 && test -f node_modules/prisma/package.json \
 && test -x node_modules/.bin/wdr-prisma \
 && test ! -e packages/testkit

# ---------------------------------------------------------------------------------------- runtime
FROM ${NODE_IMAGE} AS runtime
ARG SERVICE
ARG PORT=8080
ARG VERSION=dev
ARG REVISION=unknown
ARG CREATED
# The repository URL, for org.opencontainers.image.source (left empty when not given).
ARG SOURCE=
ARG NODE_IMAGE

# OCI image annotations (https://github.com/opencontainers/image-spec/blob/main/annotations.md).
LABEL org.opencontainers.image.title="wdr-${SERVICE}" \
      org.opencontainers.image.description="wdr ${SERVICE}: one service of the web data retrieval platform" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.vendor="wdr" \
      org.opencontainers.image.base.name="docker.io/library/${NODE_IMAGE}"

# tini as PID 1 so child processes (Chromium's) are reaped and SIGTERM still reaches node. The
# browser-renderer also gets Debian's Chromium (what CHROMIUM_PATH points at) and fonts.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini ca-certificates \
 && if [ "$SERVICE" = browser-renderer ]; then apt-get install -y --no-install-recommends chromium fonts-liberation; fi \
 && rm -rf /var/lib/apt/lists/*

# HOST: the code's default (127.0.0.1) is unreachable from outside the container. npx (used for
# migrations) keeps its cache and logs in /tmp and Prisma's update check is off, so a read-only root
# filesystem with a writable /tmp is enough.
# glibc's allocator: two arenas, not eight per core, each holding freed memory; free memory past
# 1 MB at an arena's top given back (packages/testkit SERVICE_PROCESS_ENV, npm start and ./dev: the same).
ENV NODE_ENV=production \
    MALLOC_ARENA_MAX=2 \
    MALLOC_TRIM_THRESHOLD_=1048576 \
    HOST=0.0.0.0 \
    PORT=${PORT} \
    NPM_CONFIG_CACHE=/tmp/.npm \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    CHECKPOINT_DISABLE=1 \
    CHROMIUM_PATH=/usr/bin/chromium \
    HOME=/tmp
WORKDIR /srv/wdr/apps/${SERVICE}

# Only what runs: the pruned node_modules, the runtime workspaces left in packages/ (contracts, kit,
# prisma-engine; the links in node_modules point at them) and this service's compiled code, Prisma
# schema, migrations and config. Files stay owned by root, so
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
# --max-semi-space-size=8: the young generation stays at most 2 x 8 MB instead of Node 24's 2 x 32 MB,
# which start-up grows and idle keeps resident (packages/testkit SERVICE_NODE_ARGS, npm start: the same).
CMD ["node", "--max-semi-space-size=8", "dist/main.js"]
