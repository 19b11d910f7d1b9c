#!/usr/bin/env bash
# Peak memory of the server under the worst-case pictures, one phase at a time, each against the target of 300 MB:
# a check that exits non-zero when any phase goes over it or answers anything but what it should (CI runs it).
#
# The worst-case photo is a PNG declaring 7000 x 7000 pixels of 16-bit RGBA (under the 50-megapixel cap; 392 MB
# decoded whole) that compresses to about 381 KB. The ICC bomb is a 64 x 64 PNG whose 1 MB iCCP chunk inflates to
# 1 GB. Builds the release binary and, for each phase, starts `trove serve` afresh on a new SQLite data directory
# (so each figure is the phase's own, not what the allocator kept of the phases before), sends UPLOADS (default 8)
# requests at once, checks each answer, and reads the server's peak resident memory (VmHWM of /proc/PID/status,
# reset just before the phase through /proc/PID/clear_refs):
#   intake      the worst-case photo to /api/intake/photo (segmented, kept as pending media): 200, or 503 with
#               Retry-After when the queue of jobs is full;
#   upload      the worst-case photo kept on an item (POST /api/items/{id}/media): 201;
#   thumbnail   the first thumbnail of each of UPLOADS copies of it kept on an item (GET /api/media/{id}/thumb):
#               200;
#   icc-upload  the ICC bomb kept on an item: 201 (kept without its profile);
#   icc-intake  the ICC bomb to /api/intake/photo: 200, or 503 with Retry-After;
#   scan        the worst-case photo to the label scan (POST /api/scan): 422, no code in it;
#   tray        a 12-megapixel JPEG of 2,400 small parts (`segment_bench write`'s tray) to /api/intake/photo: 200
#               with thousands of regions (their crops made only when asked), or 503 with Retry-After.
#
# Then the same phases run one after the other in one long-lived server, whose peak since it started must stay
# under the target too (what the allocator keeps of each phase must not add up); SKIP_LONG_LIVED=1 skips that.
#
# Needs: cargo, curl, python3, Linux. TROVE_BIN runs another build (for a before figure); UPLOADS sets the
# concurrency; PHASES (space-separated) runs some of the phases.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
root="$(cd "$here/.." && pwd)"
uploads="${UPLOADS:-8}"
phases="${PHASES:-intake upload thumbnail icc-upload icc-intake scan tray}"
target_mb=300

if [ -z "${TROVE_BIN:-}" ]; then
  echo "image_memory: building trove (release)"
  (cd "$root" && cargo build --quiet --release -p trove)
fi
bin="${TROVE_BIN:-${CARGO_TARGET_DIR:-$root/target}/release/trove}"
(cd "$root" && cargo build --quiet --release -p trove-vision --features testing --example segment_bench)
segment_bench="${CARGO_TARGET_DIR:-$root/target}/release/examples/segment_bench"

data="$(mktemp -d "${TMPDIR:-/tmp}/trove-image-memory-XXXXXX")"
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$data"
}
trap cleanup EXIT

python3 - "$data/worst.png" "$data/icc.png" <<'EOF'
import struct, sys, zlib
def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
def png(width, height, depth, colour, idat, extra=b""):
    header = struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, 0)  # not interlaced
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + extra + chunk(b"IDAT", idat) + chunk(b"IEND", b"")
# The worst case: every row a filter byte and 7000 pixels of 8 zero bytes, deflated row by row (never whole).
deflate = zlib.compressobj(9)
row = b"\0" * (1 + 7000 * 8)
idat = b"".join(deflate.compress(row) for _ in range(7000)) + deflate.flush()
with open(sys.argv[1], "wb") as f:
    f.write(png(7000, 7000, 16, 6, idat))
# The ICC bomb: 64 x 64 8-bit RGB, and a profile of 1 GB of zeros deflated 1 MB at a time.
deflate = zlib.compressobj(9)
zeros = b"\0" * (1 << 20)
profile = b"".join(deflate.compress(zeros) for _ in range(1024)) + deflate.flush()
rows = b"".join(b"\0" + bytes((x * 4) % 256 for x in range(64 * 3)) for _ in range(64))
with open(sys.argv[2], "wb") as f:
    f.write(png(64, 64, 8, 2, zlib.compress(rows), chunk(b"iCCP", b"bomb\0\0" + profile)))
EOF
"$segment_bench" write "$data/generated" >/dev/null
echo "image_memory: worst case $(stat -c %s "$data/worst.png") bytes, 7000 x 7000 16-bit RGBA;" \
  "ICC bomb $(stat -c %s "$data/icc.png") bytes, 64 x 64 with a profile of 1 GB inflated"

# Starts a fresh server on a new data directory: $server, $base, $token and $item (an item to keep pictures on).
start_server() {
  start_trove "$bin" "$data/$1" image_memory
  item="$(curl -fsS -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    -d '{"name":"Bench","item_type":"tool","profile":"","condition":"good","intent":"keep"}' "$base/api/items" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')"
}

stop_server() {
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  server=""
}

unset DATABASE_URL MODEL_API_KEY
export RUST_LOG="${RUST_LOG:-warn}"
media=()

