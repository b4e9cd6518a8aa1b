#!/usr/bin/env python3
"""What a one-photo `camroll snap` runs for the first time, counted steadily where times are not.

Under qemu's TCG (the VM suite's accelerator here) and on a cold small board alike, a short
process pays for every piece of code it runs once: qemu translates each basic block the first
time it is reached, and that translation, not the running, is most of a one-photo run's time
there (`make vm-bench` shows the phases). The count of translated blocks hardly varies (by up to
~2% between runs: the catalog thread's commits fall at different moments), so it shows what a
change adds or removes where wall times on a shared machine cannot.

This runs the static release binary the VM suite uses under qemu-user (`qemu-x86_64 -d in_asm`)
for `snap -d pattern -r 640x480 --skip 0 -n 1` into an existing catalog, and prints the blocks
translated in each library, the binary's own code split into the Swift runtime, the standard
library, camroll and the rest, and the process's wall time under qemu-user (median of 5, with
CAMROLL_TRACE's phases of the median run).

usage: Benchmarks/startup.py [--binary PATH] [--rounds N]
"""
import argparse
import collections
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def build():
    """The binary `Tests/vm` puts in the guest, built as it builds it; unstripped, so that qemu
    can name the functions of its blocks."""
    sys.path.insert(0, os.path.join(ROOT, "Tests", "vm"))
    import vmtest
    stripped = vmtest.build_camroll()
    return os.path.join(os.path.dirname(stripped), "release", "camroll")


def own_code_kind(symbol):
    """Which part of the binary a block's function belongs to, by its (mangled) name."""
    if symbol.startswith("$s10CamrollKit") or symbol.startswith("camroll_main") or symbol.startswith("cpixels_"):
        return "camroll"
    if symbol.startswith("$ss") or symbol.startswith("$sS"):
        return "Swift standard library"
    if symbol.startswith("$s20FoundationEssentials") or symbol.startswith("$s10Foundation"):
        return "FoundationEssentials"
    if "dispatch" in symbol:
        return "Dispatch"
    if symbol.startswith("swift_") or symbol.startswith("_ZN5swift") or symbol.startswith("_ZL") \
            or symbol.startswith("_ZZ") or symbol.startswith("_ZNK5swift") or "swift" in symbol:
        return "Swift runtime"
    return "other (C start-up, libgcc, …)"


def translated_blocks(log_path):
    """Blocks per library (from the -strace'd mmaps of the log) and, in the binary, per kind."""
    lines = open(log_path, errors="replace").read().splitlines()
    names, regions = {}, []
    for line in lines:
        opened = re.search(r'openat\(-?\d+,"([^"]+)",.*\) = (\d+)$', line)
        if opened:
            names[opened.group(2)] = os.path.basename(opened.group(1))
            continue
        mapped = re.search(r"mmap\((\w+),(\d+),([A-Z_|]+),[A-Z_|]+,(-?\d+),\w+\) = (0x[0-9a-f]+)", line)
        if mapped and "PROT_EXEC" in mapped.group(3):
            regions.append((int(mapped.group(5), 16), int(mapped.group(2)), names.get(mapped.group(4), "?")))
    libraries, kinds = collections.Counter(), collections.Counter()
    for index, line in enumerate(lines):
        if not line.startswith("IN:"):
            continue
        symbol = line[3:].strip()
        following = next((l for l in lines[index + 1:index + 4] if l.startswith("0x")), None)
        if following is None:
            continue
        address = int(following.split(":")[0], 16)
        library = next((name for start, size, name in regions if start <= address < start + size), None)
        if library is None:
            # qemu names the functions of the binary it loaded itself; the dynamic loader it
            # also loads itself, without names.
            library = "camroll (binary)" if symbol else "ld.so"
        libraries[re.sub(r"\.so[.\d]*$", "", library)] += 1
        if library == "camroll (binary)":
            kinds[own_code_kind(symbol)] += 1
    return libraries, kinds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if shutil.which("qemu-x86_64") is None:
        sys.exit("startup: needs qemu-x86_64 (apt install qemu-user)")
    camroll = args.binary or build()
    work = tempfile.mkdtemp(prefix="camroll-startup-")
    catalog = os.path.join(work, "c.db")
    snap = [camroll, "snap", "-d", "pattern", "-r", "640x480", "--skip", "0", "-o", os.path.join(work, "a.jpg"),
            "--overwrite", "--db", catalog, "--quiet"]
    subprocess.run(snap, check=True)  # the catalog exists, as it does for every run but the first
    log = os.path.join(work, "qemu.log")
    subprocess.run(["qemu-x86_64", "-strace", "-d", "in_asm", "-D", log] + snap, check=True,
                   stderr=subprocess.DEVNULL)
    libraries, kinds = translated_blocks(log)
    total = sum(libraries.values())
    print(f"{camroll}: {os.path.getsize(camroll) / 1e6:.1f} MB")
    print(f"blocks qemu translated for one `snap -d pattern -r 640x480 --skip 0` (an existing catalog): {total}")
    for library, count in libraries.most_common():
        print(f"  {count:7d}  {library}")
        if library == "camroll (binary)":
            for kind, part in kinds.most_common():
                print(f"  {'':7s}  {part:7d}  {kind}")
    runs = []
    for _ in range(args.rounds):
        begin = time.perf_counter()
        done = subprocess.run(["qemu-x86_64"] + snap, env=dict(os.environ, CAMROLL_TRACE="1"),
                              capture_output=True, text=True, check=True)
        runs.append((time.perf_counter() - begin, done.stderr))
    runs.sort(key=lambda run: run[0])
    median = runs[len(runs) // 2]
    print(f"wall time under qemu-user: median {median[0] * 1000:.0f} ms, min {runs[0][0] * 1000:.0f} ms "
          f"({args.rounds} runs); the median run's phases:")
    print("\n".join(line for line in median[1].splitlines() if line.startswith("trace:")))
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
