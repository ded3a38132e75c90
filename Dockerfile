# One image for every role of the product; the command picks the role:
#   gateway (default)  node --import tsx api/main.ts
#   worker             node --import tsx worker/main.ts
#   migrations         node --import tsx scripts/migrate.ts
FROM node:24-bookworm-slim

ENV NODE_ENV=production
WORKDIR /app

# Dependencies first so source edits reuse this layer. tsx is a runtime dependency, so
# --omit=dev keeps it (and drops the test/bench tooling and the `node` devDependency).
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

COPY tsconfig.json ./
COPY api ./api
COPY activities ./activities
COPY workflows ./workflows
COPY worker ./worker
COPY schema ./schema
COPY domain ./domain
COPY platform ./platform
COPY data ./data
COPY adapters ./adapters
COPY services ./services
COPY scripts ./scripts
COPY fixtures ./fixtures
COPY sandbox ./sandbox

# Files stay root-owned (read-only for the process); the app runs unprivileged. DATA_DIR (`.data`) is its one
# writable folder: only the sandbox processor keeps anything there (its ledger), on a volume of its own.
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node

EXPOSE 3000
CMD ["node", "--import", "tsx", "api/main.ts"]
