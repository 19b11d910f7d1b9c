"""Makes the segmentation test set from real photographic material: scenes composed of the 24 coins of a real
photograph (scikit-image's `coins`, Greek coins from Pompeii, Brooklyn Museum: no known copyright restrictions) on
a real texture (scikit-image's `gravel`, CC0), with their truth. See SOURCES.md.

Every scene is deterministic (a fixed seed): the same bytes on every machine with the same numpy and Pillow.

    python3 make_scenes.py OUT_DIR        # writes OUT_DIR/<scene>.jpg (and .png) and OUT_DIR/truth.json

Needs numpy and Pillow only (the coins' outlines were found once with scikit-image's watershed and are kept as
sources/coins_labels.png).

The scenes:
- coins_photo: the photograph itself, 24 coins on their own dark cloth, two of them close together.
- coins_12mp_dark: 2,400 coins at 4000 x 3000, scaled, turned and lit unevenly on dark gravel; a sixth of them
  touching a neighbour by less than a third of their width.
- coins_12mp_light: the same on light, low-contrast cloth (the gravel lightened): coins darker and lighter than it.
- colour_on_light: five coins tinted saturated yellow, red, green, blue and orange on light grey, the yellow one of
  the grey's own luma: found only by colour contrast.
- touching_rows: coins in rows, each touching the next along less than a third of its width.
"""

import json
import math
import os
import sys

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = os.path.join(HERE, "sources")


def load(name):
    return np.asarray(Image.open(os.path.join(SOURCES, name)))


def cutouts():
    """The 24 coins of the photograph: (grey pixels, mask), each cropped to its box."""
    grey, labels = load("coins.png"), load("coins_labels.png")
    out = []
    for n in range(1, labels.max() + 1):
        ys, xs = np.nonzero(labels == n)
        y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
        out.append((grey[y0:y1, x0:x1].copy(), labels[y0:y1, x0:x1] == n))
    return out


def transformed(coin, scale, angle):
    """A cut-out scaled and turned (bicubic pixels, nearest mask)."""
    pixels, mask = coin
    size = (max(1, round(pixels.shape[1] * scale)), max(1, round(pixels.shape[0] * scale)))
    p = Image.fromarray(pixels).resize(size, Image.BICUBIC).rotate(angle, Image.BICUBIC, expand=True)
    m = Image.fromarray(mask.astype(np.uint8) * 255).resize(size, Image.NEAREST).rotate(angle, Image.NEAREST, expand=True)
    return np.asarray(p).astype(np.float32), np.asarray(m) > 127


def texture(name, width, height, level, contrast, rng):
    """A real texture tiled (each tile mirrored at random) to width x height, its mean moved to `level` and its
    spread scaled by `contrast`."""
    tile = load(name).astype(np.float32)
    th, tw = tile.shape
    out = np.empty((height, width), np.float32)
    for y in range(0, height, th):
        for x in range(0, width, tw):
            t = tile[:, ::-1] if rng.random() < 0.5 else tile
            t = t[::-1, :] if rng.random() < 0.5 else t
            out[y : y + th, x : x + tw] = t[: height - y, : width - x]
    return (out - out.mean()) * contrast + level


def lighting(width, height, rng, strength):
    """Uneven light: a gradient from one side and a vignette, between 1 - strength and 1."""
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    angle = rng.uniform(0, 2 * math.pi)
    ramp = (xx * math.cos(angle) + yy * math.sin(angle)) / math.hypot(width, height) + 0.5
    vignette = ((xx / width - 0.5) ** 2 + (yy / height - 0.5) ** 2) * 2
    return 1 - strength * np.clip(0.6 * ramp + 0.4 * vignette, 0, 1)


def paste(canvas, occupied, coin, x, y, tint=None):
    """Pastes a transformed coin with its top-left at (x, y); marks its pixels in `occupied`."""
    pixels, mask = coin
    h, w = mask.shape
    region = canvas[y : y + h, x : x + w]
    if tint is None:
        region[mask] = pixels[mask][:, None] if region.ndim == 3 else pixels[mask]
    else:
        # The coin's own relief modulates the tint: bright where the coin is bright.
        shade = (pixels[mask] / 255.0)[:, None] * 0.35 + 0.65
        region[mask] = np.clip(np.array(tint, np.float32)[None, :] * shade, 0, 255)
    occupied[y : y + h, x : x + w] |= mask


