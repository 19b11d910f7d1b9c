#!/usr/bin/env bash
# Runs the web page's end-to-end tests: builds `trove` if needed, installs the test package's locked npm
# dependencies, then the suite starts a fake Model API, `trove serve --demo` on a fresh data directory and headless
# Chromium, runs every flow, and stops them all. Screenshots land in target/screenshots/.
#
# Needs: cargo, node 20+ with npm, and Debian's Chromium (`apt-get install -y chromium chromium-driver`).
# E2E_DOCS=1 also refreshes docs/inventory.png and docs/proposals.png.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
chromium="${CHROMIUM:-/usr/bin/chromium}"

if [ ! -x "$chromium" ]; then
  echo "e2e: no Chromium at $chromium; install it with: apt-get install -y chromium chromium-driver" >&2
  exit 1
fi

echo "e2e: building trove"
(cd "$root" && cargo build --quiet -p trove)

echo "e2e: installing the test package (npm ci)"
(cd "$here" && npm ci --no-audit --no-fund --loglevel=error)

echo "e2e: running the suite"
cd "$here"
export CHROMIUM="$chromium"
export TROVE_BIN="${TROVE_BIN:-${CARGO_TARGET_DIR:-$root/target}/debug/trove}"
exec node --test --test-concurrency=1 --test-reporter=spec e2e.test.mjs
