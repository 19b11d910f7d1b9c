#!/usr/bin/env bash
# Trove's HTTP answers next to their ceilings, side by side in one run (issue 15; BENCHMARKS.md; docs/perf/http.md).
#
# Builds the release `trove` binary and the ceiling (`bin/benches/http_ceiling.rs`), makes two stores (the demo
# inventory, and ITEMS generated items in our CSV format imported with `trove import`), a token for each
# (`trove token new`), starts Trove on each and a bare poem server sending the bytes Trove answered for the same
# paths, then runs `wrk` in interleaved rounds and prints the medians and ratios:
#
#   - `GET /api/items?limit=50` (demo store, and ITEMS items) against the bare server sending the same bytes;
#   - `GET /health` against the bare server (Trove with its default access log: `TROVE_ACCESS_LOG` unset);
#   - `GET /api/items/{id}` (ITEMS items): its server time against the raw read of the same row. Server time is
#     measured at one connection, where a request's latency is 1 / throughput: the latency of `/health` on the
#     same server at one connection (the client, the loopback, HTTP parsing and the answer's writing, with next
#     to no work) is taken off the latency of the item's route. The raw read is the row's `SELECT *` on one
#     SQLite connection with the statement prepared once, every column decoded (`http_ceiling row`).
#
# Environment: ITEMS (100000), CONNECTIONS (16), DURATION (seconds of one wrk run, 5), ROUNDS (3),
# CARGO_TARGET_DIR (target), SKIP_BUILD (set: take the binaries as built), CEILING_BIN, TROVE_BIN (another `trove` binary to measure, such as a build of an earlier commit;
# default the one built here). Needs wrk, curl, sqlite3.
set -euo pipefail
cd "$(dirname "$0")/.."

ITEMS=${ITEMS:-100000}
CONNECTIONS=${CONNECTIONS:-16}
# shellcheck source=bench/lib.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"
DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-3}
TARGET=${CARGO_TARGET_DIR:-target}
for tool in wrk curl sqlite3; do
    command -v "$tool" >/dev/null || { echo "bench/run.sh needs $tool (apt-get install -y $tool)" >&2; exit 1; }
done

[ -n "${SKIP_BUILD:-}" ] || cargo build --release -p trove --features ceiling --bins
CEILING="${CEILING_BIN:-$TARGET/release/http_ceiling}"
TROVE="${TROVE_BIN:-$TARGET/release/trove}"
[ -x "$TROVE" ] && [ -x "$CEILING" ] || { echo "build failed" >&2; exit 1; }

WORK=$(mktemp -d /tmp/trove-bench.XXXXXX)
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

trove_in() { # DIR ARGS...: the trove command on the store in DIR (SQLite), no model backend
    local dir=$1
    shift
    env -u MODEL_API_KEY -u DATABASE_URL TROVE_DATA_DIR="$dir" RUST_LOG=warn "$TROVE" "$@"
}

echo "== stores"
trove_in "$WORK/demo" demo
"$CEILING" csv "$WORK/items.csv" "$ITEMS"
/usr/bin/time -f "import: %e s, peak RSS %M KB" env -u MODEL_API_KEY -u DATABASE_URL TROVE_DATA_DIR="$WORK/big" \
    RUST_LOG=warn "$TROVE" import "$WORK/items.csv"
DEMO_TOKEN=$(trove_in "$WORK/demo" token new --name bench | tail -1)
BIG_TOKEN=$(trove_in "$WORK/big" token new --name bench | tail -1)

start() { # DIR PORT: Trove on the store in DIR; the default log settings of `trove serve` (access log off)
    env -u MODEL_API_KEY -u DATABASE_URL -u RUST_LOG -u TROVE_ACCESS_LOG TROVE_DATA_DIR="$1" \
        TROVE_BIND="127.0.0.1:$2" "$TROVE" serve >"$WORK/serve-$2.log" 2>&1 &
    PIDS+=($!)
}
wait_up() { # PORT
    wait_for_trove "http://127.0.0.1:$1" "" "$WORK/serve-$1.log" bench/run.sh
}
start "$WORK/demo" 18081
start "$WORK/big" 18082
wait_up 18081
wait_up 18082

# The bytes Trove answers, which the bare servers send for the same paths.
curl -fs -H "Authorization: Bearer $DEMO_TOKEN" "http://127.0.0.1:18081/api/items?limit=50" >"$WORK/demo-items.json"
curl -fs -H "Authorization: Bearer $BIG_TOKEN" "http://127.0.0.1:18082/api/items?limit=50" >"$WORK/big-items.json"
curl -fs "http://127.0.0.1:18081/health" >"$WORK/health.json"
"$CEILING" serve 127.0.0.1:18091 "$WORK/demo-items.json" "$WORK/health.json" &
PIDS+=($!)
"$CEILING" serve 127.0.0.1:18092 "$WORK/big-items.json" "$WORK/health.json" &
PIDS+=($!)
wait_up 18091
wait_up 18092
for port in 18091 18092; do # the bare servers send exactly the bytes Trove sent
    cmp -s <(curl -fs "http://127.0.0.1:$port/api/items?limit=50") \
        "$WORK/$([ $port = 18091 ] && echo demo || echo big)-items.json" || { echo "bytes differ" >&2; exit 1; }
