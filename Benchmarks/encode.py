#!/usr/bin/env python3
"""camroll's JPEG encoding against tjbench's on the same picture, quality and subsampling
(make bench-encode): a camera's YUYV frame (the pattern: YUYV split into planes and compressed
8 rows at a time, against `tjbench -yuv`, compressing from planar YUV) and an RGB picture (a PNG
file: tjCompress2 from RGB, against tjbench from the same pixels as a PPM), at 640x480 and
1920x1080.

camroll's time is its own trace's for the frame's encoding (CAMROLL_TRACE: from "frame N taken"
to "frame N encoded", to the microsecond; the median of frames 2 to 41, the first paying for
the encoder's set-up);
the subsampling tjbench is given is the one camroll's output has. Both pinned to one CPU, in
alternating pairs: this machine's two vCPUs differ by up to half at times, which otherwise
decides the ratio; the median of the pairs' ratios is reported (target >= 0.90).

usage: Benchmarks/encode.py CAMROLL [--pairs N] [--dir DIR]"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

SIZES = [(640, 480), (1920, 1080)]
QUALITY = 90


def trace_between(stderr, first, then):
    """The milliseconds from the end of phase `first` to the end of phase `then`, by their end
    times: the "took" column counts from the previous mark of any thread, and the catalog's
    thread marks its rows in between a frame's phases."""
    ends = {}
    for line in stderr.splitlines():
        for phase in (first, then):
            if line.startswith("trace: " + phase + " "):
                ends[phase] = float(line.split()[-2])
    if len(ends) != 2:
        sys.exit(f"bench-encode: no phases '{first}' and '{then}' in the trace")
    return ends[then] - ends[first]


def subsampling(jpeg):
    """tjbench's name for a JPEG's subsampling (444, 422, 420, gray), from ImageMagick's or djpeg's view."""
    factors = subprocess.run(["identify", "-format", "%[jpeg:sampling-factor]", jpeg], capture_output=True, text=True).stdout
    return {"1x1,1x1,1x1": "444", "2x1,1x1,1x1": "422", "2x2,1x1,1x1": "420", "1x1": "gray"}.get(factors.strip(), None)


def tjbench_mpixels(cpu, ppm, sampling, from_yuv):
    """tjbench's compression rate (Mpixels/s) of `ppm` at QUALITY and `sampling`, with the DCT
    camroll uses there: from planar YUV with the fast DCT, as camroll's YUYV path below quality
    96 (yuv_jpeg.c), or from RGB with the accurate DCT, as camroll's RGB path (tjCompress2 with
    TJFLAG_ACCURATEDCT)."""
    command = ["taskset", "-c", cpu, "tjbench", ppm, str(QUALITY), "-subsamp", sampling, "-quiet", "-benchtime", "2"]
    command += ["-fastdct"] if from_yuv else ["-accuratedct"]
    table = subprocess.run(command + (["-yuv"] if from_yuv else []), check=True, capture_output=True, text=True).stdout
    label = {"444": "4:4:4", "422": "4:2:2", "420": "4:2:0", "gray": "Gray"}[sampling]
    row = [line.split() for line in table.splitlines() if label in line.split()][-1]
    # Columns after the subsampling: quality, width, height, then the compression rate; -yuv
    # adds its own columns: the rate from planar YUV is the 5th after the subsampling.
    return float(row[row.index(label) + (5 if from_yuv else 4)])


def measure(camroll, work, kind, width, height, pairs, cpu):
    catalog = os.path.join(work, "encode.sqlite3")
    out = os.path.join(work, f"{kind}-{width}")
    ppm = os.path.join(work, f"{kind}-{width}.ppm")
    png = os.path.join(work, f"source-{width}.png")
    if kind == "RGB" and not os.path.exists(png):
        # The pattern's picture as a PNG: decoded to RGB by camroll, then encoded from RGB.
        subprocess.run([camroll, "snap", "-d", "pattern", "-r", f"{width}x{height}", "-q", "100", "--no-exif",
                        "-o", os.path.join(work, "seed.jpg"), "--overwrite", "--db", catalog, "--quiet"], check=True)
        subprocess.run(["convert", os.path.join(work, "seed.jpg"), png], check=True)

    def camroll_mpixels():
        shutil.rmtree(out, ignore_errors=True)
        # 41 frames, a camera's or the same PNG's picture again each time (a file source's
        # --frames encodes every frame): the first also sets the encoder up and touches its
        # buffers first, which tjbench's warm loop does not count; the later ones' median.
        frames = 41
        source = ["-d", "pattern", "-r", f"{width}x{height}"] if kind == "YUYV" else ["-d", "file:" + png]
        command = [camroll, "snap"] + source + ["--frames", str(frames)]
        stderr = subprocess.run(
            ["taskset", "-c", cpu] + command + ["-q", str(QUALITY), "--no-exif", "--thumbnail", "none",
                                                "-o", os.path.join(out, "{seq}.jpg"), "--db", catalog, "--quiet"],
            env=dict(os.environ, CAMROLL_TRACE="1"), check=True, capture_output=True, text=True).stderr
        phases = [trace_between(stderr, f"frame {k} taken", f"frame {k} encoded") for k in range(2, frames + 1)]
        return width * height / statistics.median(phases) / 1000

    results = []
    for index in range(pairs):
        ours = camroll_mpixels()
        if index == 0:
            first = os.path.join(out, sorted(os.listdir(out))[0])
            sampling = subsampling(first)
            with open(ppm, "wb") as f:
                subprocess.run(["djpeg", "-pnm", first], stdout=f, check=True)
        theirs = tjbench_mpixels(cpu, ppm, sampling, from_yuv=kind == "YUYV")
        results.append((ours, theirs))
    return sampling, results


def report(camroll, work, pairs, kinds=("YUYV", "RGB"), sizes=SIZES):
    cpu = str(max(os.sched_getaffinity(0)))
    ratios = {}
    for kind in kinds:
        for width, height in sizes:
            sampling, results = measure(camroll, work, kind, width, height, pairs, cpu)
            ratio = statistics.median(ours / theirs for ours, theirs in results)
            ratios[(kind, width)] = ratio
            print(f"encoding {kind} {width}x{height} q{QUALITY} {sampling} on CPU {cpu}: camroll "
                  + " / ".join(f"{ours:.0f}" for ours, _ in results) + " Mpixels/s, tjbench "
                  + " / ".join(f"{theirs:.0f}" for _, theirs in results)
                  + f", median ratio of {pairs} pairs {ratio:.2f} (target >= 0.90): {'OK' if ratio >= 0.9 else 'BELOW TARGET'}",
                  flush=True)
    return ratios


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("camroll")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--dir")
    arguments = parser.parse_args()
    work = arguments.dir or tempfile.mkdtemp(prefix="camroll-bench-encode-")
    os.makedirs(work, exist_ok=True)
    try:
        report(os.path.abspath(arguments.camroll), work, arguments.pairs)
    finally:
        if not arguments.dir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
