# ForgeEnv as an OpenEnv environment (openenv.yaml): `forgeenv serve` on port 7860, the port a
# Hugging Face Docker Space expects. Simulated mode (our stand-in libraries, python3 only).
#   docker build -t forge-env . && docker run -p 7860:7860 -e FORGEENV_TOKEN="$(openssl rand -hex 32)" forge-env
# The server binds 0.0.0.0, so it refuses to start without FORGEENV_TOKEN (clients send it as
# `Authorization: Bearer`; /health, the HEALTHCHECK below, needs none).
# Limits: FORGEENV_MAX_SESSIONS (default 64; set it to at least your generation batch size),
# FORGEENV_MAX_RUNS (default: the container's cores).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN node scripts/build.mjs --production --no-tests

FROM node:20-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 curl \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/bin ./bin
COPY --from=build /app/dist/cli.js /app/dist/cli.js.map /app/dist/diffWorker.js /app/dist/scrubWorker.js ./dist/
COPY --from=build /app/resources ./resources
# Spaces run containers as uid 1000; scripts run in per-run temporary folders under /tmp.
USER 1000
ENV FORGEENV_MAX_SESSIONS=64
EXPOSE 7860
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 CMD curl -fs http://localhost:7860/health || exit 1
CMD ["sh", "-c", "exec node bin/forgeenv.js serve --host 0.0.0.0 --port 7860 --max-sessions \"$FORGEENV_MAX_SESSIONS\" ${FORGEENV_MAX_RUNS:+--max-runs \"$FORGEENV_MAX_RUNS\"}"]
