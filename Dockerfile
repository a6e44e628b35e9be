# The chamvi worker image: `docker compose up` builds it (see docker-compose.yml).
# Stage 1 packs the package as npm would publish it (`npm pack` builds it first) and writes the
# worker app that depends on the tarball (scripts/image-app.js), with the demo agents module as
# its own code (the package does not ship the demo). Stage 2 installs that app in a clean folder
# the way a user installs the package: the tarball plus its peers (Temporal SDK, ai, zod) and what
# the demo worker needs (pg, @ai-sdk/openai, @octokit/rest), all as dependencies, so
# NODE_ENV=production keeps them. test/product/image-runtime.test.ts runs these steps without Docker.
FROM node:24.11.1-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json README.md LICENSE ./
COPY src ./src
COPY common ./common
COPY workflows ./workflows
COPY activities ./activities
COPY worker ./worker
COPY client ./client
COPY testing ./testing
COPY demo ./demo
COPY cli ./cli
COPY scripts/image-app.js ./scripts/image-app.js
RUN npm pack --pack-destination /app
RUN node scripts/image-app.js /app && cd /app && npm install --package-lock-only --no-audit --no-fund --ignore-scripts

FROM node:24.11.1-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force
USER node
# The worker answers GET http://127.0.0.1:8080/health while it polls its task queue (see README, Operations).
ENV CHAMVI_HEALTH_PORT=8080
ENTRYPOINT ["node", "node_modules/@chamvi/temporal/dist/cli/main.js"]
CMD ["worker"]
