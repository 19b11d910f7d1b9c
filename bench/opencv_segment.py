#!/usr/bin/env python3
"""OpenCV's threshold + connected components on the segmentation benchmark's photo, for BENCHMARKS.md.

Usage: python3 bench/opencv_segment.py [PNG_PATH] [RUNS]
The PNG is written by `cargo run --release -p trove-vision --example segment_bench -- PNG_PATH`.
Needs opencv-python-headless (pip install opencv-python-headless).
"""

import statistics
import sys
import time

import cv2
import numpy as np


def threshold_and_components(bgr):
    """Grey, Otsu's threshold (objects darker than the background), 8-connected components with statistics."""
    grey = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
    _, mask = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY_INV | cv2.THRESH_OTSU)
    return cv2.connectedComponentsWithStats(mask, connectivity=8)


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "target/segment_12mp.png"
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    data = open(path, "rb").read()
    bgr = cv2.imread(path, cv2.IMREAD_COLOR)
    count, _, _, _ = threshold_and_components(bgr)
    print(f"opencv {cv2.__version__}, {cv2.getNumThreads()} threads, {bgr.shape[1]}x{bgr.shape[0]}: {count - 1} components")
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        threshold_and_components(bgr)
        times.append(time.perf_counter() - t)
    print(f"threshold + connected components (decoded pixels): median {statistics.median(times) * 1e3:.1f} ms over {runs} runs")
    buf = np.frombuffer(data, dtype=np.uint8)
    times = []
    for _ in range(max(1, runs // 3)):
        t = time.perf_counter()
        threshold_and_components(cv2.imdecode(buf, cv2.IMREAD_COLOR))
        times.append(time.perf_counter() - t)
    print(f"decode PNG + threshold + connected components: median {statistics.median(times) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
