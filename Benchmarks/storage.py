#!/usr/bin/env python3
"""camroll as a storage tester beside f3 and fio, on the same file systems in one run.

On a tmpfs and (where this machine can loop-mount one) an ext4 image, each round, alternating
the tools so that they all see the same conditions:
  - fill and read back: `camroll snap --fill` then `camroll verify`, against f3write then f3read
    (f3's own "Average writing/reading speed"; camroll's summary rates; f3's MB are MiB);
  - parallel writers: `camroll snap -n COUNT --jobs N` against fio with N jobs writing the same
    number of files of the same size (one file a write, opened when written, as camroll does),
    for N = 1, 2, 4, in files a second (fio's bw_bytes over its file size; camroll's summary
    MB/s, over its saving time, over its file size); on ext4 both with O_DIRECT (`--direct`,
    fio's direct=1), so that it is the device that is measured and not how much the page cache
    takes before writeback throttles. O_DIRECT writes whole blocks only: camroll writes a file's
    last partial block through the page cache, fio cannot, so fio runs twice there, its files
    the whole blocks of camroll's (the tail left unwritten: less than camroll writes) and the
    next whole number of blocks up (the tail padded to a block: a little more), and camroll is
    compared with both.
  - the price of an atomic save on the file system, apart from camroll: for the small files,
    three C loops with the same jobs, files and writes (Benchmarks/atomic_cost.c), one creating
    each file under its name as fio does, one writing it under a temporary name and renaming it
    into place, one writing a file without a name (O_TMPFILE) and linking it under its name, as
    camroll does where the file system allows; camroll is then also compared with the last.
camroll saves a 2560x1440 photo-like JPEG (~2.3 MB, made once with cjpeg from a noisy
gradient), the size a phone or a good webcam gives; the parallel writers are also measured with
the test pattern's 23 KB JPEG, 100 times as many (about the same bytes), where the cost of each
file (create, rename, catalog row) shows.
It prints medians over the rounds and the ratios the issue asks about: fill ≥ f3write,
verify ≥ f3read, --jobs 2 ≥ 1.5 × --jobs 1 on tmpfs, --jobs N ≥ 0.95 × fio.

usage: Benchmarks/storage.py [--size-mb MB] [--count N] [--rounds R] [--dir DIR]   (root: mounts)
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

from steady_memory import steady_memory

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(command, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, **kwargs)


def empty(directory):
    """Removes what a run left, and lets the file system finish with it before the next run: on
    the ext4 loop device the next writers otherwise ran at a third of their speed, or not, as the
    deferred work of the deletion fell (camroll --direct --jobs 2: 0.8 or 2.9 GB/s in a row)."""
    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.remove(path)
    os.sync()


def last_json(text, event="summary"):
    for line in reversed(text.splitlines()):
        if line.startswith("{") and (event is None or f'"event":"{event}"' in line):
            return json.loads(line)
    raise SystemExit(f"storage: no {event} in: {text[-500:]}")


def make_photo(path, width=2560, height=1440):
    """A JPEG with a photo's entropy: gradients under noise, quality 90 (cjpeg)."""
    noise = os.urandom(width * height * 3)
    pixels = bytearray(width * height * 3)
    for y in range(height):
        for x in range(width):
            i = (y * width + x) * 3
            pixels[i] = (x * 255 // width + noise[i] // 4) & 255
            pixels[i + 1] = (y * 255 // height + noise[i + 1] // 4) & 255
            pixels[i + 2] = ((x + y) * 128 // (width + height) + noise[i + 2] // 4) & 255
    ppm = path + ".ppm"
    with open(ppm, "wb") as f:
        f.write(b"P6 %d %d 255\n" % (width, height) + bytes(pixels))
    with open(path, "wb") as f:
        subprocess.run(["cjpeg", "-quality", "90", ppm], stdout=f, check=True)
    os.remove(ppm)


class Bench:
    def __init__(self, camroll, work, count, source):
        self.camroll = camroll
        self.work = work
        self.count = count
        self.source = source
        self.catalog = os.path.join(work, "catalog.sqlite3")

    def camroll_fill(self, directory):
        """(write MB/s, read MB/s) of a fill and its verify."""
        if os.path.exists(self.catalog):
            os.remove(self.catalog)
        fill = run([self.camroll, "snap", "-d", self.source, "--fill", "--thumbnail", "none",
                    "-o", os.path.join(directory, "{seq}.jpg"), "--db", self.catalog, "--json"])
        if fill.returncode != 0:
            raise SystemExit(f"storage: camroll --fill failed: {fill.stderr}")
        written = last_json(fill.stdout)
        verify = run([self.camroll, "verify", "--db", self.catalog, "--json"])
        if verify.returncode != 0:
            raise SystemExit(f"storage: camroll verify found problems: {verify.stdout[-500:]}")
        read = last_json(verify.stdout)
        empty(directory)
        return written["mb_per_s"], read["mb_per_s"]

    def f3(self, directory):
        """(write MB/s, read MB/s) as f3write and f3read report them, in MB of 10^6 bytes."""
        write = run(["f3write", directory])
        read = run(["f3read", directory])
        empty(directory)

        def speed(text, what):
            match = re.search(rf"Average {what} speed: ([0-9.]+) (\w+)/s", text)
            if not match:
                raise SystemExit(f"storage: no {what} speed from f3: {text[-400:]}")
            scale = {"Byte": 1, "KB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3}[match.group(2)]
            return float(match.group(1)) * scale / 1e6
        return speed(write.stdout, "writing"), speed(read.stdout, "reading")

    def camroll_jobs(self, directory, jobs, direct):
        """(files a second, bytes a file) of COUNT saves by `jobs` writers."""
        if os.path.exists(self.catalog):
            os.remove(self.catalog)
        result = run([self.camroll, "snap", "-d", self.source, "-n", str(self.count),
                      "--jobs", str(jobs), "--thumbnail", "none", "-o", os.path.join(directory, "{seq}.jpg"),
                      "--db", self.catalog, "--json"] + (["--direct"] if direct else []))
        if result.returncode != 0:
            raise SystemExit(f"storage: camroll --jobs {jobs} failed: {result.stderr}")
        summary = last_json(result.stdout)
        empty(directory)
        file_bytes = summary["bytes"] // summary["saves"]
        return summary["mb_per_s"] * 1e6 / file_bytes, file_bytes

    def c_loop(self, directory, jobs, file_bytes, direct, how):
        """Files a second of Benchmarks/atomic_cost.c: COUNT files made `how` (plain, rename,
        unnamed)."""
        result = run([self.atomic_cost, directory, str(self.count), str(file_bytes), str(jobs), how]
                     + (["direct"] if direct else []))
        if result.returncode != 0:
            raise SystemExit(f"storage: atomic_cost failed: {result.stderr[-400:]}")
        empty(directory)
        return float(result.stdout)

    def fio(self, directory, jobs, file_bytes, direct, padded=False):
        """Files a second of fio: `jobs` jobs, COUNT files in all of `file_bytes` each (with
        O_DIRECT, its whole blocks, or `padded` to the next whole block), one write a file."""
        if direct:
            file_bytes = (-(-file_bytes // 4096) if padded else file_bytes // 4096) * 4096
        result = run(["fio", "--name=saves", f"--directory={directory}", "--rw=write", f"--bs={file_bytes}",
                      f"--direct={1 if direct else 0}",
                      f"--filesize={file_bytes}", f"--nrfiles={self.count // jobs}", f"--numjobs={jobs}",
                      "--openfiles=1", "--create_on_open=1", "--file_service_type=sequential", "--group_reporting",
                      "--output-format=json"])
        if result.returncode != 0:
            raise SystemExit(f"storage: fio failed: {result.stderr[-400:]}")
        report = json.loads(result.stdout[result.stdout.index("{"):])
        empty(directory)
        return report["jobs"][0]["write"]["bw_bytes"] / file_bytes


def spread(ours, theirs):
    """The range of the per-round ratios: how far one round's figure can be trusted here."""
    ratios = [a / b for a, b in zip(ours, theirs)]
    return f"rounds {min(ratios):.2f}-{max(ratios):.2f}"


def mount_filesystems(work, size_mb):
    """(name, directory) of the file systems this machine lets us mount, and how to undo them."""
    mounted, undo = [], []
    tmpfs = os.path.join(work, "tmpfs")
    os.makedirs(tmpfs, exist_ok=True)
    if run(["mount", "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs", tmpfs]).returncode == 0:
        mounted.append(("tmpfs", tmpfs))
        undo.append(["umount", tmpfs])
    else:
        print("storage: cannot mount a tmpfs here (root needed); skipped")
    image, ext4 = os.path.join(work, "ext4.img"), os.path.join(work, "ext4")
    os.makedirs(ext4, exist_ok=True)
    with open(image, "wb") as f:
        f.truncate(size_mb * 1024 * 1024)
    if run(["mkfs.ext4", "-q", "-F", "-m", "0", image]).returncode == 0 and \
            run(["mount", "-o", "loop", image, ext4]).returncode == 0:
        mounted.append(("ext4 on a loop device", ext4))
        undo.append(["umount", ext4])
    else:
        print("storage: cannot loop-mount an ext4 image here; skipped")
    return mounted, undo


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", default=os.path.join(ROOT, "Benchmarks", "out", "storage"))
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    for tool in ["f3write", "f3read", "fio"]:
        if shutil.which(tool) is None:
            sys.exit(f"storage: {tool} is not installed (apt install f3 fio)")
    subprocess.run(["swift", "build", "-c", "release", "--package-path", ROOT], check=True, stdout=subprocess.DEVNULL)
    camroll = os.path.join(ROOT, ".build", "release", "camroll")
    work = os.path.abspath(args.dir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    filesystems, undo = mount_filesystems(work, args.size_mb)
    photo = os.path.join(work, "photo.jpg")
    make_photo(photo)
    bench = Bench(camroll, work, args.count, "file:" + photo)
    # As many small files as make the photos' bytes: fio times a run in whole milliseconds, and
    # 2000 of them took 12-60 ms here (a ratio 2-8% off by that clock alone).
    small = Bench(camroll, work, args.count * 100, "pattern")
    small.atomic_cost = os.path.join(work, "atomic_cost")
    subprocess.run(["cc", "-O2", "-o", small.atomic_cost, os.path.join(ROOT, "Benchmarks", "atomic_cost.c")], check=True)
    try:
        for name, directory in filesystems:
            print(f"\n{name} of {args.size_mb} MB at {directory}, {args.rounds} rounds, "
                  f"a {os.path.getsize(photo)}-byte photo:")
            fill, verify, f3write, f3read = [], [], [], []
            jobs = {n: [] for n in (1, 2, 4)}
            fio = {n: [] for n in (1, 2, 4)}
            small_jobs = {n: [] for n in (1, 2, 4)}
            small_fio = {n: [] for n in (1, 2, 4)}
            # With O_DIRECT, fio again with each file's tail padded to a whole block.
            fio_padded = {n: [] for n in (1, 2, 4)}
            small_fio_padded = {n: [] for n in (1, 2, 4)}
            plain_loop = {n: [] for n in (1, 2, 4)}
            rename_loop = {n: [] for n in (1, 2, 4)}
            unnamed_loop = {n: [] for n in (1, 2, 4)}
            file_bytes = small_bytes = None
            for round_number in range(args.rounds):
                # Alternate which tool goes first.
                pair = [lambda: bench.camroll_fill(directory), lambda: bench.f3(directory)]
                for step in (pair if round_number % 2 == 0 else pair[::-1]):
                    result = step()
                    target = (fill, verify) if step is pair[0] else (f3write, f3read)
                    target[0].append(result[0])
                    target[1].append(result[1])
                direct = name != "tmpfs"
                for n in (1, 2, 4):
                    # Alternate as above (fio takes camroll's file size, known once round 0 ran).
                    def run_fio(tool, results, padded_results, file_bytes):
                        results.append(tool.fio(directory, n, file_bytes, direct))
                        if direct:
                            padded_results.append(tool.fio(directory, n, file_bytes, direct, padded=True))
                    if round_number % 2 == 0:
                        rate, file_bytes = bench.camroll_jobs(directory, n, direct)
                        jobs[n].append(rate)
                        run_fio(bench, fio[n], fio_padded[n], file_bytes)
                        rate, small_bytes = small.camroll_jobs(directory, n, direct)
                        small_jobs[n].append(rate)
                        run_fio(small, small_fio[n], small_fio_padded[n], small_bytes)
                    else:
                        run_fio(bench, fio[n], fio_padded[n], file_bytes)
                        jobs[n].append(bench.camroll_jobs(directory, n, direct)[0])
                        run_fio(small, small_fio[n], small_fio_padded[n], small_bytes)
                        small_jobs[n].append(small.camroll_jobs(directory, n, direct)[0])
                    loops = [(plain_loop, "plain"), (rename_loop, "rename"), (unnamed_loop, "unnamed")]
                    for results, how in (loops if round_number % 2 == 0 else loops[::-1]):
                        results[n].append(small.c_loop(directory, n, small_bytes, direct, how))
            median = statistics.median
            print(f"  fill: camroll --fill {median(fill):.0f} MB/s, f3write {median(f3write):.0f} MB/s: "
                  f"ratio {median(fill) / median(f3write):.2f}, {spread(fill, f3write)} (target >= 1)")
            print(f"  read back: camroll verify {median(verify):.0f} MB/s, f3read {median(f3read):.0f} MB/s: "
                  f"ratio {median(verify) / median(f3read):.2f}, {spread(verify, f3read)} (target >= 1)")
            print("  parallel writers" + (" with O_DIRECT:" if name != "tmpfs" else ", through the page cache:"))
            for label, count, size, ours, theirs, padded in [
                    ("photos", args.count, file_bytes, jobs, fio, fio_padded),
                    ("small files", small.count, small_bytes, small_jobs, small_fio, small_fio_padded)]:
                print(f"  {label}, {count} of {size} bytes: --jobs 2 / --jobs 1 = {median(ours[2]) / median(ours[1]):.2f}"
                      + (" (target >= 1.5 on tmpfs)" if name == "tmpfs" else ""))
                for n in (1, 2, 4):
                    line = (f"    --jobs {n}: camroll {median(ours[n]):.0f} files/s, fio {median(theirs[n]):.0f} files/s"
                            + (" (whole blocks only)" if padded[n] else "")
                            + f": ratio {median(ours[n]) / median(theirs[n]):.2f}, {spread(ours[n], theirs[n])}")
                    if padded[n]:
                        line += (f"; fio with the tail padded {median(padded[n]):.0f} files/s: ratio "
                                 f"{median(ours[n]) / median(padded[n]):.2f}, {spread(ours[n], padded[n])}")
                    print(line + " (target >= 0.95)")
            print("  the price of an atomic save here, small files (C loops, Benchmarks/atomic_cost.c):")
            for n in (1, 2, 4):
                print(f"    --jobs {n}: created under their names {median(plain_loop[n]):.0f} files/s, renamed into "
                      f"place {median(rename_loop[n]):.0f} (ratio {median(rename_loop[n]) / median(plain_loop[n]):.2f}), "
                      f"linked from a file without a name {median(unnamed_loop[n]):.0f} "
                      f"(ratio {median(unnamed_loop[n]) / median(plain_loop[n]):.2f}); camroll / the linking loop "
                      f"{median(small_jobs[n]) / median(unnamed_loop[n]):.2f}, {spread(small_jobs[n], unnamed_loop[n])}")
    finally:
        for command in undo:
            run(command)


if __name__ == "__main__":
    with steady_memory():
        main()
