#!/usr/bin/env python3
"""Draws Peregrine's type icons: 512 x 512 RGBA PNGs, written with the standard library only.

Usage: python3 make-icons.py [OUTPUT_DIRECTORY]   (default: the directory of this script)

Writes Kinds/{Image,Audio,Music,Video,Document,Other}.png and Extensions/{PDF,RAR,ZIP}.png.
Every shape is a signed distance field, so edges are antialiased analytically (coverage =
0.5 - distance, clamped); shapes are composited front to back with straight alpha.
The output is deterministic: running the script again gives the same bytes.
The module compiles the PNGs in: run `python3 Scripts/embed-icons.py` after changing one.
"""

import math
import os
import struct
import sys
import zlib

SIZE = 512

# Page geometry: a sheet with a folded top-right corner.
PAGE_LEFT, PAGE_TOP, PAGE_RIGHT, PAGE_BOTTOM = 100, 36, 412, 476
FOLD = 92
CORNER = 26
BORDER = 10

PAPER = (250, 251, 253)
EDGE = (196, 202, 212)
FOLD_SHADE = (222, 226, 233)
WHITE = (255, 255, 255)

COLORS = {
    "Image": (46, 157, 91),
    "Audio": (142, 68, 173),
    "Music": (214, 51, 108),
    "Video": (232, 89, 12),
    "Document": (28, 126, 214),
    "Other": (108, 117, 125),
    "PDF": (224, 49, 49),
    "RAR": (112, 72, 232),
    "ZIP": (240, 140, 0),
}


# --- signed distance functions (negative inside) -------------------------------------------


def segment_distance(px, py, ax, ay, bx, by):
    dx, dy = bx - ax, by - ay
    length2 = dx * dx + dy * dy
    t = 0.0 if length2 == 0 else max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / length2))
    cx, cy = ax + t * dx - px, ay + t * dy - py
    return math.sqrt(cx * cx + cy * cy)


def polygon(points, rounding=0.0):
    """A polygon (any simple one), its corners rounded by `rounding` pixels (points are inset)."""

    def sdf(px, py):
        distance = min(
            segment_distance(px, py, *points[i], *points[(i + 1) % len(points)]) for i in range(len(points))
        )
        inside = False
        j = len(points) - 1
        for i in range(len(points)):
            xi, yi = points[i]
            xj, yj = points[j]
            if (yi > py) != (yj > py) and px < (xj - xi) * (py - yi) / (yj - yi) + xi:
                inside = not inside
            j = i
        return (-distance if inside else distance) - rounding

    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    return sdf, (min(xs) - rounding, min(ys) - rounding, max(xs) + rounding, max(ys) + rounding)


def rounded_rect(left, top, right, bottom, radius):
    cx, cy = (left + right) / 2, (top + bottom) / 2
    hx, hy = (right - left) / 2 - radius, (bottom - top) / 2 - radius

    def sdf(px, py):
        qx, qy = abs(px - cx) - hx, abs(py - cy) - hy
        outside = math.sqrt(max(qx, 0.0) ** 2 + max(qy, 0.0) ** 2)
        return outside + min(max(qx, qy), 0.0) - radius

    return sdf, (left, top, right, bottom)


def circle(cx, cy, radius):
    return (lambda px, py: math.hypot(px - cx, py - cy) - radius), (cx - radius, cy - radius, cx + radius, cy + radius)


def ellipse(cx, cy, rx, ry, angle):
    """An approximate ellipse distance (exact enough for antialiasing small tilts)."""
    cos_a, sin_a = math.cos(angle), math.sin(angle)

    def sdf(px, py):
        dx, dy = px - cx, py - cy
        x = dx * cos_a + dy * sin_a
        y = -dx * sin_a + dy * cos_a
        k = math.hypot(x / rx, y / ry)
        if k == 0:
            return -min(rx, ry)
        gradient = math.hypot(x / (rx * rx), y / (ry * ry))
        return k * (k - 1.0) / gradient if gradient else -min(rx, ry)

    r = max(rx, ry)
    return sdf, (cx - r, cy - r, cx + r, cy + r)


def polyline(points, width):
    """Strokes through `points`, `width` thick, with round caps and joins."""
    half = width / 2

    def sdf(px, py):
        return min(segment_distance(px, py, *points[i], *points[i + 1]) for i in range(len(points) - 1)) - half

    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    return sdf, (min(xs) - half, min(ys) - half, max(xs) + half, max(ys) + half)


