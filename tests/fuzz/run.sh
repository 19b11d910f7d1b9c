#!/usr/bin/env bash
# Property-based fuzzing of the API against its own OpenAPI document (schemathesis): starts `trove serve` on a
# fresh SQLite data directory with the demo inventory, takes a token from `trove token new`, and runs every
# operation of /api/openapi.json with all of schemathesis' checks, a fixed seed and a bounded number of examples
# per operation. Any finding (a 500, an answer the document does not describe, a value of the wrong type taken)
# fails the run.
#
# Needs: cargo and python3 (schemathesis goes into a venv under ~/.cache/trove-ci, pinned below).
# FUZZ_EXAMPLES (default 100, about 75 s here) bounds the examples per operation; FUZZ_SEED (default 20260) fixes the data.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${FUZZ_VENV:-$HOME/.cache/trove-ci/venv}"
schemathesis_version="4.32.5"

if ! "$venv/bin/st" --version 2>/dev/null | grep -q "$schemathesis_version"; then
  echo "fuzz: installing schemathesis $schemathesis_version into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "schemathesis==$schemathesis_version"
fi

echo "fuzz: building trove"
(cd "$root" && cargo build --quiet -p trove)
bin="${TROVE_BIN:-${CARGO_TARGET_DIR:-$root/target}/debug/trove}"

data="$(mktemp -d "${TMPDIR:-/tmp}/trove-fuzz-XXXXXX")"
report="$data/report"
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$data"
}
trap cleanup EXIT

port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
# A Model API that is never reached: a budget of nothing refuses every model call (402, documented) before
# anything is sent, after the route has read and checked its input. Nothing is paid for, and no 5xx is expected.
unset DATABASE_URL
export MODEL_API_KEY="fuzz" MODEL_API_URL="http://127.0.0.1:9" SPEND_MONTHLY_LIMIT_USD="0"
export TROVE_DATA_DIR="$data/trove" TROVE_BIND="127.0.0.1:$port" RUST_LOG="${RUST_LOG:-warn}"
# A public URL with a host name, so the passkey routes work (with an IP address they answer 503: browsers refuse
# an IP address as the relying party) and are fuzzed through.
export TROVE_PUBLIC_URL="http://localhost:$port"
# Product lookups go nowhere: a generated code with a right check digit would otherwise reach Open Food Facts.
export TROVE_LOOKUP="off"

"$bin" demo >/dev/null
token="$("$bin" token new --name fuzz)"
"$bin" serve >"$data/server.log" 2>&1 &
server=$!
for _ in $(seq 1 300); do
  curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
  kill -0 "$server" 2>/dev/null || { cat "$data/server.log"; echo "fuzz: trove did not start" >&2; exit 1; }
  sleep 0.1
done

# Checks: all of them. Phases: schemathesis' defaults (examples, coverage, fuzzing, stateful).
# Excluded, with the reason:
# - positive_data_acceptance: it expects every body the schema allows to be taken (2xx), but the API answers a
#   well-formed request with 404, 409 and 422 when the household's data says no (an unknown id, a reserved
#   item, a component of another household), and the document cannot state those rules; they are documented
#   as such responses instead.
# One worker: with two, CPython 3.11's `ast` module raced inside hypothesis ("AST constructor recursion depth
# mismatch", a runtime error of the tool, not a finding).
# Excluded operation: DELETE /tokens/{id}, which would revoke the fuzzer's own token (id 1) at random and
# leave the rest of the run answering 401; tests/it/people.rs covers it.
status=0
# Run from the scratch directory: schemathesis keeps its own files in the working directory.
cd "$data"
"$venv/bin/st" run "http://127.0.0.1:$port/api/openapi.json" \
  --header "Authorization: Bearer $token" \
  --checks all \
  --exclude-checks positive_data_acceptance \
  --exclude-path '/tokens/{id}' \
  --seed "${FUZZ_SEED:-20260}" \
  --max-examples "${FUZZ_EXAMPLES:-100}" \
  --workers 1 \
  --request-timeout 30 \
  --report junit --report-dir "$report" \
  --generation-database none \
  --no-color || status=$?

if [ "$status" -ne 0 ]; then
  echo "fuzz: findings above; the server's log:" >&2
  grep -E "ERROR|panicked" "$data/server.log" | head -n 40 >&2 || true
fi
exit "$status"
