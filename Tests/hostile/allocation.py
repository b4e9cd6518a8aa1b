#!/usr/bin/env python3
"""Picture bombs under a limit on address space: never a trap, and the peak RSS of each case.

    allocation.py BINARY [--limits 300,600,1200,0]

Files: a 292 kB PNG of 20000x4999 (under the default 100-megapixel limit), PNGs whose headers
claim 65535x65535 and 60000x60000 (16 rows of data), a real 20000x4999 JPEG (that PNG saved),
saved as it is, re-encoded (-q 50) and resized (-r 640x480), and JPEGs of 16x8 whose frame headers claim 20000x4999 and 60000x60000; each saved with `snap -d file:…` as it is and with
`--max-pixels 100000000000`, under each limit in MB (`ulimit -v`; 0: none). Every run must exit 0
(saved) or 65 with a one-line `camroll: error:` (never 134, a trap, nor a death by a signal), and
nothing may be left under the output's name when it did not exit 0. Prints a row a case: exit,
peak RSS (the kernel's ru_maxrss), time, and the first line of stderr.
"""
import argparse
import os
import resource
import struct
import subprocess
import sys
import tempfile
import time
import zlib

parser = argparse.ArgumentParser()
parser.add_argument("binary")
parser.add_argument("--limits", default="300,600,1200,0")
args = parser.parse_args()
BINARY = os.path.abspath(args.binary)


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(path, width, height, rows=None):
    compressor = zlib.compressobj(9)
    row = b"\0" * (1 + 3 * width)
    data = b"".join(compressor.compress(row) for _ in range(height if rows is None else rows))
    data += compressor.flush() if rows is None else compressor.flush(zlib.Z_SYNC_FLUSH)
    with open(path, "wb") as file:
        file.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
                   + chunk(b"IDAT", data) + (chunk(b"IEND", b"") if rows is None else b""))


def jpeg(path, width, height, work):
    """A 16x8 JPEG camroll made, its frame header claiming width x height."""
    small = os.path.join(work, "small.jpg")
    if not os.path.exists(small):
        subprocess.run([BINARY, "-d", "pattern", "-r", "16x8", "-o", small, "--db", os.path.join(work, "setup.db"), "--quiet"], check=True)
    data = bytearray(open(small, "rb").read())
    sof = data.index(b"\xff\xc0")
    data[sof + 5:sof + 9] = struct.pack(">HH", height, width)
    with open(path, "wb") as file:
        file.write(data)


def real_jpeg(path, work):
    """A real 20000x4999 JPEG: the 20000x4999 PNG saved by camroll, without a limit."""
    source = os.path.join(work, "wide.png")
    if not os.path.exists(source):
        png(source, 20000, 4999)
    subprocess.run([BINARY, "-d", "file:" + source, "-o", path, "--db", os.path.join(work, "setup.db"), "--quiet"], check=True)


def run(arguments, limit_mb):
    def limit():
        if limit_mb:
            resource.setrlimit(resource.RLIMIT_AS, (limit_mb * 1_000_000, limit_mb * 1_000_000))
    start = time.monotonic()
    process = subprocess.Popen([BINARY] + arguments, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=limit)
    stderr = process.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = status
    seconds = time.monotonic() - start
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status), usage.ru_maxrss, seconds, stderr
    return os.WEXITSTATUS(status), usage.ru_maxrss, seconds, stderr


def main():
    limits = [int(value) for value in args.limits.split(",")]
    failures = []
    with tempfile.TemporaryDirectory(prefix="camroll-alloc-") as work:
        files = {
            "png 20000x4999": ("wide.png", lambda p: png(p, 20000, 4999)),
            "png 65535x65535 (header)": ("65535.png", lambda p: png(p, 65535, 65535, rows=16)),
            "png 60000x60000 (header)": ("60000.png", lambda p: png(p, 60000, 60000, rows=16)),
            "jpeg 20000x4999": ("wide.jpg", lambda p: real_jpeg(p, work)),
            "jpeg 20000x4999 -q 50": ("wide.jpg", None),
            "jpeg 20000x4999 -r 640x480": ("wide.jpg", None),
            "jpeg 20000x4999 (header)": ("wide-header.jpg", lambda p: jpeg(p, 20000, 4999, work)),
            "jpeg 60000x60000 (header)": ("60000.jpg", lambda p: jpeg(p, 60000, 60000, work)),
        }
        print(f"{'file':28} {'--max-pixels':>14} {'limit':>7} {'exit':>5} {'peak RSS':>10} {'time':>7}  first stderr line")
        for label, (name, make) in files.items():
            path = os.path.join(work, name)
            if make:
                make(path)
            for pixels in (None, "100000000000"):
                for limit in limits:
                    output = os.path.join(work, "out.jpg")
                    if os.path.exists(output):
                        os.unlink(output)
                    arguments = ["-d", "file:" + path, "-o", output, "--db", os.path.join(work, "c.db"), "--no-progress"]
                    if pixels:
                        arguments += ["--max-pixels", pixels]
                    if label.endswith("-q 50"):
                        arguments += ["-q", "50"]  # decoded whole and encoded again
                    if label.endswith("-r 640x480"):
                        # decoded whole, or at a DCT scale where memory cannot hold that
                        arguments += ["-r", "640x480"]
                    code, peak_kb, seconds, stderr = run(arguments, limit)
                    first = stderr.split("\n")[0]
                    print(f"{label:28} {pixels or 'default':>14} {str(limit) + ' MB' if limit else 'none':>7} {code:>5} "
                          f"{peak_kb / 1024:>7.0f} MB {seconds:>6.2f}s  {first[:110]}")
                    case = f"{label}, --max-pixels {pixels or 'default'}, limit {limit or 'none'}"
                    if code not in (0, 65):
                        failures.append(f"{case}: exit {code}: {stderr.strip()[:300]}")
                    elif code == 65 and not first.startswith("camroll: error: "):
                        failures.append(f"{case}: exit 65 without a one-line error: {stderr.strip()[:300]!r}")
                    if code != 0 and os.path.exists(output):
                        failures.append(f"{case}: exit {code} and a file at the output's name")
    for failure in failures:
        print("FAIL", failure)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
