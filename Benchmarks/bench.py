#!/usr/bin/env python3
"""Saving throughput of `camroll snap` against a minimal C loop, in one run on one directory.

Both save the same 1920x1080 JPEG 2000 times: the C loop with open/write/close/rename and
nothing else; camroll with everything it does (temporary name, no-replace rename, XXH3-128,
a catalog row per save in SQLite, progress). Rounds alternate so that both see the same disk
weather; the median of the per-round ratios of saving rates is reported, and beside it the
ratio of whole-command wall-clock rates. Then camroll's peak resident memory
for N=1000 and N=20000, which must not grow with N. Then one photo: camroll's JPEG encoding
rate against tjbench's on the same 1920x1080 picture (quality 90, 4:2:2, from planar YUV, as
camroll encodes a YUYV frame: Benchmarks/encode.py), and the whole `snap -n 1` (of this build and of the installed one,
`make static`) against a C program doing the least the same photo needs (Benchmarks/snap_one.c:
frame, encode, write, rename). Last, pick's live
preview (`-d pattern -r 1280x720`) on a pseudo-terminal (Tests/vm/pty_keys.c): frames drawn per
second and CPU per frame, into a 160x48 terminal as colour symbols and as a kitty image stream.

usage: Benchmarks/bench.py [--dir DIR] [--count N] [--rounds R]
"""
import argparse
import re
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

