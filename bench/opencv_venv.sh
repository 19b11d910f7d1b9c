# Sourced by the segmentation benchmarks: sets `python` to a venv's Python with numpy, Pillow and OpenCV (pinned,
# made on first use in $OPENCV_VENV, default $CARGO_TARGET_DIR/opencv-venv), or to $PYTHON when that is given.
opencv_venv="${OPENCV_VENV:-${CARGO_TARGET_DIR:-$root/target}/opencv-venv}"
if [ -n "${PYTHON:-}" ]; then
  python="$PYTHON"
else
  python="$opencv_venv/bin/python3"
  if ! "$python" -c 'import numpy, PIL, cv2' >/dev/null 2>&1; then
    python3 -m venv "$opencv_venv"
    "$opencv_venv/bin/pip" install --quiet "numpy==2.2.6" "pillow==11.3.0" "opencv-python-headless==4.12.0.88"
  fi
fi
