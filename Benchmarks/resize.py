#!/usr/bin/env python3
"""make bench-resize: camroll's resizing beside ImageMagick's, against a float Lanczos-3 reference.

Sources: a 1024x1024 zone plate (generated) and two photos bundled with scikit-image (astronaut,
512x512; retina, 1411x1411), each saved as a JPEG at quality 95, 4:4:4. Each is shrunk x0.5,
x0.3 and x0.12, and cropped to 413:626 and fitted into 413x626 (the astronaut, smaller than
that, into 276x418: camroll never enlarges), by

    camroll snap -d file:SRC -r WxH [--crop 413:626] -q 95 -o OUT.jpg
    convert SRC [-crop CWxCH+X+Y +repage] -filter Lanczos -resize WxH! -quality 95 -sampling-factor 1x1 OUT.jpg

(the crop given to ImageMagick as the rectangle camroll's centred crop takes). Each output is
decoded with djpeg and scored with scikit-image's structural_similarity on RGB (channel_axis,
data_range 255, its default 7x7 window) against Benchmarks/resize_reference.py's float64
Lanczos-3 of the decoded source, made in linear light and, beside it, on the sRGB codes. Times
are whole commands, medians of --runs runs, the two tools alternating on the same files.

Usage: Benchmarks/resize.py [--camroll BINARY] [--runs N] [--dir DIR]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import resize_reference as ref  # noqa: E402

try:
    from PIL import Image
    import skimage.data
    from skimage.metrics import structural_similarity
except ImportError:
    sys.exit("bench-resize needs scikit-image (its photos, structural_similarity) and Pillow: "
             "python3 -m pip install scikit-image")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONVERT = "/usr/bin/convert"  # ImageMagick's own, not a wrapper in front of it on PATH


def sources():
    yield "zone plate 1024²", ref.zone_plate(1024)
    yield "astronaut 512²", skimage.data.astronaut()
    yield "retina 1411²", skimage.data.retina()


def centred_crop(width, height, w, h):
    """camroll's --crop W:H (CropRequest.rect): the largest centred rectangle of that shape."""
    crop_width, crop_height = width, height
    if width * h > height * w:
        crop_width = max(1, height * w // h)
    else:
        crop_height = max(1, width * h // w)
    return (width - crop_width) // 2, (height - crop_height) // 2, crop_width, crop_height


def timed(command):
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)}: exit {result.returncode}: {result.stderr.decode(errors='replace')}")
    return elapsed


def ssim(a, b):
    return structural_similarity(a.astype(np.float64), b.astype(np.float64), channel_axis=2, data_range=255)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--camroll", default=os.path.join(ROOT, ".build/release/camroll"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--dir", help="where the files go (default: a new directory under /dev/shm or /tmp)")
    args = parser.parse_args()
    if not os.access(args.camroll, os.X_OK):
        sys.exit(f"{args.camroll}: no camroll binary (make release)")
    base = args.dir or tempfile.mkdtemp(prefix="camroll-bench-resize-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    os.makedirs(base, exist_ok=True)
    catalog = os.path.join(base, "catalog.sqlite3")
    version = subprocess.run([CONVERT, "-version"], capture_output=True, text=True).stdout.split("\n")[0]
    print(f"camroll {args.camroll}; {version}; {args.runs} runs; files in {base}")
    print()
    print("| source | to | camroll, linear ref | ImageMagick, linear ref | camroll, sRGB-code ref | ImageMagick, sRGB-code ref "
          "| camroll ms | ImageMagick ms | time ratio |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    ratios = []
    for name, pixels in sources():
        slug = name.split()[0]
        source = os.path.join(base, slug + ".jpg")
        Image.fromarray(np.ascontiguousarray(pixels[:, :, :3])).save(source, quality=95, subsampling=0)
        decoded = ref.decode_jpeg(source)
        height, width = decoded.shape[:2]
        rows = [(f"×{f}", None, (round(width * f), round(height * f))) for f in (0.5, 0.3, 0.12)]
        crop = centred_crop(width, height, 413, 626)
        box = (413, 626) if crop[2] > 413 else (276, 418)
        rows.append((f"413:626 crop, {box[0]}x{box[1]}", crop, box))
        for label, crop, (box_width, box_height) in rows:
            ours, theirs = os.path.join(base, f"{slug}-camroll.jpg"), os.path.join(base, f"{slug}-magick.jpg")
            camroll = [args.camroll, "snap", "-d", "file:" + source, "-r", f"{box_width}x{box_height}", "-q", "95",
                       "-o", ours, "--overwrite", "--db", catalog, "--quiet"]
            if crop:
                camroll[4:4] = ["--crop", "413:626"]
            # camroll's own size for the box (aspect kept), given to ImageMagick exactly.
            timed(camroll)
            out = ref.decode_jpeg(ours)
            out_height, out_width = out.shape[:2]
            magick = [CONVERT, source]
            if crop:
                x, y, w, h = crop
                magick += ["-crop", f"{w}x{h}+{x}+{y}", "+repage"]
            magick += ["-filter", "Lanczos", "-resize", f"{out_width}x{out_height}!", "-quality", "95",
                       "-sampling-factor", "1x1", theirs]
            times = {"camroll": [], "magick": []}
            for _ in range(args.runs):
                times["camroll"].append(timed(camroll))
                times["magick"].append(timed(magick))
            region = decoded
            if crop:
                x, y, w, h = crop
                region = decoded[y:y + h, x:x + w]
            linear = ref.reference(region, out_width, out_height, "linear")
            codes = ref.reference(region, out_width, out_height, "gamma")
            magicked = ref.decode_jpeg(theirs)
            assert magicked.shape == out.shape, (magicked.shape, out.shape)
            ours_ms, theirs_ms = (1000 * statistics.median(times[k]) for k in ("camroll", "magick"))
            ratios.append(ours_ms / theirs_ms)
            print(f"| {name} | {label} → {out_width}x{out_height} | {ssim(out, linear):.4f} | {ssim(magicked, linear):.4f} "
                  f"| {ssim(out, codes):.4f} | {ssim(magicked, codes):.4f} | {ours_ms:.1f} | {theirs_ms:.1f} "
                  f"| {ours_ms / theirs_ms:.2f} |", flush=True)
    print()
    print(f"camroll's time / ImageMagick's: median {statistics.median(ratios):.2f}, {min(ratios):.2f}-{max(ratios):.2f}")
    if not args.dir:
        shutil.rmtree(base)


if __name__ == "__main__":
    main()