import encode
from steady_memory import steady_memory

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def peak_rss_kib(command):
    """Runs `command` and returns its peak resident set size, from wait4's rusage."""
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.execv(command[0], command)
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"bench: {' '.join(command)} failed")
    return usage.ru_maxrss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", default=os.path.join(ROOT, "Benchmarks", "out"))
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()

    subprocess.run(["swift", "build", "-c", "release", "--package-path", ROOT], check=True,
                   stdout=subprocess.DEVNULL)
    camroll = os.path.join(ROOT, ".build", "release", "camroll")
    work = os.path.abspath(args.dir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    save_loop = os.path.join(work, "save_loop")
    subprocess.run(["cc", "-O2", "-o", save_loop, os.path.join(ROOT, "Benchmarks", "save_loop.c")], check=True)

    image = os.path.join(work, "input.jpg")
    catalog = os.path.join(work, "catalog.sqlite3")
    subprocess.run([camroll, "-d", "pattern", "-r", "1920x1080", "-o", image, "--db", catalog, "--quiet"], check=True)
    print(f"input: 1920x1080 JPEG, {os.path.getsize(image)} bytes; {args.count} saves a round; dir {work}")

    def run_c_loop(unnamed=False):
        target = os.path.join(work, "c")
        shutil.rmtree(target, ignore_errors=True)
        begin = time.perf_counter()
        out = subprocess.run([save_loop, image, target, str(args.count)] + (["unnamed"] if unnamed else []),
                             check=True, capture_output=True, text=True).stdout
        wall = time.perf_counter() - begin
        return float(out.split(":")[-1].split()[0]), args.count / wall

    def run_camroll():
        target = os.path.join(work, "camroll")
        shutil.rmtree(target, ignore_errors=True)
        begin = time.perf_counter()
        out = subprocess.run([camroll, "snap", "-d", "pattern", "-r", "1920x1080", "-n", str(args.count),
                              "-o", os.path.join(target, "{seq}.jpg"), "--db", catalog, "--json"],
                             check=True, capture_output=True, text=True).stdout
        wall = time.perf_counter() - begin
        summary = json.loads(out.strip().splitlines()[-1])
        assert summary["saves"] == args.count and summary["status"] == "completed", summary
        return summary["saves_per_s"], args.count / wall

    # Saving rate: the C loop's own timing of its loop against camroll's summary, which times
    # its saving the same way (writes, renames, hashing and the SQLite rows; not the start-up or
    # the capture of the one frame). Whole-command rates, by the wall clock, are shown too. The
    # order rotates so that none always follows another's deletions and writeback. The C loop
    # renames into place; camroll, where the file system makes files without names, links one
    # (cheaper), so it is also set beside a C loop that does that (`unnamed`), run by root only
    # (before Linux 6.10 only root may link by the descriptor, as that loop does).
    linking = os.geteuid() == 0
    ratios, wall_ratios, linking_ratios = [], [], []
    for round_number in range(1, args.rounds + 1):
        runners = [("c", run_c_loop), ("camroll", run_camroll)] + ([("linking", lambda: run_c_loop(True))] if linking else [])
        shift = round_number % len(runners)
        rates = {name: runner() for name, runner in runners[shift:] + runners[:shift]}
        (c_rate, c_wall), (camroll_rate, camroll_wall) = rates["c"], rates["camroll"]
        ratios.append(camroll_rate / c_rate)
        wall_ratios.append(camroll_wall / c_wall)
        line = (f"round {round_number}: saving: C loop {c_rate:8.1f}/s camroll {camroll_rate:8.1f}/s "
                f"ratio {ratios[-1]:.2f} | whole command: C {c_wall:8.1f}/s camroll {camroll_wall:8.1f}/s "
                f"ratio {wall_ratios[-1]:.2f}")
        if linking:
            linking_ratios.append(camroll_rate / rates["linking"][0])
            line += f" | linking C loop {rates['linking'][0]:8.1f}/s ratio {linking_ratios[-1]:.2f}"
        print(line)
    median = statistics.median(ratios)
    print(f"camroll / C loop saves/s: median ratio {median:.2f} over {args.rounds} rounds (target >= 0.95): "
          f"{'OK' if median >= 0.95 else 'BELOW TARGET'}")
    if linking:
        print(f"camroll / the C loop that links files without names, as camroll does here: median ratio "
              f"{statistics.median(linking_ratios):.2f}")
    print(f"whole command, start-up and encoding included: median ratio {statistics.median(wall_ratios):.2f}")

    # SQLite's page cache fills to its 2 MB limit as the catalog grows, so peak memory rises
    # from N=1000 to N=20000 and then stays; a third, larger N tells that plateau from growth.
    # Past it, the heap moves by ~0.8 MB (RssAnon sampled over one run of 260 000 saves: 4.7-5.5
    # MB, falling as well as rising), and a longer run meets a higher peak of that: 5% (~1.3 MB
    # over 40 000 saves) tells it from growth of 33 bytes a save or more, not from less.
    rss = {}
    for n in (1000, 20000, 60000):
        target = os.path.join(work, f"rss{n}")
        shutil.rmtree(target, ignore_errors=True)
        rss[n] = peak_rss_kib([camroll, "snap", "-d", "pattern", "-r", "1920x1080", "-n", str(n), "-o",
                               os.path.join(target, "{seq}.jpg"), "--db", catalog, "--quiet"])
        shutil.rmtree(target, ignore_errors=True)
    filling, beyond = rss[20000] / rss[1000], rss[60000] / rss[20000]
    print(f"peak RSS: N=1000 {rss[1000]} KiB, N=20000 {rss[20000]} KiB (ratio {filling:.2f}: SQLite's cache "
          f"filling), N=60000 {rss[60000]} KiB (ratio to N=20000 {beyond:.2f}, target <= 1.05): "
          f"{'OK' if beyond <= 1.05 else 'GROWS WITH N'}")
    shutil.rmtree(os.path.join(work, "c"), ignore_errors=True)
    shutil.rmtree(os.path.join(work, "camroll"), ignore_errors=True)
    one_photo(camroll, work, args.rounds)
    preview(camroll, work)


def one_photo(camroll, work, rounds):
    # Encoding against tjbench, pinned pairs (Benchmarks/encode.py; `make bench-encode` has
    # the other sizes and the RGB path).
    encode.report(camroll, work, pairs=5, kinds=("YUYV",), sizes=[(1920, 1080)])
    catalog = os.path.join(work, "one.sqlite3")

    # One photo, whole command, alternating.
    snap_one = os.path.join(work, "snap_one")
    subprocess.run(["cc", "-O2", "-o", snap_one, os.path.join(ROOT, "Benchmarks", "snap_one.c"), "-lturbojpeg"], check=True)
    def timed(command):
        begin = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        return time.perf_counter() - begin
    # Also the binary `make install` and `make deb` ship, the Swift runtime linked in: it has no
    # Swift libraries for the dynamic loader to bind at start-up, which this build has.
    subprocess.run(["make", "-s", "-C", ROOT, "static"], check=True, stdout=subprocess.DEVNULL)
    installed = os.path.join(ROOT, ".build", "static", "release", "camroll")
    arguments = ["snap", "-d", "pattern", "-r", "1920x1080", "-o", os.path.join(work, "one.jpg"), "--overwrite",
                 "--db", catalog, "--quiet"]
    commands = {"camroll": [camroll] + arguments, "installed": [installed] + arguments,
                "C": [snap_one, os.path.join(work, "one-c.jpg")]}
    ratios = {"camroll": [], "installed": []}
    for round_number in range(rounds):
        order = list(commands)[round_number % 3:] + list(commands)[:round_number % 3]  # each goes first in turn
        seconds = {name: timed(commands[name]) for name in order}
        for name in ratios:
            ratios[name].append(seconds[name] / seconds["C"])
    print(f"snap -n 1 at 1920x1080, whole command, against a C program (median ratio over {rounds} rounds; camroll also "
          f"hashes, thumbnails, writes EXIF and catalog rows): this build {statistics.median(ratios['camroll']):.2f}, "
          f"the installed build (make static) {statistics.median(ratios['installed']):.2f}")


def preview(camroll, work, seconds=5):
    """pick's preview for `seconds`, in symbols and in kitty mode: rendered fps, CPU."""
    pty_keys = os.path.join(work, "pty-keys")
    subprocess.run(["cc", "-O2", "-o", pty_keys, os.path.join(ROOT, "Tests", "vm", "pty_keys.c")], check=True)
    script = f"wait space shutter\nsleep {seconds * 1000}\nsend q\nend\n"
    for mode, term in [("symbols", "xterm-256color"), ("kitty", "xterm-kitty")]:
        log = os.path.join(work, f"preview-{mode}.log")
        begin = time.monotonic()
        report = subprocess.run(
            [pty_keys, "160", "48", log, "--", camroll, "pick", "-d", "pattern", "-r", "1280x720",
             "--preview-mode", mode, "--db", os.path.join(work, "preview.sqlite3")],
            input=script, capture_output=True, text=True, env=dict(os.environ, TERM=term, COLORTERM="truecolor")).stdout
        wall = time.monotonic() - begin
        screen = open(log, "rb").read().decode("utf-8", "replace")
        drawn = screen.count("space shutter")
        rates = re.findall(r"(\d+\.\d) fps", screen)
        cpu = float(re.search(r"cpu ([0-9.]+)", report).group(1))
        print(f"pick preview, 1280x720 pattern into 160x48 {mode}: {rates[-1] if rates else '?'} fps drawn "
              f"(target >= 30), {drawn} frames, CPU {1000 * cpu / max(1, drawn):.1f} ms a frame, "
              f"{100 * cpu / wall:.0f}% of one core over the whole run (target <= 50%); {len(screen.encode()) // max(1, drawn)} bytes a frame")


if __name__ == "__main__":
    with steady_memory():
        main()
