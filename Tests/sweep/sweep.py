#!/usr/bin/env python3
"""Runs camroll many times with random options and values, mostly valid and some hostile, and
flags what no input may cause: a signal or a Swift trap, a runtime's fatal error, a failure
without a message, an error with status 0, more than one error line, a hang.

The fuzz targets exercise the parsers in-process; this runs the whole binary, so an option
that parses fine but meets the file system, the catalog or the encoder in a way nobody tried
shows up here. It then prints each exit status seen with a sample of its messages: a message
that is clear but wrong (an empty --db taken as the working directory, "already exists, use
--overwrite" for a directory that --overwrite cannot replace) is found by reading those.

usage: Tests/sweep/sweep.py BINARY [--runs N] [--seed S]
"""
import argparse
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib


def png(path, width=40, height=30):
    """A small RGB PNG, written with zlib alone."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\0" + bytes((x * 7 + y) % 256 for x in range(width * 3)) for y in range(height))
    with open(path, "wb") as out:
        out.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
                  + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=random.randrange(1 << 30))
    args = parser.parse_args()
    camroll = os.path.abspath(args.binary)
    rng = random.Random(args.seed)
    print(f"sweep: {args.runs} runs, seed {args.seed}")

    work = tempfile.mkdtemp(prefix="camroll-sweep-")
    os.makedirs(f"{work}/out")
    with open(f"{work}/bad.jpg", "wb") as out:
        out.write(b"\xff\xd8\xff\xe0garbage" * 10)
    open(f"{work}/empty.jpg", "wb").close()
    with open(f"{work}/text", "w") as out:
        out.write("hello\n")
    subprocess.run([camroll, "snap", "-d", "pattern", "-r", "64x48", "-n", "3", "-o", f"{work}/out/{{seq}}.jpg",
                    "--db", f"{work}/c.db", "--quiet"], check=True)
    shutil.copy(f"{work}/out/1.jpg", f"{work}/good.jpg")
    png(f"{work}/good.png")

    # Hostile values by kind; durations that parse are kept short (a long --interval is a wait,
    # not a hang).
    numbers = ["0", "1", "-1", "2", "3", "999999999999999999999", "1e3", "0x10", "", " 5", "NaN", "1000000001", "64", "65", "abc"]
    sizes = ["64x48", "0x0", "1x1", "-5x5", "64", "x", "99999x99999", "65536x65536", "64x48+1+1", "1:1", "0:1", "3:2",
             "16x16+100+100", ""]
    durations = ["0", "1ms", "-1s", "s", "10x", "", "1e400s"]
    devices = ["pattern", f"file:{work}/good.jpg", f"file:{work}/bad.jpg", f"file:{work}/empty.jpg", "file:/nonexistent",
               "/dev/null", "/dev/video99", "7", "http://127.0.0.1:1/x.jpg", f"file:{work}", "", "file:"]
    outputs = [f"{work}/out/{{seq}}.jpg", f"{work}/out/x.jpg", f"{work}/out/{{seq:0}}.jpg", f"{work}/out/{{seq:99}}.jpg",
               f"{work}/out/{{bogus}}.jpg", "/proc/x.jpg", f"{work}/text/x.jpg", f"{work}/out/", "", f"{work}/out/%Q.jpg",
               f"{work}/out/{{", f"{work}/out/" + "a" * 300 + ".jpg", f"{work}/out", "~",
               f"{work}/out/{{seq/0}}.jpg", f"{work}/out/{{seq/1000000000000}}/{{seq}}.jpg", f"{work}/out/{{seq/2}}.jpg",
               f"{work}/out/{{seq//5}}/{{seq}}.jpg", f"{work}/out/{{seq/../5}}/{{seq}}.jpg", "-", "--", "-/x.jpg"]
    catalogs = [f"{work}/c.db", f"{work}/text", f"{work}/nodir/c.db", "/proc/c.db", work, "", f"{work}/new.db"]
    byte_sizes = ["1M", "800K", "1", "0", "-1K", "1T", "K", "9999999999999999G"]
    # Valid values, chosen 85% of the time so that most runs get past parsing.
    valid = {
        "-d": ["pattern", f"file:{work}/good.jpg", f"file:{work}/good.png"], "-r": ["64x48", "32x32", "128x96", "16x8", "640x480"],
        "-f": ["auto", "yuyv"], "--fps": ["30", "5"], "--skip": ["0", "1", "2", "auto"], "--frames": ["1", "2", "3"],
        "--interval": ["0", "1ms", "10ms"], "--timeout": ["1s", "2s"], "--max-pixels": ["100000", "1000", "100"],
        "-n": ["1", "2", "5", "20"], "-q": ["1", "50", "90", "100"], "--jobs": ["1", "2", "4"], "--db": [f"{work}/c.db"],
        "-o": [f"{work}/out/{{seq}}.jpg", f"{work}/out/{{uuid}}.jpg", f"{work}/out/{{run}}_{{frame}}_{{seq:4}}.jpg",
               f"{work}/out/%Y/{{seq}}.jpg", f"{work}/out/sub/{{ms}}-{{seq}}.jpg", f"{work}/out/{{seq/2}}/{{seq}}.jpg", "-"],
        "--crop": ["16x16", "1:1", "3:2", "8x8+0+0", "32x24+4+4", "413:626"], "--max-bytes": ["1M", "2K", "800", "5K"],
        "--thumbnail": ["8x8", "160x120", "none", "1024x1024"], "--limit": ["1", "3"], "--run": ["1", "2", "last"],
        "--plot": [f"{work}/p.svg", f"{work}/p.png"], "--color": ["never", "always"],
    }
    snap = [("-d", devices), ("-r", sizes), ("-f", ["auto", "mjpeg", "yuyv", "NV12", "ZZZZ", ""]), ("--fps", numbers),
            ("--skip", numbers), ("--frames", numbers), ("--interval", durations), ("--timeout", durations),
            ("--set", ["brightness=5", "=", "x", "a=b=c", ""]), ("--max-pixels", numbers), ("--offline", None),
            ("-n", numbers), ("-o", outputs), ("-q", numbers), ("--crop", sizes), ("--no-exif", None),
            ("--max-bytes", byte_sizes), ("--thumbnail", sizes + ["none"]), ("--fsync", None), ("--stamp", None),
            ("--fill", None), ("--direct", None), ("--jobs", numbers), ("--overwrite", None), ("--db", catalogs)]
    commands = {
        "snap": snap,
        "list": [("--limit", numbers), ("--run", numbers), ("--db", catalogs), ("--csv", None)],
        "show": [("--db", catalogs), ("--capture", numbers), ("--full", None)],
        "verify": [("--repair", None), ("--jobs", numbers), ("--db", catalogs), ("--run", numbers)],
        "delete": [("--run", numbers), ("--save", numbers), ("--capture", numbers), ("--db", catalogs), ("--force", None)],
        "stats": [("--run", numbers), ("--db", catalogs), ("--plot", [f"{work}/p.svg", f"{work}/p.png", f"{work}/p.txt",
                                                                       "/proc/p.svg", ""])],
        "devices": [], "formats": [("-d", devices)], "controls": [("-d", devices)], "check": [("-d", devices)],
    }
    global_options = [("--json", None), ("--quiet", None), ("--no-progress", None), ("--color", ["auto", "always", "never", "x"])]
    environment = dict(os.environ, HOME=work, XDG_DATA_HOME=f"{work}/data", SWIFT_BACKTRACE="enable=no")

    problems = 0
    seen = {}
    for _ in range(args.runs):
        command = rng.choice(["snap"] * 6 + [name for name in commands if name != "snap"])
        arguments = [command]
        for _ in range(rng.randint(0, 5)):
            name, values = rng.choice(commands[command] + global_options)
            # An option with a value given twice is a usage error (--set may be repeated): mostly
            # not, so that most runs still get past parsing.
            if values is not None and name in arguments and name != "--set" and rng.random() < 0.9:
                continue
            arguments.append(name)
            if values is not None:
                arguments.append(rng.choice(valid[name]) if name in valid and rng.random() < 0.85 else rng.choice(values))
        if command == "snap":
            for name, default in [("-d", "pattern"), ("-r", "64x48"), ("-o", f"{work}/out/{{seq}}.jpg")]:
                if name not in arguments:
                    arguments += [name, default]
            if "--fill" in arguments and "-n" not in arguments:
                arguments += ["-n", "5"]  # an upper bound: a fill of this machine's disk is not the point
        if "--db" not in arguments and command not in ("devices", "formats", "controls", "check"):
            arguments += ["--db", f"{work}/c.db"]
        if command == "show" and rng.random() < 0.7:
            arguments.insert(1, rng.choice(["1", "2", "0", "-1", "x", "99999999999999999999", "", "last"]))
        if command == "verify" and rng.random() < 0.3:
            arguments.append(rng.choice([f"{work}/out/1.jpg", f"{work}/out", "/nonexistent", ""]))
        try:
            # In the work directory: relative outputs ('-/x.jpg') land there.
            done = subprocess.run([camroll] + arguments, capture_output=True, timeout=60, env=environment,
                                  stdin=subprocess.DEVNULL, cwd=work)
        except subprocess.TimeoutExpired:
            problems += 1
            print(f"hang (60 s): camroll {' '.join(arguments)}")
            continue
        status, stderr = done.returncode, done.stderr.decode(errors="replace")
        errors = [line for line in stderr.splitlines() if line.startswith("camroll: ") and "error:" in line[:30]]
        problem = None
        if status < 0 or (status >= 128 and status not in (130, 143)):
            problem = f"killed by a signal or a trap (status {status})"
        elif "Fatal error" in stderr or "runtime failure" in stderr:
            problem = "a Swift runtime failure"
        # verify's 1 is a verdict, its findings on stdout: a file another catalog's run
        # overwrote (--overwrite) is one, "aliased".
        elif status != 0 and not errors and "--json" not in arguments and "--quiet" not in arguments \
                and not (command == "verify" and status == 1):
            problem = f"status {status} without an error line"
        elif status == 0 and errors:
            problem = "an error line with status 0"
        elif len(errors) > 1 and "verify" not in arguments:  # verify names each path it does not know
            problem = f"{len(errors)} error lines"
        if problem:
            problems += 1
            print(f"{problem}: camroll {' '.join(arguments)}\n    " + stderr.strip()[:600].replace("\n", "\n    "))
        seen.setdefault(status, {}).setdefault(errors[0][:70] if errors else "", " ".join(arguments))

    print("exit statuses seen, with a sample of their messages:")
    for status in sorted(seen):
        print(f"  {status}: {len(seen[status])} different message(s)")
        for message, example in list(seen[status].items())[:15]:
            print(f"      {message or '(no error line)'}")
    print(f"sweep: {problems} problem(s) in {args.runs} runs (seed {args.seed})")
    shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
