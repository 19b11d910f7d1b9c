#!/usr/bin/env python3
"""OpenCV's decode + threshold + connected components on the segmentation benchmark's photos, for BENCHMARKS.md.

Usage: python3 bench/opencv_segment.py FILE [RUNS]
Prints `opencv FILE MEDIAN_MS COMPONENTS`: the median time, over RUNS, of decoding the file's bytes straight to
8-bit luma (`IMREAD_GRAYSCALE`: a JPEG's chroma is never converted), Otsu's threshold and 8-connected components
with their statistics; COMPONENTS counts those of at least 64 pixels (the raw count holds every speck of noise).
The photos are written by `segment_bench write DIR`; `bench/segment.sh` runs both. Needs opencv-python-headless
and numpy (`pip install --user opencv-python-headless numpy`).
"""

import statistics
import sys
import time

import cv2
import numpy as np


def segment(buf):
    """Decode to luma, Otsu's threshold (both polarities cost the same), components with statistics."""
    grey = cv2.imdecode(buf, cv2.IMREAD_GRAYSCALE)
    _, mask = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY_INV | cv2.THRESH_OTSU)
    return cv2.connectedComponentsWithStats(mask, connectivity=8)


def main():
    path = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    buf = np.frombuffer(open(path, "rb").read(), dtype=np.uint8)
    _, _, stats, _ = segment(buf)
    components = int((stats[1:, cv2.CC_STAT_AREA] >= 64).sum())
    times = []
    for _ in range(max(1, runs)):
        t = time.perf_counter()
        segment(buf)
        times.append(time.perf_counter() - t)
    print(f"opencv {path} {statistics.median(times) * 1e3:.1f} {components}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main()
