#!/usr/bin/env bash
# `npm run example:chat`: the chat page on the embedded defaults (a Temporal dev server from the
# project's binaries, the SQLite store in .chamvi/, a local GitHub-like tracker, a worker process).
# Like `npm start`, it first provides Node 22+, the Temporal binaries and the npm packages.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../../scripts/env.sh"
cd "$ROOT"
ensure_node >/dev/null
ensure_temporal
ensure_packages
exec node --import tsx examples/chat/dev/main.ts "$@"