done

HOUSEHOLD=$(sqlite3 "$WORK/big/trove.sqlite3" "SELECT household_id FROM items LIMIT 1")
ITEM=$(sqlite3 "$WORK/big/trove.sqlite3" "SELECT id FROM items ORDER BY id LIMIT 1 OFFSET $((ITEMS / 2))")
curl -fs -H "Authorization: Bearer $BIG_TOKEN" "http://127.0.0.1:18082/api/items/$ITEM" >/dev/null

rps() { # CONNECTIONS URL [TOKEN]: requests per second of one wrk run; fails on any non-2xx answer
    local out
    out=$(wrk -t"$(($1 < 2 ? 1 : 2))" -c"$1" -d"${DURATION}s" ${3:+-H "Authorization: Bearer $3"} "$2")
    if grep -q "Non-2xx" <<<"$out"; then
        echo "non-2xx answers from $2" >&2
        exit 1
    fi
    awk '/^Requests\/sec/ {print $2}' <<<"$out"
}

declare -A RUNS
measure() { # NAME CONNECTIONS URL [TOKEN]
    local r
    r=$(rps "$2" "$3" "${4:-}")
    RUNS[$1]="${RUNS[$1]:-} $r"
    printf '  %-22s %10s req/s\n' "$1" "$r"
}
median() { tr ' ' '\n' <<<"${RUNS[$1]}" | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "== wrk: $ROUNDS interleaved rounds of ${DURATION} s, $CONNECTIONS connections (the /api/items/{id} pair at 1)"
for round in $(seq 1 "$ROUNDS"); do
    echo "round $round"
    measure demo-list "$CONNECTIONS" "http://127.0.0.1:18081/api/items?limit=50" "$DEMO_TOKEN"
    measure demo-list-bare "$CONNECTIONS" "http://127.0.0.1:18091/api/items?limit=50" "$DEMO_TOKEN"
    measure big-list "$CONNECTIONS" "http://127.0.0.1:18082/api/items?limit=50" "$BIG_TOKEN"
    measure big-list-bare "$CONNECTIONS" "http://127.0.0.1:18092/api/items?limit=50" "$BIG_TOKEN"
    measure health "$CONNECTIONS" "http://127.0.0.1:18082/health"
    measure health-bare "$CONNECTIONS" "http://127.0.0.1:18092/health"
    measure item-1conn 1 "http://127.0.0.1:18082/api/items/$ITEM" "$BIG_TOKEN"
    measure health-1conn 1 "http://127.0.0.1:18082/health"
done
ROW_US=$("$CEILING" row "sqlite://$WORK/big/trove.sqlite3" "$HOUSEHOLD" "$ITEM" 5000)

echo
echo "== medians ($TROVE; git $(git rev-parse --short HEAD)$(git diff --quiet || echo ', with local changes'))"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
printf '| what | Trove | ceiling | ratio |\n|---|---:|---:|---:|\n'
printf '| `GET /api/items?limit=50`, demo store (%s KB) | %s req/s | %s req/s (bare, same bytes) | %s |\n' \
    "$(($(stat -c %s "$WORK/demo-items.json") / 1000))" "$(median demo-list)" "$(median demo-list-bare)" \
    "$(ratio "$(median demo-list)" "$(median demo-list-bare)")"
printf '| `GET /api/items?limit=50`, %s items (%s KB) | %s req/s | %s req/s (bare, same bytes) | %s |\n' \
    "$ITEMS" "$(($(stat -c %s "$WORK/big-items.json") / 1000))" "$(median big-list)" "$(median big-list-bare)" \
    "$(ratio "$(median big-list)" "$(median big-list-bare)")"
printf '| `GET /health` (access log off) | %s req/s | %s req/s (bare) | %s |\n' \
    "$(median health)" "$(median health-bare)" "$(ratio "$(median health)" "$(median health-bare)")"
SERVER_US=$(awk -v i="$(median item-1conn)" -v h="$(median health-1conn)" 'BEGIN {printf "%.1f", 1e6 / i - 1e6 / h}')
printf '| `GET /api/items/{id}`, %s items: server time (1 / req/s at 1 connection, less /health'"'"'s) | %s us (%s req/s; /health %s req/s) | %s us (raw row read) | %s |\n' \
    "$ITEMS" "$SERVER_US" "$(median item-1conn)" "$(median health-1conn)" "$ROW_US" "$(ratio "$SERVER_US" "$ROW_US")"