def scatter(width, height, count, background, rng, coins, light, touching_share):
    """`count` coins over a width x height scene: a jittered grid, some pulled against a neighbour until they
    touch (by less than a third of their width), none overlapping another."""
    canvas = background.copy()
    occupied = np.zeros((height, width), bool)
    cols = round(math.sqrt(count * width / height))
    rows = math.ceil(count / cols)
    cell_w, cell_h = width / cols, height / rows
    placed = 0
    boxes = []
    for n in range(count):
        r, c = divmod(n, cols)
        coin = coins[rng.integers(len(coins))]
        side = max(coin[1].shape)
        scale = min(cell_w, cell_h) * rng.uniform(0.55, 0.75) / side
        t = transformed(coin, scale, rng.uniform(0, 360))
        h, w = t[1].shape
        x = int(c * cell_w + (cell_w - w) / 2 + rng.uniform(-0.08, 0.08) * cell_w)
        y = int(r * cell_h + (cell_h - h) / 2 + rng.uniform(-0.08, 0.08) * cell_h)
        if c > 0 and rng.random() < touching_share:
            # Slide left until it touches the coin there, then on by up to a third of its width.
            for _ in range(int(cell_w)):
                if x <= 0 or (occupied[y : y + h, x - 1 : x - 1 + w] & t[1]).any():
                    break
                x -= 1
            x -= int(rng.uniform(0, 0.05) * w)
        x, y = max(0, min(width - w, x)), max(0, min(height - h, y))
        if (occupied[y : y + h, x : x + w] & t[1]).sum() > 0.33 * w * 0.5:
            x += int(0.05 * w)  # touching, not stacked
        if (occupied[y : y + h, x : x + w] & t[1]).any():
            overlap = (occupied[y : y + h, x : x + w] & t[1]).sum()
            if overlap > t[1].sum() * 0.02:
                continue  # would hide part of another coin: left out, and not counted
        paste(canvas, occupied, t, x, y)
        boxes.append((x, y, w, h))
        placed += 1
    canvas = canvas * light
    return np.clip(canvas, 0, 255).astype(np.uint8), placed, boxes


def centres(boxes):
    """Each part's centre, the middle of its box, in whole pixels."""
    return [[x + w // 2, y + h // 2] for x, y, w, h in boxes]


def save(out, name, pixels, formats=("jpg",)):
    image = Image.fromarray(pixels)
    for f in formats:
        path = os.path.join(out, f"{name}.{f}")
        if f == "jpg":
            image.save(path, quality=92, subsampling=0)
        else:
            image.save(path, optimize=False, compress_level=1)


def main(out):
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0x74726F7665)
    coins = cutouts()
    truth = {}

    save(out, "coins_photo", load("coins.png"), ("png", "jpg"))
    truth["coins_photo"] = {"parts": 24, "background": "dark", "source": "the photograph as it is"}

    w, h = 4000, 3000
    dark = texture("gravel.png", w, h, 45, 0.35, rng)
    pixels, placed, boxes = scatter(w, h, 2400, dark, rng, coins, lighting(w, h, rng, 0.35), 1 / 6)
    save(out, "coins_12mp_dark", pixels)
    truth["coins_12mp_dark"] = {"parts": placed, "background": "dark gravel, lit unevenly", "size": [w, h], "centres": centres(boxes)}

    light = texture("gravel.png", w, h, 205, 0.15, rng)
    pixels, placed, boxes = scatter(w, h, 2400, light, rng, coins, lighting(w, h, rng, 0.25), 1 / 6)
    save(out, "coins_12mp_light", pixels)
    truth["coins_12mp_light"] = {"parts": placed, "background": "light cloth (gravel lightened), lit unevenly", "size": [w, h], "centres": centres(boxes)}

    # Five tinted coins on light grey: the yellow one of the grey's own luma ((77 R + 150 G + 29 B) / 256).
    w, h = 1600, 1200
    grey = 200.0
    canvas = np.empty((h, w, 3), np.float32)
    canvas[:] = texture("gravel.png", w, h, grey, 0.04, rng)[:, :, None]
    occupied = np.zeros((h, w), bool)
    tints = [(250, 205, 20), (215, 35, 30), (40, 160, 60), (40, 70, 200), (240, 130, 20)]
    boxes = []
    for n, tint in enumerate(tints):
        t = transformed(coins[n], 2.2, rng.uniform(0, 360))
        x, y = 80 + n * 300, 400 + int(rng.uniform(-100, 100))
        paste(canvas, occupied, t, x, y, tint)
        boxes.append((x, y, t[1].shape[1], t[1].shape[0]))
    save(out, "colour_on_light", np.clip(canvas, 0, 255).astype(np.uint8), ("png", "jpg"))
    truth["colour_on_light"] = {"parts": 5, "background": "light grey", "hard": "yellow of the background's luma", "centres": centres(boxes)}

    # Rows of coins, each touching the next by a sixth to a third of its width.
    w, h = 2400, 1200
    canvas = texture("gravel.png", w, h, 45, 0.35, rng)
    occupied = np.zeros((h, w), bool)
    placed = 0
    boxes = []
    for row in range(6):
        x = 40
        y = 40 + row * 190
        while True:
            t = transformed(coins[int(rng.integers(len(coins)))], 1.5, rng.uniform(0, 360))
            th, tw = t[1].shape
            if x + tw >= w - 10:
                break
            # Slide left until it touches the coin before, then on by up to 2.5% of its width: for round coins a
            # contact of up to a third of their width.
            while x > 0 and not (occupied[y : y + th, x - 1 : x - 1 + tw] & t[1]).any():
                x -= 1
            x = max(0, x - int(rng.uniform(0, 0.025) * tw))
            fresh = t[1] & ~occupied[y : y + th, x : x + tw]
            paste(canvas, occupied, (t[0], fresh), x, y)
            boxes.append((x, y, tw, th))
            placed += 1
            x += tw
    save(out, "touching_rows", np.clip(canvas, 0, 255).astype(np.uint8), ("png", "jpg"))
    truth["touching_rows"] = {"parts": placed, "background": "dark gravel", "hard": "every coin touches the next", "centres": centres(boxes)}

    with open(os.path.join(out, "truth.json"), "w", encoding="utf-8") as f:
        json.dump(truth, f, sort_keys=True)
    print(json.dumps({k: v["parts"] for k, v in truth.items()}))


if __name__ == "__main__":
    main(sys.argv[1])
