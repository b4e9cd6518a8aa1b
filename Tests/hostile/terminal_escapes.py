#!/usr/bin/env python3
"""Text that would drive a terminal, given to every command that prints: none of it reaches the
terminal raw.

    terminal_escapes.py BINARY

A directory, a photo's EXIF Make and Model, a URL and arguments echoed in errors hold ESC[2J
(clear the screen), an OSC 52 clipboard write, BEL, the C1 CSI (U+009B) and U+202E (right-to-left
override). snap, list, list --csv, list --run, show, stats, verify (with a missing file, so that
a problem line names it), devices, delete and a dozen errors run on a pty; the bytes they write
must hold no control character but the line ends (and camroll's own "\\r ESC[2K" of a live
progress line, which is taken out first) and no C1 or bidi override. JSON stays exact: list
--json gives the path back as it is. Exit status 0 when all hold; each failure is printed.
"""
import json
import os
import pty
import re
import select
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

BINARY = os.path.abspath(sys.argv[1])
HOSTILE = "\x1b[2J\x1b]52;c;b3duZWQ=\x07\x07\u009b\u202e"
FORBIDDEN = [("ESC", b"\x1b"), ("BEL", b"\x07"), ("C1 CSI", b"\xc2\x9b"), ("raw 0x9b", b"\x9b"),
             ("U+202E", b"\xe2\x80\xae"), ("U+2066", b"\xe2\x81\xa6"), ("DEL", b"\x7f")]
failures = []


def on_pty(arguments, env):
    """Runs BINARY with `arguments`, stdout and stderr on one pty; (status, bytes written)."""
    master, slave = pty.openpty()
    process = subprocess.Popen([BINARY] + arguments, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave,
                               env=env, close_fds=True)
    os.close(slave)
    output = b""
    deadline = time.time() + 60
    while time.time() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            output += chunk
        elif process.poll() is not None:
            # Whatever is still buffered in the pty.
            ready, _, _ = select.select([master], [], [], 0.1)
            if not ready:
                break
    process.wait(timeout=30)
    os.close(master)
    return process.returncode, output


def check(name, arguments, env, expect_status=None):
    status, output = on_pty(arguments, env)
    shown = output.replace(b"\r\x1b[2K", b"")
    found = [label for label, raw in FORBIDDEN if raw in shown]
    controls = sorted({byte for byte in shown if byte < 0x20 and byte not in (0x0A, 0x0D)})
    if found or controls:
        failures.append(f"{name}: {', '.join(found)} {controls} raw in {output[:300]!r}")
    if expect_status is not None and status != expect_status:
        failures.append(f"{name}: exit {status}, expected {expect_status}: {output[:300]!r}")
    if status < 0 or status == 134:
        failures.append(f"{name}: killed or trapped ({status})")
    print(f"{'FAIL' if found or controls else 'ok  '} {status:3} {name}")
    return status, output


