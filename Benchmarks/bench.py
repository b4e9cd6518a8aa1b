#!/usr/bin/env python3
"""Saving throughput of `camroll snap` against a minimal C loop, in one run on one directory.

Both save the same 1920x1080 JPEG 2000 times: the C loop with open/write/close/rename and
nothing else; camroll with everything it does (temporary name, no-replace rename, XXH3-128,
a catalog row per save in SQLite, progress). Rounds alternate so that both see the same disk
weather; the median of the per-round ratios of saving rates is reported, and beside it the
ratio of whole-command wall-clock rates. Then camroll's peak resident memory
for N=1000 and N=20000, which must not grow with N.

usage: Benchmarks/bench.py [--dir DIR] [--count N] [--rounds R]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

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

    def run_c_loop():
        target = os.path.join(work, "c")
        shutil.rmtree(target, ignore_errors=True)
        begin = time.perf_counter()
        out = subprocess.run([save_loop, image, target, str(args.count)], check=True,
                             capture_output=True, text=True).stdout
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
    # order alternates so that neither always follows the other's deletions and writeback.
    ratios, wall_ratios = [], []
    for round_number in range(1, args.rounds + 1):
        if round_number % 2:
            c_rate, c_wall = run_c_loop()
            camroll_rate, camroll_wall = run_camroll()
        else:
            camroll_rate, camroll_wall = run_camroll()
            c_rate, c_wall = run_c_loop()
        ratios.append(camroll_rate / c_rate)
        wall_ratios.append(camroll_wall / c_wall)
        print(f"round {round_number}: saving: C loop {c_rate:8.1f}/s camroll {camroll_rate:8.1f}/s "
              f"ratio {ratios[-1]:.2f} | whole command: C {c_wall:8.1f}/s camroll {camroll_wall:8.1f}/s "
              f"ratio {wall_ratios[-1]:.2f}")
    median = statistics.median(ratios)
    print(f"camroll / C loop saves/s: median ratio {median:.2f} over {args.rounds} rounds (target >= 0.90): "
          f"{'OK' if median >= 0.9 else 'BELOW TARGET'}")
    print(f"whole command, start-up and encoding included: median ratio {statistics.median(wall_ratios):.2f}")

    rss = {}
    for n in (1000, 20000):
        target = os.path.join(work, f"rss{n}")
        shutil.rmtree(target, ignore_errors=True)
        rss[n] = peak_rss_kib([camroll, "snap", "-d", "pattern", "-r", "1920x1080", "-n", str(n), "-o",
                               os.path.join(target, "{seq}.jpg"), "--db", catalog, "--quiet"])
        shutil.rmtree(target, ignore_errors=True)
    growth = rss[20000] / rss[1000]
    print(f"peak RSS: N=1000 {rss[1000]} KiB, N=20000 {rss[20000]} KiB, ratio {growth:.2f} "
          f"(target <= 1.10): {'OK' if growth <= 1.10 else 'GROWS WITH N'}")
    shutil.rmtree(os.path.join(work, "c"), ignore_errors=True)
    shutil.rmtree(os.path.join(work, "camroll"), ignore_errors=True)


if __name__ == "__main__":
    main()
