#!/usr/bin/env python3
"""The save's own cost: camroll against the least C that saves the same files atomically the same
way (make bench-save).

Benchmarks/atomic_cost.c's `unnamed` loop writes each file without a name (O_TMPFILE) and links
it under its name, as camroll does where the file system allows, with the same jobs, files and
writes (with `direct`, the whole blocks with O_DIRECT and the tail through the page cache, as
`camroll --direct` writes them) and nothing else: no catalog, no hash, no progress. camroll runs
`snap -n COUNT --jobs N --thumbnail none` into the same directory; both rates are files a second
(camroll's summary MB/s over its saving time, over its file size; the loop's own clock around its
writers). Rows: a 23 KB JPEG (the test pattern's, 20 000 files) and a 2.3 MB one (a photo-like
2560x1440, 200 files), `--jobs` 1, 2 and 4, on a tmpfs, and on ext4 in an image on a loop device
through the page cache and with O_DIRECT; camroll and the loop alternate, ROUNDS rounds, the
median of the rounds' ratios is printed beside its range (target >= 0.95).

Then, with --profile (perf): where a 23 KB save's CPU time goes, on the tmpfs, --jobs 1: perf's
samples of a camroll run split by thread (the writer, the catalog's) and by where they fell (the
kernel, camroll's code and the Swift runtime, libc, SQLite), less those of a run of a tenth as
many saves (so without the start-up), as microseconds a save, beside the C loop's under the same
perf.

usage: Benchmarks/save_floor.py CAMROLL [--rounds R] [--size-mb MB] [--dir DIR] [--profile]  (root)
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from steady_memory import steady_memory  # noqa: E402
from storage import Bench, empty, make_photo, mount_filesystems, run  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JOBS = (1, 2, 4)


def ratio_row(label, ours, theirs):
    ratios = [a / b for a, b in zip(ours, theirs)]
    median = statistics.median(ratios)
    return (f"  {label}: camroll {statistics.median(ours):.0f} files/s, the linking loop "
            f"{statistics.median(theirs):.0f}: ratio {median:.2f} (rounds {min(ratios):.2f}-{max(ratios):.2f})"
            f"{'' if median >= 0.95 else '  BELOW 0.95'}")


def floor_rows(benches, filesystems, rounds):
    for name, directory in filesystems:
        for direct in ((False,) if name == "tmpfs" else (False, True)):
            mode = "O_DIRECT" if direct else "page cache"
            print(f"\n{name}, {mode}:", flush=True)
            for bench in benches:
                file_bytes = None
                for jobs in JOBS:
                    ours, theirs = [], []
                    for round_number in range(rounds):
                        steps = ["camroll", "loop"] if round_number % 2 == 0 or file_bytes is None else ["loop", "camroll"]
                        for step in steps:
                            if step == "camroll":
                                rate, file_bytes = bench.camroll_jobs(directory, jobs, direct)
                                ours.append(rate)
                            else:
                                theirs.append(bench.c_loop(directory, jobs, file_bytes, direct, "unnamed"))
                    print(ratio_row(f"{bench.count} files of {file_bytes} bytes, --jobs {jobs}", ours, theirs), flush=True)


# perf's shared-object names, grouped.
def where(dso):
    if dso.startswith("[kernel"):
        return "kernel"
    if "sqlite" in dso:
        return "SQLite"
    if dso.startswith("libc.") or dso.startswith("ld-linux") or dso == "[vdso]":
        return "libc"
    if dso in ("camroll",) or dso.startswith("libswift") or dso.startswith("libFoundation") or dso.startswith("libdispatch"):
        return "camroll and Swift"
    return "other"


def perf_split(work, command):
    """{(thread, place): samples} of `command` under perf record, and their sum."""
    data = os.path.join(work, "perf.data")
    recorded = run(["perf", "record", "-F", "9999", "-o", data, "--"] + command)
    if recorded.returncode != 0:
        raise SystemExit(f"save-floor: perf record failed: {recorded.stderr[-300:]}")
    report = run(["perf", "report", "-i", data, "--no-children", "--sort", "comm,dso", "-g", "none",
                  "--stdio", "-F", "sample,comm,dso"]).stdout
    cells, total = {}, 0
    for line in report.splitlines():
        parts = line.split()
        if line.startswith("#") or len(parts) < 3 or not parts[0].isdigit():
            continue
        samples, comm, dso = int(parts[0]), parts[1], parts[2]
        key = ("catalog thread" if comm.endswith("-catalog") else "writer", where(dso))
        cells[key] = cells.get(key, 0) + samples
        total += samples
    return cells, total


def per_save(work, command_of, count):
    """{(thread, place): µs of CPU a save} of `command_of(count)`, less that of a run of a tenth
    as many saves, over the saves between: what a save costs, without the start-up (the loader,
    the first frame's encoding, the catalog's opening) that a whole run's samples count too."""
    few = max(1, count // 10)
    many_cells, many_total = perf_split(work, command_of(count))
    few_cells, few_total = perf_split(work, command_of(few))
    # Samples at 9999 Hz: 100 µs of CPU each.
    return ({key: (many_cells.get(key, 0) - few_cells.get(key, 0)) * 1e6 / 9999 / (count - few)
             for key in set(many_cells) | set(few_cells)}, many_total + few_total)


def profile(bench, directory, file_bytes, rounds):
    """µs of CPU a 23 KB save on the tmpfs, --jobs 1, by thread and place, camroll's beside the
    C loop's, both under the same perf, alternating."""
    if shutil.which("perf") is None:
        print("\nprofile: perf is not installed (apt install linux-perf); skipped")
        return
    def camroll(count):
        empty(directory)
        if os.path.exists(bench.catalog):
            os.remove(bench.catalog)
        return [bench.camroll, "snap", "-d", bench.source, "-n", str(count), "--thumbnail", "none",
                "-o", os.path.join(directory, "{seq}.jpg"), "--db", bench.catalog, "--quiet"]

    def loop(count):
        empty(directory)
        return [bench.atomic_cost, directory, str(count), str(file_bytes), "1", "unnamed"]

    # Alternated, ROUNDS times each, each cell's median: this machine's speed moves by half
    # from one run to the next.
    runs = {"camroll": [], "loop": []}
    for _ in range(rounds):
        runs["camroll"].append(per_save(bench.work, camroll, bench.count))
        runs["loop"].append(per_save(bench.work, loop, bench.count))
    empty(directory)

    def medians(splits):
        keys = {key for split, _ in splits for key in split}
        return {key: statistics.median(split.get(key, 0) for split, _ in splits) for key in keys}
    ours, theirs = medians(runs["camroll"]), medians(runs["loop"])
    ours_samples = sum(total for _, total in runs["camroll"])
    their_samples = sum(total for _, total in runs["loop"])
    print(f"\nwhere a save's CPU goes, µs a save, {bench.count} saves of {file_bytes} bytes less {bench.count // 10}, --jobs 1, "
          f"tmpfs (perf at 9999 Hz, medians of {rounds} alternating pairs of runs each, {ours_samples} and {their_samples} samples):")
    for label, split, threads in [("camroll", ours, ("writer", "catalog thread")), ("the linking C loop", theirs, ("writer",))]:
        for thread in threads:
            row = {place: value for (t, place), value in split.items() if t == thread}
            print(f"  {label}, {thread}: {sum(row.values()):.2f}: " + ", ".join(
                f"{place} {value:.2f}" for place, value in sorted(row.items(), key=lambda item: -item[1])))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("camroll")
    parser.add_argument("--dir", default=os.path.join(ROOT, "Benchmarks", "out", "save-floor"))
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--profile-only", action="store_true", help="the profile alone, on a tmpfs")
    args = parser.parse_args()
    camroll = os.path.abspath(args.camroll)
    work = os.path.abspath(args.dir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    filesystems, undo = mount_filesystems(work, args.size_mb)
    try:
        photo = os.path.join(work, "photo.jpg")
        make_photo(photo)
        atomic_cost = os.path.join(work, "atomic_cost")
        subprocess.run(["cc", "-O2", "-o", atomic_cost, os.path.join(ROOT, "Benchmarks", "atomic_cost.c")], check=True)
        small = Bench(camroll, work, 20000, "pattern")
        photos = Bench(camroll, work, 200, "file:" + photo)
        for bench in (small, photos):
            bench.atomic_cost = atomic_cost
        print(f"camroll {run([camroll, '--version']).stdout.splitlines()[0]}; load average "
              f"{' '.join(open('/proc/loadavg').read().split()[:3])} on {os.cpu_count()} CPUs; {args.rounds} rounds")
        if not args.profile_only:
            floor_rows([small, photos], filesystems, args.rounds)
        if (args.profile or args.profile_only) and filesystems and filesystems[0][0] == "tmpfs":
            profile(small, filesystems[0][1], small.camroll_jobs(filesystems[0][1], 1, False)[1], max(args.rounds, 5))
    finally:
        for command in undo:
            run(command)


if __name__ == "__main__":
    with steady_memory():
        main()