def stroke(shape, width):
    sdf, (l, t, r, b) = shape
    half = width / 2
    return (lambda px, py: abs(sdf(px, py)) - half), (l - half, t - half, r + half, b + half)


# --- the canvas ------------------------------------------------------------------------------


class Canvas:
    def __init__(self):
        self.pixels = [[0.0, 0.0, 0.0, 0.0] for _ in range(SIZE * SIZE)]  # premultiplied floats

    def fill(self, shape, color, opacity=1.0):
        sdf, (left, top, right, bottom) = shape
        r, g, b = (c / 255 for c in color)
        x0, y0 = max(0, int(left) - 2), max(0, int(top) - 2)
        x1, y1 = min(SIZE, int(right) + 3), min(SIZE, int(bottom) + 3)
        for y in range(y0, y1):
            row = y * SIZE
            py = y + 0.5
            for x in range(x0, x1):
                coverage = 0.5 - sdf(x + 0.5, py)
                if coverage <= 0:
                    continue
                a = min(coverage, 1.0) * opacity
                pixel = self.pixels[row + x]
                keep = 1 - a
                pixel[0] = r * a + pixel[0] * keep
                pixel[1] = g * a + pixel[1] * keep
                pixel[2] = b * a + pixel[2] * keep
                pixel[3] = a + pixel[3] * keep

    def png(self):
        raw = bytearray()
        for y in range(SIZE):
            raw.append(0)
            for x in range(SIZE):
                r, g, b, a = self.pixels[y * SIZE + x]
                if a <= 0:
                    raw += b"\0\0\0\0"
                    continue
                raw += bytes(
                    (
                        min(255, round(r / a * 255)),
                        min(255, round(g / a * 255)),
                        min(255, round(b / a * 255)),
                        min(255, round(a * 255)),
                    )
                )

        def chunk(kind, data):
            body = kind + data
            return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

        header = struct.pack(">IIBBBBB", SIZE, SIZE, 8, 6, 0, 0, 0)
        return (
            b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(bytes(raw), 9))
            + chunk(b"IEND", b"")
        )


def page(canvas):
    inset = [
        (PAGE_LEFT + CORNER, PAGE_TOP + CORNER),
        (PAGE_RIGHT - FOLD + CORNER * 0.41, PAGE_TOP + CORNER),
        (PAGE_RIGHT - CORNER, PAGE_TOP + FOLD - CORNER * 0.41),
        (PAGE_RIGHT - CORNER, PAGE_BOTTOM - CORNER),
        (PAGE_LEFT + CORNER, PAGE_BOTTOM - CORNER),
    ]
    sheet = polygon(inset, CORNER)
    canvas.fill(sheet, PAPER)
    canvas.fill(stroke(sheet, BORDER), EDGE)
    fold = polygon(
        [
            (PAGE_RIGHT - FOLD + 8, PAGE_TOP + 14),
            (PAGE_RIGHT - FOLD + 8, PAGE_TOP + FOLD - 8),
            (PAGE_RIGHT - 14, PAGE_TOP + FOLD - 8),
        ],
        8,
    )
    canvas.fill(fold, FOLD_SHADE)
    canvas.fill(stroke(fold, BORDER), EDGE)


# --- glyphs ----------------------------------------------------------------------------------


def glyph_image(canvas, color):
    canvas.fill(stroke(rounded_rect(150, 170, 362, 360, 22), 16), color)
    canvas.fill(circle(310, 220, 24), color)
    canvas.fill(polygon([(170, 340), (236, 248), (292, 340)], 8), color)
    canvas.fill(polygon([(246, 340), (296, 276), (342, 340)], 8), color, 0.8)


def glyph_audio(canvas, color):
    heights = [40, 96, 150, 70, 128, 54, 100]
    x = 166
    for height in heights:
        canvas.fill(polyline([(x, 266 - height / 2), (x, 266 + height / 2)], 20), color)
        x += 30


def glyph_music(canvas, color):
    canvas.fill(ellipse(192, 350, 36, 27, -0.45), color)
    canvas.fill(ellipse(318, 326, 36, 27, -0.45), color)
    canvas.fill(polyline([(222, 346), (222, 196)], 16), color)
    canvas.fill(polyline([(348, 322), (348, 172)], 16), color)
    canvas.fill(polygon([(222, 192), (348, 166), (348, 206), (222, 232)], 4), color)


