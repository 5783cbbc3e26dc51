# ForgeEnv as an OpenEnv environment (openenv.yaml): `forgeenv serve` on $PORT (8000: the container
# port OpenEnv's Docker launcher maps; a Hugging Face Docker Space reads it from the README's
# `app_port`). Simulated mode (our stand-in libraries, python3 only), runs sandboxed by bubblewrap
# where the container may create namespaces; where it may not, set FORGEENV_SANDBOX=off to accept
# unsandboxed runs (limits and the process-group kill still apply) and silence the warning.
#   docker build -t forge-env . && docker run -p 8000:8000 -e FORGEENV_TOKEN="$(openssl rand -hex 32)" forge-env
# test/unit/dockerLayout.test.ts starts this image's runtime layout the way CMD does (no Docker needed).
# The server binds 0.0.0.0, so it refuses to start without FORGEENV_TOKEN (clients send it as
# `Authorization: Bearer`; /health, the HEALTHCHECK below, needs none).
# Limits: FORGEENV_MAX_SESSIONS (default 64; set it to at least your generation batch size),
# FORGEENV_MAX_RUNS (default: the container's cores).
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN node scripts/build.mjs --production --no-tests

FROM node:22-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 curl bubblewrap \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/bin ./bin
COPY --from=build /app/dist/cli.js /app/dist/cli.js.map /app/dist/diffWorker.js /app/dist/scrubWorker.js ./dist/
COPY --from=build /app/resources ./resources
# Spaces run containers as uid 1000; scripts run in per-run temporary folders under /tmp.
USER 1000
ENV FORGEENV_MAX_SESSIONS=64
ENV PORT=8000
ENV FORGEENV_SANDBOX=auto
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 CMD curl -fs "http://localhost:$PORT/health" || exit 1
CMD ["sh", "-c", "exec node bin/forgeenv.js serve --host 0.0.0.0 --sandbox \"$FORGEENV_SANDBOX\" --max-sessions \"$FORGEENV_MAX_SESSIONS\" ${FORGEENV_MAX_RUNS:+--max-runs \"$FORGEENV_MAX_RUNS\"}"]
