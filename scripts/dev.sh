#!/usr/bin/env bash
# The project's entry point for a fresh machine (see README.md, "Two commands"); `npm start` and
# `npm test` run it, so a fresh clone needs nothing else:
#   scripts/dev.sh start [args]   the main job (the demo, demo/main.ts): installs what is missing, builds, runs
#   scripts/dev.sh test [args]    the test suite (jest args pass through: a file, -t <name>) against real
#                                 Temporal, PostgreSQL and NATS, installing what is missing first
#   scripts/dev.sh install        Node >= 22, the npm packages (npm ci) and the Temporal binaries
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
  start)
    ensure_node
    ensure_temporal
    ensure_packages
    npm run build
    exec node dist/demo/main.js "$@"
    ;;
  test)
    ensure_node
    ensure_temporal
    ensure_services
    ensure_packages
    # Not `npm test`: that script runs this one.
    exec node --experimental-vm-modules node_modules/jest/bin/jest.js "$@"
    ;;
  *)
    ensure_node
    ensure_temporal
    npm run "$cmd" -- "$@"
    ;;
esac
