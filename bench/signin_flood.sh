#!/usr/bin/env bash
# A flood of wrong sign-ins against one server: CLIENTS (default 256) clients at once, each sending wrong
# sign-ins back to back for SECONDS (default 10), every one under a new name and from a new address (the server
# trusts loopback as a proxy and each request names its client in X-Forwarded-For, so neither the per-name nor the
# per-address throttle fires: the worst case, a botnet). Meanwhile a prober times /health and an authenticated
# GET /api/items one after the other, as it did with the server idle just before. Prints the server's peak resident
# memory (VmHWM) and the probes' p50 idle and under the flood against their target (within 3x of idle). Fails
# (a CI check) when peak RSS is 300 MB or more, or a flood answer is not 401, 429 or 503 with Retry-After; the
# latency ratios are a time and are reported, not enforced.
#
# Builds the release binary unless TROVE_BIN is set. DATABASE_URL selects PostgreSQL (default: a fresh SQLite).
# Needs: cargo, curl, python3.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
root="$(cd "$here/.." && pwd)"
clients="${CLIENTS:-256}"
seconds="${SECONDS_OF_FLOOD:-10}"
# RETRY=honour: each client waits the Retry-After of a 429 or 503 before its next sign-in (as HTTP client
# libraries do); RETRY=ignore (the default): each sends its next one at once, a hostile flood at the machine's
# full rate, where the client's own CPU shares the server's two cores.
retry="${RETRY:-ignore}"
target_mb=300

if [ -z "${TROVE_BIN:-}" ]; then
  echo "signin_flood: building trove (release)"
  (cd "$root" && cargo build --quiet --release -p trove)
fi
bin="${TROVE_BIN:-${CARGO_TARGET_DIR:-$root/target}/release/trove}"

data="$(mktemp -d "${TMPDIR:-/tmp}/trove-signin-flood-XXXXXX")"
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$data"
}
trap cleanup EXIT

port="$(free_port)"
unset MODEL_API_KEY
export TROVE_DATA_DIR="$data/trove" TROVE_BIND="127.0.0.1:$port" RUST_LOG="${RUST_LOG:-warn}"
export TROVE_TRUSTED_PROXIES="127.0.0.1"
backend="SQLite"
if [ -n "${DATABASE_URL:-}" ]; then backend="PostgreSQL"; fi
"$bin" migrate >/dev/null
token="$("$bin" token new --member bench)"
"$bin" serve >"$data/server.log" 2>&1 &
server=$!
wait_for_trove "http://127.0.0.1:$port" "$server" "$data/server.log" signin_flood
idle_kb="$(awk '/^VmRSS/ {print $2}' "/proc/$server/status")"

set +e
python3 - "$port" "$token" "$clients" "$seconds" "$retry" <<'PY'
import http.client, json, statistics, sys, threading, time

port, token, clients, seconds = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
honour = sys.argv[5] == "honour"

def probe(path, headers):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    start = time.perf_counter()
    c.request("GET", path, headers=headers)
    r = c.getresponse()
    r.read()
    took = time.perf_counter() - start
    c.close()
    if r.status != 200:
        raise SystemExit(f"signin_flood: {path} answered {r.status}")
    return took

auth = {"Authorization": f"Bearer {token}"}
def probes(until=None, rounds=None):
    health, items = [], []
    n = 0
    while (until is None or time.perf_counter() < until) and (rounds is None or n < rounds):
        health.append(probe("/health", {}))
        items.append(probe("/api/items?limit=20", auth))
        n += 1
    return health, items

probes(rounds=20)  # warm up
idle_health, idle_items = probes(rounds=100)

counts, lock, stop = {}, threading.Lock(), threading.Event()
def flood(k):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    n = 0
    while not stop.is_set():
        n += 1
        name = f"flood{k}x{n}"
        addr = f"10.{k // 256}.{k % 256}.{n % 250 + 1}"
        body = json.dumps({"name": name, "password": "xxxxxxxxxxxx"})
        try:
            c.request("POST", "/api/session", body=body,
                      headers={"Content-Type": "application/json", "X-Forwarded-For": addr})
            r = c.getresponse()
            r.read()
            status = r.status
            if status == 503 and r.getheader("Retry-After") is None:
                status = "503 without Retry-After"
            elif status in (429, 503) and honour:
                stop.wait(float(r.getheader("Retry-After")))
        except Exception as e:  # a reset connection counts as a failure of the server
            status = f"error {type(e).__name__}"
            c.close()
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        with lock:
            counts[status] = counts.get(status, 0) + 1

threads = [threading.Thread(target=flood, args=(k,)) for k in range(clients)]
for t in threads: t.start()
time.sleep(0.5)
flood_health, flood_items = probes(until=time.perf_counter() + seconds)
stop.set()
for t in threads: t.join()

ms = lambda xs: statistics.median(xs) * 1000
print(f"signin_flood: {clients} clients for {seconds:.0f} s, Retry-After {'honoured' if honour else 'ignored'}: answers {dict(sorted((str(k), v) for k, v in counts.items()))}")
ok = True
for name, idle, busy in (("/health", idle_health, flood_health), ("GET /api/items", idle_items, flood_items)):
    ratio = ms(busy) / ms(idle)
    print(f"signin_flood: {name} p50 idle {ms(idle):.2f} ms, under the flood {ms(busy):.2f} ms ({len(busy)} probes): {ratio:.2f}x; target within 3x")
    if ratio > 3:
        print(f"signin_flood: {name} over 3x of idle")
bad = {k: v for k, v in counts.items() if k not in (401, 429, 503)}
if bad:
    print(f"signin_flood: unexpected answers {bad}", file=sys.stderr)
    ok = False
sys.exit(0 if ok else 1)
PY
verdict=$?
set -e

peak_kb="$(awk '/^VmHWM/ {print $2}' "/proc/$server/status")"
peak_mb=$((peak_kb / 1024))
echo "signin_flood: $backend, server RSS idle $((idle_kb / 1024)) MB, peak (VmHWM) ${peak_mb} MB; target under ${target_mb} MB"
if [ "$peak_mb" -ge "$target_mb" ]; then
  echo "signin_flood: over the memory target" >&2
  exit 1
fi
if [ "$verdict" -ne 0 ]; then
  grep -E "ERROR|panicked" "$data/server.log" | head -n 20 >&2 || true
  echo "signin_flood: an unexpected answer" >&2
  exit 1
fi
