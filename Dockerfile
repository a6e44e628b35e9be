# The chamvi worker image: `docker compose up` builds it (see docker-compose.yml).
# Stage 1 compiles TypeScript with the dev dependencies; stage 2 ships the compiled dist/ with the
# runtime dependencies plus what the demo agents module needs (ai, zod, Octokit, the OpenAI provider).
FROM node:24.11.1-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY workflows ./workflows
COPY activities ./activities
COPY worker ./worker
COPY testing ./testing
COPY cli ./cli
RUN npm run build

FROM node:24.11.1-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts \
 && npm install --no-save --no-audit --no-fund --ignore-scripts ai@^7 zod@^4 @ai-sdk/openai@^4 @octokit/rest@^22 \
 && npm cache clean --force
COPY --from=build /app/dist ./dist
USER node
ENTRYPOINT ["node", "dist/cli/main.js"]
CMD ["worker"]