def glyph_video(canvas, color):
    canvas.fill(rounded_rect(146, 176, 366, 350, 28), color)
    canvas.fill(polygon([(232, 218), (232, 308), (306, 263)], 8), WHITE)


def glyph_document(canvas, color):
    lengths = [212, 212, 212, 212, 140]
    for index, length in enumerate(lengths):
        y = 176 + index * 44
        canvas.fill(polyline([(150, y), (150 + length, y)], 18), color)


def glyph_other(canvas, color):
    for x in (196, 256, 316):
        canvas.fill(circle(x, 262, 22), color)


def glyph_lines_small(canvas, color):
    for index, length in enumerate([200, 200, 132]):
        y = 150 + index * 40
        canvas.fill(polyline([(156, y), (156 + length, y)], 16), color, 0.55)


def glyph_zipper(canvas, color):
    for index in range(7):
        y = 96 + index * 26
        x = 244 if index % 2 == 0 else 268
        canvas.fill(rounded_rect(x, y, x + 24, y + 16, 5), color, 0.75)
    canvas.fill(rounded_rect(234, 280, 278, 322, 10), color)


def glyph_volumes(canvas, color):
    for index in range(3):
        top = 150 + index * 50
        canvas.fill(rounded_rect(166, top, 346, top + 38, 10), color, 0.45 + 0.2 * index)


# Letters as strokes on a 4 x 6 grid (y down).
LETTERS = {
    "P": [[(0, 6), (0, 0), (2.6, 0), (3.6, 0.7), (3.8, 1.6), (3.6, 2.5), (2.6, 3.2), (0, 3.2)]],
    "D": [[(0, 0), (0, 6), (2.0, 6), (3.3, 5.1), (3.8, 3.0), (3.3, 0.9), (2.0, 0), (0, 0)]],
    "F": [[(3.8, 0), (0, 0), (0, 6)], [(0, 2.9), (3.0, 2.9)]],
    "R": [
        [(0, 6), (0, 0), (2.6, 0), (3.6, 0.7), (3.8, 1.6), (3.6, 2.5), (2.6, 3.2), (0, 3.2)],
        [(1.9, 3.2), (3.8, 6)],
    ],
    "A": [[(0, 6), (1.9, 0), (3.8, 6)], [(0.75, 3.9), (3.05, 3.9)]],
    "Z": [[(0, 0), (3.8, 0), (0, 6), (3.8, 6)]],
    "I": [[(1.9, 0), (1.9, 6)]],
}


def text(canvas, word, center_x, center_y, unit, weight, color):
    advance = 5.4 * unit
    widths = [3.8 * unit for _ in word]
    total = sum(widths) + (len(word) - 1) * (advance - 3.8 * unit)
    x = center_x - total / 2
    top = center_y - 3 * unit
    for letter in word:
        for path in LETTERS[letter]:
            points = [(x + px * unit, top + py * unit) for px, py in path]
            canvas.fill(polyline(points, weight), color)
        x += advance


# --- icons -----------------------------------------------------------------------------------


def kind_icon(name, glyph):
    canvas = Canvas()
    page(canvas)
    glyph(canvas, COLORS[name])
    return canvas.png()


def extension_icon(name, glyph):
    canvas = Canvas()
    page(canvas)
    glyph(canvas, COLORS[name])
    canvas.fill(rounded_rect(64, 340, 448, 440, 20), COLORS[name])
    text(canvas, name, 256, 390, 10.5, 13, WHITE)
    return canvas.png()


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    icons = {
        "Kinds/Image.png": lambda: kind_icon("Image", glyph_image),
        "Kinds/Audio.png": lambda: kind_icon("Audio", glyph_audio),
        "Kinds/Music.png": lambda: kind_icon("Music", glyph_music),
        "Kinds/Video.png": lambda: kind_icon("Video", glyph_video),
        "Kinds/Document.png": lambda: kind_icon("Document", glyph_document),
        "Kinds/Other.png": lambda: kind_icon("Other", glyph_other),
        "Extensions/PDF.png": lambda: extension_icon("PDF", glyph_lines_small),
        "Extensions/RAR.png": lambda: extension_icon("RAR", glyph_volumes),
        "Extensions/ZIP.png": lambda: extension_icon("ZIP", glyph_zipper),
    }
    for path, draw in icons.items():
        target = os.path.join(root, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as file:
            file.write(draw())
        print(target)


if __name__ == "__main__":
    main()
