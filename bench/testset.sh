#!/usr/bin/env bash
# The segmentation test set of real photographic material (adapters/vision/testset): composes the scenes, then
# counts each with Trove (`segment_bench time`: decode + segment, release) and OpenCV (`bench/opencv_segment.py`:
# decode to luma + Otsu + connected components) on the same bytes, RUNS timed runs each (default 3), and prints
# the parts, what each finds, how far off Trove is, and the times.
#
# Needs: cargo and python3 (a venv with numpy, Pillow and OpenCV is made on first use: bench/opencv_venv.sh).
# DIR (default $CARGO_TARGET_DIR/testset) keeps the scenes.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
dir="${DIR:-$target/testset}"
runs="${RUNS:-3}"

source "$here/opencv_venv.sh"
(cd "$root" && cargo build --quiet --release -p trove-vision --features testing --example segment_bench)
bench="$target/release/examples/segment_bench"
if [ ! -f "$dir/scenes/truth.json" ]; then
  "$python" "$root/adapters/vision/testset/make_scenes.py" "$dir/scenes" >/dev/null
fi

results="$(mktemp)"
trap 'rm -f "$results"' EXIT
for file in "$dir"/scenes/*.jpg "$dir"/scenes/*.png; do
  "$bench" time "$file" "$runs" >>"$results"
  "$python" "$here/opencv_segment.py" "$file" "$runs" >>"$results"
done

"$python" - "$results" "$dir/scenes/truth.json" <<'PY'
import collections, json, os, statistics, sys
times, counts = collections.defaultdict(list), {}
for line in open(sys.argv[1]):
    who, path, ms, count = line.split()
    times[(who, path)].append(float(ms))
    counts[(who, path)] = int(count)
truth = json.load(open(sys.argv[2]))
print("| scene | format | parts | Trove finds | off | OpenCV components (>= 64 px) | Trove ms | OpenCV ms | Trove / OpenCV |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
for path in sorted({p for _, p in times}):
    name, ext = os.path.splitext(os.path.basename(path))
    parts = truth[name]["parts"]
    found = counts[("trove", path)]
    trove, opencv = statistics.median(times[("trove", path)]), statistics.median(times[("opencv", path)])
    print(f"| {name} | {ext[1:].upper()} | {parts} | {found} | {(found - parts) / parts * 100:+.1f}% "
          f"| {counts[('opencv', path)]} | {trove:.0f} | {opencv:.0f} | {trove / opencv:.2f}x |")
PY
