#!/usr/bin/env bash
# The project's entry point for a fresh machine (see README.md):
#   scripts/dev.sh install   Node >= 22, npm packages, Temporal binaries (offline-safe)
#   scripts/dev.sh test      the whole test suite against real Temporal, PostgreSQL and NATS
#   scripts/dev.sh <npm script> [args]   any npm script with the right Node on PATH
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT"
cmd="${1:-test}"
shift || true
case "$cmd" in
  install)
    ensure_node
    ensure_temporal
    npm ci --no-audit --no-fund
    ;;
  test)
    ensure_node
    ensure_temporal
    ensure_services
    npm test -- "$@"
    ;;
  *)
    ensure_node
    ensure_temporal
    npm run "$cmd" -- "$@"
    ;;
esac
