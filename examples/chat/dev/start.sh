#!/usr/bin/env bash
# `npm run example:chat`: the chat app on the embedded defaults (a Temporal dev server from the
# project's binaries, the SQLite store in .chamvi/chat, a local GitHub-like tracker, a worker
# process, the Next.js app built when its build is stale). Like `npm start`, it first provides
# Node 22+, the Temporal binaries and the npm packages, and builds the package: the app imports it
# as users do (`@chamvi/temporal/client`, from dist/).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../../scripts/env.sh"
cd "$ROOT"
ensure_node >/dev/null
ensure_temporal
ensure_packages
npm run build >/dev/null
exec node --import tsx examples/chat/dev/main.ts "$@"
