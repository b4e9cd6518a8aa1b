"""What Benchmarks/resize.py measures against: the pictures and a float Lanczos-3 reference.

The reference resamples exactly as the definition says, in float64 with a dense matrix a side
(no tables, no rounding until the end): each output pixel's centre at (i + 0.5) * in / out in
input pixels, the Lanczos-3 kernel widened by the scale factor when shrinking, taps outside the
picture left out and the rest normalised to sum 1. In linear light (the sRGB curve exactly) or on
the sRGB codes ("gamma").
"""
import math
import subprocess

import numpy as np


def lanczos3(x):
    x = np.abs(x)
    out = np.where(x < 1e-8, 1.0, 3 * np.sin(np.pi * x) * np.sin(np.pi * x / 3) / np.maximum((np.pi * x) ** 2, 1e-30))
    return np.where(x >= 3, 0.0, out)


def lanczos_matrix(size_in, size_out):
    scale = size_in / size_out
    stretch = max(scale, 1.0)
    centres = (np.arange(size_out) + 0.5) * scale
    inputs = np.arange(size_in) + 0.5
    weights = lanczos3((inputs[None, :] - centres[:, None]) / stretch)
    return weights / weights.sum(axis=1, keepdims=True)


def srgb_to_linear(codes):
    v = codes / 255.0
    return np.where(v <= 0.04045, v / 12.92, ((v + 0.055) / 1.055) ** 2.4)


def linear_to_srgb(light):
    v = np.clip(light, 0, 1)
    return 255.0 * np.where(v <= 0.0031308, v * 12.92, 1.055 * v ** (1 / 2.4) - 0.055)


def reference(rgb, width, height, space="linear"):
    """rgb: uint8 array (h, w, 3). Returns float64 sRGB codes (height, width, 3), unrounded."""
    rows = lanczos_matrix(rgb.shape[0], height)
    columns = lanczos_matrix(rgb.shape[1], width)
    samples = srgb_to_linear(rgb.astype(np.float64)) if space == "linear" else rgb.astype(np.float64)
    out = np.einsum("yi,ixc,wx->ywc", rows, samples, columns, optimize=True)
    return linear_to_srgb(out) if space == "linear" else np.clip(out, 0, 255)


def zone_plate(size=1024):
    """Grey rings cos(pi r^2 / size): their frequency rises from 0 at the centre to the Nyquist
    limit (half a cycle a pixel) at the middle of each side, so that any shrink has rings finer
    than it can hold, which a good filter turns to flat grey and a poor one aliases into false
    rings."""
    y, x = np.mgrid[0:size, 0:size] + 0.5 - size / 2
    plate = 127.5 + 127.5 * np.cos(math.pi * (x * x + y * y) / size)
    grey = np.clip(np.rint(plate), 0, 255).astype(np.uint8)
    return np.repeat(grey[:, :, None], 3, axis=2)


def read_ppm(data):
    """A binary PPM or PGM (P6 or P5, maxval 255), as djpeg writes it; grey made RGB."""
    fields, position = [], 0
    while len(fields) < 4:
        while data[position:position + 1].isspace():
            position += 1
        if data[position:position + 1] == b"#":
            position = data.index(b"\n", position)
            continue
        end = position
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[position:end])
        position = end
    assert fields[0] in (b"P6", b"P5") and fields[3] == b"255", fields
    width, height, channels = int(fields[1]), int(fields[2]), 3 if fields[0] == b"P6" else 1
    pixels = np.frombuffer(data[position + 1:position + 1 + width * height * channels], dtype=np.uint8)
    pixels = pixels.reshape(height, width, channels)
    return pixels if channels == 3 else np.repeat(pixels, 3, axis=2)


def decode_jpeg(path, scale=None):
    """Decoded by libjpeg-turbo's djpeg (accurate DCT, as camroll decodes), optionally at a DCT
    scale such as "4/8"."""
    command = ["djpeg", "-dct", "int", "-pnm"] + (["-scale", scale] if scale else []) + [str(path)]
    return read_ppm(subprocess.run(command, check=True, capture_output=True).stdout)