def main():
    top = tempfile.mkdtemp(prefix="camroll-escapes-")
    try:
        directory = os.path.join(top, "d" + HOSTILE)
        os.mkdir(directory)
        db = os.path.join(top, "c.db")
        out = os.path.join(top, "out")
        env = dict(os.environ, NO_COLOR="1", TERM="xterm-256color")
        env.pop("CAMROLL_TRACE", None)
        # A photo whose EXIF Make and Model hold the same text.
        photo = os.path.join(top, "p.jpg")
        subprocess.run([BINARY, "-d", "pattern", "-r", "64x48", "-o", photo, "--db", os.path.join(top, "setup.db"),
                        "--no-progress", "--quiet"], check=True)
        if shutil.which("exiftool"):
            subprocess.run(["exiftool", "-q", "-overwrite_original", "-Make=Make" + HOSTILE, "-Model=Model" + HOSTILE,
                            photo], check=True)
        hostile_photo = os.path.join(directory, "photo" + HOSTILE + ".jpg")
        shutil.copy(photo, hostile_photo)

        # A URL holding the same text, served (by its raw name and as curl may encode it).
        www = os.path.join(top, "www")
        os.mkdir(www)
        name = "u\u009b\u202e.jpg"
        shutil.copy(photo, os.path.join(www, name))
        from urllib.parse import quote
        shutil.copy(photo, os.path.join(www, re.sub("%[0-9A-F]{2}", lambda m: m.group(0).lower(), quote(name))))
        server = subprocess.Popen([sys.executable, os.path.join(os.path.dirname(__file__), "..", "http", "server.py"), www,
                                   os.path.join(top, "http.log")], stdout=subprocess.PIPE, text=True)
        port = int(server.stdout.readline())
        try:
            # (An output template may not hold control characters: refused, 64.)
            check("snap file:", ["snap", "-d", "file:" + hostile_photo, "-n", "2", "-o", out + "/{seq}.jpg", "--db", db], env, 0)
            check("snap URL", ["snap", "-d", f"http://127.0.0.1:{port}/{name}", "-o", out + "/u{seq}.jpg", "--db", db], env, 0)
            check("snap URL with escapes", ["snap", "-d", f"http://127.0.0.1:{port}/x{HOSTILE}.jpg", "-o", out + "/v.jpg",
                                            "--db", db], env)
        finally:
            # SIGKILL: a SIGTERM may be blocked in what started this script (a test runner).
            server.kill()
            server.wait()
        # Catalog values from outside: run 1's saves moved under the hostile directory (the
        # first one gone, so verify names it), its run's error and command holding the text.
        shutil.copy(os.path.join(out, "2.jpg"), os.path.join(directory, "2.jpg"))
        with sqlite3.connect(db) as catalog:
            for seq in (1, 2):
                catalog.execute("UPDATE saves SET path = ? WHERE seq = ? AND capture_id IN (SELECT id FROM captures WHERE run_id = 1)",
                                (os.path.join(directory, f"{seq}.jpg"), seq))
            catalog.execute("UPDATE runs SET error = ?, command = command || ? WHERE id = 1", ("error" + HOSTILE, HOSTILE))
        for label, arguments in [
            ("list", ["list"]), ("list --csv", ["list", "--csv"]), ("list --run 1", ["list", "--run", "1"]),
            ("list --run 1 --csv", ["list", "--run", "1", "--csv"]), ("show 1", ["show", "1", "--preview-mode", "none"]),
            ("show 2", ["show", "2", "--preview-mode", "none"]), ("stats", ["stats"]), ("stats --run 1", ["stats", "--run", "1"]),
            ("verify", ["verify"]), ("verify path", ["verify", os.path.join(directory, "2.jpg"), directory + "/none"]),
            ("list --all --utc --bytes", ["list", "--all", "--utc", "--bytes"]), ("stats --plot", ["stats", "--run", "1", "--plot", os.path.join(directory, "plot.svg")]),
            ("delete --run 1 --dry-run", ["delete", "--run", "1", "--dry-run"]),
            ("delete --run 2", ["delete", "--run", "2"]),
        ]:
            check(label, arguments + ["--db", db], env)
        check("devices", ["devices"], env)
        # Arguments echoed in errors.
        for label, arguments, status in [
            ("missing file:", ["-d", "file:" + directory + "/missing" + HOSTILE], 66),
            ("-d /dev/video", ["-d", "/dev/video" + HOSTILE], None),
            ("-d URL", ["-d", "http://" + HOSTILE + "/a.jpg"], None),
            ("-d scheme", ["-d", "ftp" + HOSTILE + "://host/a.jpg"], None),
            ("--db", ["-d", "pattern", "-o", out + "/db.jpg", "--db", photo + "/" + HOSTILE + "/c.db"], None),
            ("unknown option", ["--x" + HOSTILE], 64),
            ("unknown command", ["x" + HOSTILE], 64),
            ("help of an unknown command", ["help", "x" + HOSTILE], 64),
            ("formats -d", ["formats", "-d", "/dev/video" + HOSTILE], None),
            ("controls -d", ["controls", "-d", "/dev/video" + HOSTILE], None),
            ("--user-from", ["-d", "http://127.0.0.1:9/a.jpg", "--user-from", "/tmp/" + HOSTILE, "--db", db], 66),
            ("-r", ["-r", HOSTILE], 64),
            ("-o template", ["-o", "/tmp/" + HOSTILE + "{seq}.jpg"], 64),
            ("show id", ["show", HOSTILE, "--db", db], 64),
            ("list --run", ["list", "--run", HOSTILE, "--db", db], 64),
            ("verify path not in the catalog", ["verify", "/tmp/" + HOSTILE, "--db", db], None),
        ]:
            check("error: " + label, arguments, env, status)
        # JSON is exact: the path as it is.
        out = subprocess.run([BINARY, "list", "--run", "1", "--json", "--db", db], capture_output=True, env=env).stdout
        paths = sorted(row["path"] for row in json.loads(out))
        if paths != sorted(os.path.join(directory, f"{n}.jpg") for n in (1, 2)):
            failures.append(f"list --json: paths {paths!r}")
        else:
            print("ok       list --json gives the paths exactly")
    finally:
        shutil.rmtree(top, ignore_errors=True)
    for failure in failures:
        print("FAIL", failure)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
