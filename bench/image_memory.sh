#!/usr/bin/env bash
# Peak memory of the server under the worst-case photo: a PNG declaring 7000 x 7000 pixels of 16-bit RGBA (under
# the 50-megapixel cap; 392 MB decoded whole) that compresses to about 381 KB. Builds the release binary, starts
# `trove serve` on a fresh SQLite data directory, sends UPLOADS (default 8) of it at once to /api/intake/photo,
# checks that each is answered (200, or 503 with Retry-After when the queue of jobs is full), and prints the
# server's peak resident memory (VmHWM of /proc/PID/status) against the target of 300 MB.
#
# Needs: cargo, curl, python3. TROVE_BIN runs another build (for a before figure); UPLOADS sets the concurrency.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
uploads="${UPLOADS:-8}"
target_mb=300

if [ -z "${TROVE_BIN:-}" ]; then
  echo "image_memory: building trove (release)"
  (cd "$root" && cargo build --quiet --release -p trove)
fi
bin="${TROVE_BIN:-${CARGO_TARGET_DIR:-$root/target}/release/trove}"

data="$(mktemp -d "${TMPDIR:-/tmp}/trove-image-memory-XXXXXX")"
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$data"
}
trap cleanup EXIT

# The worst case: every row a filter byte and 7000 pixels of 8 zero bytes, deflated row by row (never whole).
python3 - "$data/worst.png" <<'EOF'
import struct, sys, zlib
width = height = 7000
def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
deflate = zlib.compressobj(9)
row = b"\0" * (1 + width * 8)
idat = b"".join(deflate.compress(row) for _ in range(height)) + deflate.flush()
header = struct.pack(">IIBBBBB", width, height, 16, 6, 0, 0, 0)  # 16-bit RGBA, not interlaced
with open(sys.argv[1], "wb") as f:
    f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", idat) + chunk(b"IEND", b""))
EOF
echo "image_memory: $(stat -c %s "$data/worst.png") bytes, 7000 x 7000 16-bit RGBA"

port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
unset DATABASE_URL MODEL_API_KEY
export TROVE_DATA_DIR="$data/trove" TROVE_BIND="127.0.0.1:$port" RUST_LOG="${RUST_LOG:-warn}"
"$bin" migrate >/dev/null
token="$("$bin" token new --member bench)"
"$bin" serve >"$data/server.log" 2>&1 &
server=$!
for _ in $(seq 1 300); do
  curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
  kill -0 "$server" 2>/dev/null || { cat "$data/server.log"; echo "image_memory: trove did not start" >&2; exit 1; }
  sleep 0.1
done
idle_kb="$(awk '/^VmRSS/ {print $2}' "/proc/$server/status")"

start="$(date +%s.%N)"
pids=()
for i in $(seq 1 "$uploads"); do
  curl -sS -o "$data/answer.$i" -D "$data/headers.$i" -w '%{http_code}' \
    -H "Authorization: Bearer $token" -F "image=@$data/worst.png;type=image/png" \
    "http://127.0.0.1:$port/api/intake/photo" >"$data/status.$i" &
  pids+=("$!")
done
for pid in "${pids[@]}"; do wait "$pid"; done
seconds="$(python3 -c "import time; print(f'{time.time() - $start:.1f}')")"

peak_kb="$(awk '/^VmHWM/ {print $2}' "/proc/$server/status")"
ok=0 busy=0 failed=0
for i in $(seq 1 "$uploads"); do
  status="$(cat "$data/status.$i")"
  if [ "$status" = "200" ]; then
    ok=$((ok + 1))
  elif [ "$status" = "503" ] && grep -qi '^retry-after:' "$data/headers.$i"; then
    busy=$((busy + 1))
  else
    failed=$((failed + 1))
    echo "image_memory: upload $i answered $status: $(head -c 300 "$data/answer.$i")" >&2
  fi
done

peak_mb=$((peak_kb / 1024))
echo "image_memory: $uploads uploads at once in ${seconds} s: $ok answered 200, $busy answered 503 with Retry-After, $failed otherwise"
echo "image_memory: server RSS idle $((idle_kb / 1024)) MB, peak (VmHWM) ${peak_mb} MB; target under ${target_mb} MB"
if [ "$failed" -ne 0 ]; then
  grep -E "ERROR|panicked" "$data/server.log" | head -n 20 >&2 || true
  exit 1
fi
if [ "$peak_mb" -ge "$target_mb" ]; then
  echo "image_memory: over the target" >&2
  exit 1
fi
