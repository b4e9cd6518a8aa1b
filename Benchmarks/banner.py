#!/usr/bin/env python3
"""What the --timestamp/--title banner costs, beside the encoding of the frame it is drawn on.

For each size (640x480, 1280x720, 1920x1080), `camroll snap -d pattern --frames N` (YUYV frames,
as a camera's) with CAMROLL_TRACE=1, three ways: no banner; the default banner (three quarters
opaque: the strip's rows converted to RGB, drawn, converted back); an opaque one (nothing of the
frame read, only written). Per frame, the trace gives "frame K taken" → "banner drawn" (the
banner: the frame's copy, the layout when its text changed, the strip) → "frame K encoded"
(the JPEG). The medians over the frames are reported: the banner's time, the encoding's, and
their ratio; and the encoding's without a banner, to show it is the same work.
Then a 1920x1080 JPEG file, whose banner means a decode and an encode it would not have had.

usage: Benchmarks/banner.py CAMROLL [--frames N]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

TRACE = re.compile(r"^trace: (.*?)\s+([0-9.]+)\s+[0-9.]+$")


def phases(command, env):
    """The trace's phases, in order, as (name, ms since start)."""
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)}: exit {result.returncode}: {result.stderr}")
    marks = []
    for line in result.stderr.splitlines():
        match = TRACE.match(line)
        if match:
            marks.append((match.group(1).strip(), float(match.group(2))))
    return marks


def per_frame(marks):
    """Each frame's (banner ms or None, encode ms)."""
    frames, taken, drawn = [], None, None
    for name, at in marks:
        if re.fullmatch(r"frame \d+ taken", name):
            taken, drawn = at, None
        elif name == "banner drawn":
            drawn = at
        elif re.fullmatch(r"frame \d+ encoded", name) and taken is not None:
            start = drawn if drawn is not None else taken
            frames.append((drawn - taken if drawn is not None else None, at - start))
    return frames


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("camroll")
    parser.add_argument("--frames", type=int, default=40)
    args = parser.parse_args()
    env = dict(os.environ, CAMROLL_TRACE="1", TZ="UTC")
    banner = ["--timestamp", "--title", "Front door"]
    print(f"| size | encode, no banner (ms) | banner, default #263a93bf (ms) | encode (ms) | banner / encode | banner, opaque (ms) | opaque / encode |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as directory:
        def snap(size, extra, name):
            return per_frame(phases([args.camroll, "-d", "pattern", "-r", size, "--frames", str(args.frames), "--skip", "0",
                                     "--thumbnail", "none", "-o", f"{directory}/{name}-{{frame}}.jpg", "--overwrite",
                                     "--db", f"{directory}/c.db", "--quiet"] + extra, env))
        for size in ["640x480", "1280x720", "1920x1080"]:
            plain = statistics.median(encode for _, encode in snap(size, [], "plain")[1:])
            default = snap(size, banner, "default")[1:]  # the first frame lays out and loads fonts
            opaque = snap(size, banner + ["--banner-color", "black"], "opaque")[1:]
            drawn, encode = statistics.median(b for b, _ in default), statistics.median(e for _, e in default)
            drawn_opaque, encode_opaque = statistics.median(b for b, _ in opaque), statistics.median(e for _, e in opaque)
            print(f"| {size} | {plain:.2f} | {drawn:.2f} | {encode:.2f} | {100 * drawn / encode:.1f} % | {drawn_opaque:.2f} | {100 * drawn_opaque / encode_opaque:.1f} % |")

        # A JPEG file: passed through untouched without a banner; decoded, drawn and encoded with one.
        source = f"{directory}/source.jpg"
        subprocess.run([args.camroll, "-d", "pattern", "-r", "1920x1080", "-o", source, "--db", f"{directory}/c.db", "--quiet"], check=True)
        def file_time(extra):
            times = []
            for round in range(9):
                marks = dict(phases([args.camroll, "-d", "file:" + source, "-o", f"{directory}/f.jpg", "--overwrite", "--thumbnail", "none",
                                     "--db", f"{directory}/c.db", "--quiet"] + extra, env))
                times.append(marks["frame 1 encoded"] - marks["frame 1 taken"])
            return statistics.median(times)
        print(f"\n1920x1080 JPEG file: {file_time([]):.2f} ms from read to JPEG without a banner (kept as it is), "
              f"{file_time(banner):.2f} ms with one (decoded, drawn, encoded at -q)")


if __name__ == "__main__":
    main()
