#!/usr/bin/env bash
# The whole photo request on a tray of thousands of parts: POST /api/intake/photo with a 12-megapixel JPEG, timed
# from the client (curl's total) RUNS times one after the other (default 5), with the round trip of GET /health
# beside it (the client's own overhead, to take out), the regions answered and the server's peak resident memory
# (VmHWM). The photos are the test set's 12 MP scenes of 2,400 real coins (adapters/vision/testset, composed with
# the OpenCV venv's numpy and Pillow) and the generated tray of 2,400 parts (`segment_bench write`).
#
# Needs: cargo, curl, python3, Linux. TROVE_BIN runs another build.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
root="$(cd "$here/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
runs="${RUNS:-5}"
source "$here/opencv_venv.sh"

(cd "$root" && cargo build --quiet --release -p trove-vision --features testing --example segment_bench)
if [ -z "${TROVE_BIN:-}" ]; then
  (cd "$root" && cargo build --quiet --release -p trove)
fi
bin="${TROVE_BIN:-$target/release/trove}"

data="$(mktemp -d "${TMPDIR:-/tmp}/trove-photo-request-XXXXXX")"
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$data"
}
trap cleanup EXIT

"$target/release/examples/segment_bench" write "$data/generated" >/dev/null
"$python" "$root/adapters/vision/testset/make_scenes.py" "$data/testset" >/dev/null

unset DATABASE_URL MODEL_API_KEY
export RUST_LOG="${RUST_LOG:-warn}"
start_trove "$bin" "$data" photo_request

median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
health="$(for _ in $(seq 1 20); do curl -s -o /dev/null -w '%{time_total}\n' "$base/health"; done | median)"
echo "| photo | parts | regions answered | crops made | whole request, median of $runs (s) | slowest (s) | GET /health (s) |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for photo in "$data/testset/coins_12mp_dark.jpg" "$data/testset/coins_12mp_light.jpg" "$data/generated/parts.jpg"; do
  times="$data/times"
  : >"$times"
  for _ in $(seq 1 "$runs"); do
    curl -sS -o "$data/answer.json" -w '%{time_total}\n' -H "Authorization: Bearer $token" \
      -F "image=@$photo;type=image/jpeg" "$base/api/intake/photo" >>"$times"
  done
  read -r regions crops < <(python3 -c 'import json, sys; a = json.load(open(sys.argv[1])); r = a["regions"]; print(len(r), sum("photo_id" in x for x in r))' "$data/answer.json")
  name="$(basename "$(dirname "$photo")")/$(basename "$photo")"
  parts="$(case "$photo" in *generated*) grep parts "$data/generated/expected.txt" | cut -d' ' -f2 ;; *) python3 -c 'import json, sys, os; print(json.load(open(sys.argv[1]))[os.path.basename(sys.argv[2])[:-4]]["parts"])' "$data/testset/truth.json" "$photo" ;; esac)"
  echo "| $name | $parts | $regions | $crops | $(median <"$times") | $(sort -n "$times" | tail -n1) | $health |"
done
echo "peak RSS of the server: $(($(awk '/^VmHWM/ {print $2}' "/proc/$server/status") / 1024)) MB"