# One request of a phase: its answer, headers and status under $data/PHASE.I.
fire() {
  local phase="$1" i="$2"
  local out="$data/$phase.$i"
  local args=(-sS -o "$out.body" -D "$out.headers" -w '%{http_code}' -H "Authorization: Bearer $token")
  case "$phase" in
    intake) args+=(-F "image=@$data/worst.png;type=image/png" "$base/api/intake/photo") ;;
    upload | keep) args+=(-F "file=@$data/worst.png;type=image/png" "$base/api/items/$item/media") ;;
    thumbnail) args+=("$base/api/media/${media[$((i - 1))]}/thumb") ;;
    icc-upload) args+=(-F "file=@$data/icc.png;type=image/png" "$base/api/items/$item/media") ;;
    icc-intake) args+=(-F "image=@$data/icc.png;type=image/png" "$base/api/intake/photo") ;;
    scan) args+=(-F "image=@$data/worst.png;type=image/png" "$base/api/scan") ;;
    tray) args+=(-F "image=@$data/generated/parts.jpg;type=image/jpeg" "$base/api/intake/photo") ;;
  esac
  curl "${args[@]}" >"$out.status" || echo "000" >"$out.status"
}

# Sends UPLOADS requests of a phase at once and waits for their answers.
fire_all() {
  local pids=()
  for i in $(seq 1 "$uploads"); do
    fire "$1" "$i" &
    pids+=("$!")
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
}

# The status a phase must answer; a 503 with Retry-After is allowed where the work waits in the queue of jobs.
expected() {
  case "$1" in
    intake | icc-intake | tray) echo "200" ;;
    upload | icc-upload | keep) echo "201" ;;
    thumbnail) echo "200" ;;
    scan) echo "422" ;;
  esac
}

over=0 failed=0
# Runs one phase in the running server and checks its answers. With "fresh" the peak is the phase's own (VmHWM
# reset before it); with "kept" it is the server's peak since it started, over every phase so far.
run_phase() {
  local phase="$1" mode="$2"
  idle_mb=$(($(awk '/^VmRSS/ {print $2}' "/proc/$server/status") / 1024))
  if [ "$phase" = "thumbnail" ]; then
    # The pictures to make thumbnails of: UPLOADS rows of the worst case (one blob), none with a thumbnail yet.
    fire_all keep
    media=()
    for i in $(seq 1 "$uploads"); do
      media+=("$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["id"])' "$data/keep.$i.body")")
    done
  fi
  # The peak resident memory from here on (Linux: 5 resets VmHWM to the current RSS).
  if [ "$mode" = "fresh" ]; then echo 5 >"/proc/$server/clear_refs"; fi
  start="$(date +%s.%N)"
  fire_all "$phase"
  seconds="$(python3 -c "import time; print(f'{time.time() - $start:.1f}')")"
  peak_mb=$(($(awk '/^VmHWM/ {print $2}' "/proc/$server/status") / 1024))
  want="$(expected "$phase")"
  ok=0 busy=0 bad=0
  for i in $(seq 1 "$uploads"); do
    status="$(cat "$data/$phase.$i.status")"
    if [ "$status" = "$want" ] && [ "$phase" = tray ] && ! python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["regions"]; sys.exit(not (len(r) >= 2352 and all("photo_id" not in x for x in r)))' "$data/$phase.$i.body"; then
      bad=$((bad + 1))
      echo "image_memory: tray $i did not answer the parts within 2% without crops" >&2
    elif [ "$status" = "$want" ]; then
      ok=$((ok + 1))
    elif [ "$status" = "503" ] && [[ "$phase" == *intake || "$phase" == tray ]] && grep -qi '^retry-after:' "$data/$phase.$i.headers"; then
      busy=$((busy + 1))
    else
      bad=$((bad + 1))
      echo "image_memory: $phase $i answered $status: $(head -c 300 "$data/$phase.$i.body")" >&2
    fi
  done
  verdict="under"
  if [ "$peak_mb" -ge "$target_mb" ]; then
    verdict="OVER"
    over=$((over + 1))
  fi
  failed=$((failed + bad))
  if [ "$bad" -ne 0 ]; then grep -E "ERROR|panicked" "$data/$server_dir/server.log" | head -n 20 >&2 || true; fi
  local what="peak"
  if [ "$mode" = "kept" ]; then what="peak since the server started"; fi
  echo "image_memory: $phase: $uploads at once in ${seconds} s: $ok answered $want, $busy 503 with Retry-After," \
    "$bad otherwise; RSS idle ${idle_mb} MB, $what ${peak_mb} MB, $verdict the target of ${target_mb} MB"
}

for phase in $phases; do
  server_dir="$phase"
  start_server "$phase"
  run_phase "$phase" fresh
  stop_server
done

# The same phases one after the other in one long-lived server: what the allocator keeps of each phase must not
# add up past the target either (glibc keeps freed memory per arena; `trove serve` bounds its arenas).
if [ -z "${SKIP_LONG_LIVED:-}" ]; then
  echo "image_memory: the same phases in one long-lived server"
  server_dir="long-lived"
  start_server "long-lived"
  for phase in $phases; do
    run_phase "$phase" kept
  done
  stop_server
fi

if [ "$failed" -ne 0 ]; then
  echo "image_memory: $failed answers were not what they should be" >&2
  exit 1
fi
if [ "$over" -ne 0 ]; then
  echo "image_memory: $over phases over the target of ${target_mb} MB" >&2
  exit 1
fi
echo "image_memory: every phase under ${target_mb} MB"
