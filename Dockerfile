# syntax=docker/dockerfile:1
# The agent execution memory service: a two-stage build, non-root at run time, the bundled
# embedding model inside (no network needed when running), a HEALTHCHECK on the readiness
# probe (/readyz). `docker compose up` (compose.yaml) runs it with PostgreSQL + pgvector.
#
# Offline builds (no registry reachable): fill the npm cache with `npm ci` on the host, then
#   podman build --network none -v $HOME/.npm:/root/.npm --build-arg NPM_FLAGS=--offline .

ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
ARG NPM_FLAGS=""
COPY package.json package-lock.json .npmrc ./
COPY packages/client/package.json ./packages/client/
RUN npm ci --ignore-scripts --no-audit --no-fund ${NPM_FLAGS}
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY src ./src
COPY server ./server
COPY commands ./commands
COPY scripts ./scripts
COPY migrations ./migrations
COPY models ./models
# The web console's sources: `npm run build` bundles them into dist/console (served at /console).
COPY console ./console
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund ${NPM_FLAGS}

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    SERVICE_HOST=0.0.0.0 \
    SERVICE_PORT=8000 \
    SERVICE_DATA_PATH=/data
WORKDIR /app
COPY --from=build /app/package.json /app/openapi.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin ./bin
COPY --from=build /app/migrations ./migrations
COPY --from=build /app/models ./models
# A numeric user needs no passwd entry in any base image; /data is its only writable place.
RUN mkdir -p /data && chown 10001:10001 /data
USER 10001:10001
VOLUME ["/data"]
EXPOSE 8000
# Healthy while the server is ready: its readiness probe /readyz (no key, no audit event, no
# rate limit) answers 200 once storage answers a query; 503 (storage down) or no answer is not.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.SERVICE_PORT||8000)+'/readyz').then(r=>process.exit(r.status===200?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "bin/service.js"]
CMD ["serve"]
