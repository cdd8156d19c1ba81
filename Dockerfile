# The signing service in a container: docs/deploy.md. It is not built by this repository's tests
# (no container engine there), so it stays deliberately plain.
#
#   docker build -t esign .
#   docker run -d -p 127.0.0.1:3000:3000 -v esign-data:/data --env-file /etc/esign/env esign

# --- Build: install (native modules compile here), bundle, drop the development packages ---
FROM node:20-bookworm-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV ELECTRON_SKIP_BINARY_DOWNLOAD=1
COPY . .
RUN npm ci && npm run build && npm prune --omit=dev

# --- Run: the build, a user of its own, DATA_DIR on a volume ---
FROM node:20-bookworm-slim
RUN groupadd --system esign \
 && useradd --system --gid esign --home-dir /data --shell /usr/sbin/nologin esign \
 && mkdir /data && chown esign:esign /data && chmod 0700 /data
WORKDIR /app
COPY --from=build /app /app
ENV NODE_ENV=production \
    APP_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
USER esign
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "--enable-source-maps", "--max-semi-space-size=2", "server/dist/main.js"]
