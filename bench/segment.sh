#!/usr/bin/env bash
# Trove's segmentation against OpenCV on the same bytes: builds the `segment_bench` example (release), writes the
# generated 12-megapixel photos (JPEG and PNG, known counts), then runs, ROUNDS times (default 3) and interleaved,
# `segment_bench time` (Trove: decode + segment) and `bench/opencv_segment.py` (OpenCV: decode to luma + Otsu +
# connected components) on each file, RUNS timed runs a call (default 5), and prints the median of the medians,
# the counts and the ratio Trove / OpenCV.
#
# Needs: cargo and python3 (a venv with OpenCV is made on first use: bench/opencv_venv.sh; PYTHON names another).
# DIR (default $CARGO_TARGET_DIR/segment-bench) keeps the photos; TROVE_BENCH runs another build of the example;
# TROVE_BEFORE, a build of the example from before a change, is run too, interleaved with the others, for before
# and after columns measured under the same load.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
dir="${DIR:-$target/segment-bench}"
rounds="${ROUNDS:-3}"
runs="${RUNS:-5}"
source "$here/opencv_venv.sh"

if [ -z "${TROVE_BENCH:-}" ]; then
  (cd "$root" && cargo build --quiet --release -p trove-vision --features testing --example segment_bench)
fi
bench="${TROVE_BENCH:-$target/release/examples/segment_bench}"
if [ ! -f "$dir/expected.txt" ]; then
  "$bench" write "$dir"
fi

results="$(mktemp)"
trap 'rm -f "$results"' EXIT
for round in $(seq 1 "$rounds"); do
  for file in "$dir"/*.jpg "$dir"/*.png; do
    "$bench" time "$file" "$runs" >>"$results"
    if [ -n "${TROVE_BEFORE:-}" ]; then
      "$TROVE_BEFORE" time "$file" "$runs" | sed 's/^trove /before /' >>"$results"
    fi
    "$python" "$here/opencv_segment.py" "$file" "$runs" >>"$results"
  done
  echo "segment: round $round of $rounds done" >&2
done

"$python" - "$results" "$dir/expected.txt" <<'EOF'
import collections, os, statistics, sys
times, counts = collections.defaultdict(list), {}
for line in open(sys.argv[1]):
    who, path, ms, count = line.split()
    times[(who, path)].append(float(ms))
    counts[(who, path)] = int(count)
expected = dict(line.split() for line in open(sys.argv[2]))
before = any(who == "before" for who, _ in times)
head = "| photo | format | items | Trove finds | OpenCV components (>= 64 px) | Trove ms | OpenCV ms | Trove / OpenCV |"
rule = "|---|---|---:|---:|---:|---:|---:|---:|"
if before:
    head += " before: finds | before: ms | before / OpenCV |"
    rule += "---:|---:|---:|"
print(head)
print(rule)
for path in sorted({p for _, p in times}, key=lambda p: (os.path.splitext(p)[1] != ".jpg", p)):
    name, ext = os.path.splitext(os.path.basename(path))
    trove, opencv = statistics.median(times[("trove", path)]), statistics.median(times[("opencv", path)])
    row = (f"| {name} | {ext[1:].upper()} | {expected[name]} | {counts[('trove', path)]} | {counts[('opencv', path)]} "
           f"| {trove:.1f} | {opencv:.1f} | {trove / opencv:.2f} |")
    if before:
        old = statistics.median(times[("before", path)])
        row += f" {counts[('before', path)]} | {old:.1f} | {old / opencv:.2f} |"
    print(row)
EOF
