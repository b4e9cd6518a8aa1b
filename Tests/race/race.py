#!/usr/bin/env python3
"""Runs camroll's threaded work under ThreadSanitizer and fails on any race it reports.

The binary is built with `swift build --sanitize=thread` (the race target of the Makefile does
it). What runs here is what has more than one thread: parallel writers (`--jobs`) with the
catalog's thread and the progress line, the signal thread's first and second Ctrl-C and SIGTERM
arriving while they write, a fill and an overrun of a small tmpfs (root: it mounts), `verify
--jobs` and `--repair`, a URL's download beside the writers, `pick`'s preview in a real terminal
(tmux) with a key, a resize and Ctrl-C, and then rounds of the interruption test and the sweep
with this binary. Each step's exit status is checked too, so that a step that stopped doing what
it is here for does not pass quietly.

    Tests/race/race.py BINARY [--interruptions N] [--sweep N]

Exit status 0 only when every step ended as expected and ThreadSanitizer wrote no report.
"""
import argparse
import glob
import http.server
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


class Steps:
    def __init__(self, camroll, work):
        self.camroll = camroll
        self.work = work
        self.failures = []

    def run(self, name, arguments, expect=0, terminal=False):
        """Runs camroll with `arguments` (in a pseudo-terminal through script(1) when
        `terminal`), and records a failure unless it exits with `expect`."""
        command = [self.camroll, *arguments]
        if terminal:
            command = ["script", "-qec", shlex.join(command), "/dev/null"]
        done = subprocess.run(command, cwd=self.work, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=600)
        self.check(name, done.returncode, expect, done.stderr)

    def interrupt(self, name, arguments, signals, expect):
        """Starts camroll, sends `signals` once it is writing, and expects `expect`."""
        process = subprocess.Popen([self.camroll, *arguments], cwd=self.work,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(3)  # under ThreadSanitizer start-up takes a second or more
        for number in signals:
            process.send_signal(number)
            # Two of one signal sent at once arrive as one; after a few milliseconds the first
            # has been taken and the run is still ending its saves.
            time.sleep(0.003)
        _, stderr = process.communicate(timeout=120)
        self.check(name, process.returncode, expect, stderr)

    def check(self, name, status, expect, stderr):
        expected = expect if isinstance(expect, tuple) else (expect,)
        if status in expected:
            print(f"race: {name}: exit {status}")
        else:
            last = stderr.decode(errors="replace").strip().splitlines()[-1:] if stderr else []
            self.failures.append(f"{name}: exit {status}, expected {expect} {last}")
            print(f"race: FAIL {name}: exit {status}, expected {expect} {last}")


def serve(directory):
    """A local HTTP server over `directory`, on a free port: the port."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *arguments, **keywords):
            super().__init__(*arguments, directory=directory, **keywords)

        def log_message(self, *arguments):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def pick_in_tmux(steps, tsan_options):
    """pick in a real terminal: a key, a resize, then Ctrl-C (130) — and once more, kept (0)."""
    if not shutil.which("tmux"):
        steps.failures.append("pick: tmux is not installed")
        return
    for name, keys, expect in [("pick, resized, Ctrl-C", ["C-c"], "130"), ("pick, kept", ["Enter"], "0")]:
        status_file = os.path.join(steps.work, "pick-status")
        if os.path.exists(status_file):
            os.remove(status_file)
        session = f"camroll-race-{os.getpid()}"
        inner = (f"TSAN_OPTIONS='{tsan_options}' '{steps.camroll}' pick -d pattern -r 640x480 "
                 f"-o picked.jpg --overwrite --db c.db; echo $? > pick-status")
        subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "120", "-y", "40", "-c", steps.work, inner],
                       check=True)
        time.sleep(4)
        subprocess.run(["tmux", "send-keys", "-t", session, " "])
        time.sleep(1)
        subprocess.run(["tmux", "resize-window", "-t", session, "-x", "80", "-y", "24"])
        time.sleep(1)
        subprocess.run(["tmux", "send-keys", "-t", session, *keys])
        deadline = time.monotonic() + 30
        while not os.path.exists(status_file) and time.monotonic() < deadline:
            time.sleep(0.2)
        subprocess.run(["tmux", "kill-session", "-t", session], stderr=subprocess.DEVNULL)
        status = open(status_file).read().strip() if os.path.exists(status_file) else "none"
        steps.check(name, status, expect, b"")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--interruptions", type=int, default=40)
    parser.add_argument("--sweep", type=int, default=150)
    args = parser.parse_args()
    camroll = os.path.abspath(args.binary)
    work = tempfile.mkdtemp(prefix="camroll-race-")
    reports = os.path.join(work, "reports")
    os.mkdir(reports)
    # exitcode=0: camroll's own exit statuses are checked; the reports are counted from their files.
    tsan_options = f"log_path={reports}/report halt_on_error=0 exitcode=0"
    os.environ["TSAN_OPTIONS"] = tsan_options
    os.environ["SWIFT_BACKTRACE"] = "enable=no"
    steps = Steps(camroll, work)
    begin = time.monotonic()

    steps.run("--jobs 4", ["snap", "-d", "pattern", "-r", "320x240", "-n", "400", "--jobs", "4", "--stamp",
                           "-o", "jobs/{seq}.jpg", "--db", "c.db", "--quiet"])
    # Frames of 32 rows of blocks or more are compressed in bands, a thread a CPU (yuv_jpeg.c).
    steps.run("frames compressed in bands", ["snap", "-d", "pattern", "-r", "1920x1080", "--frames", "4", "-n", "2",
                                             "--jobs", "2", "-o", "bands/{seq}.jpg", "--db", "c.db", "--quiet"])
    steps.run("progress on a terminal, --jobs 2", ["snap", "-d", "pattern", "-r", "320x240", "-n", "2000", "--jobs", "2",
                                                   "-o", "tty/{seq}.jpg", "--db", "c.db"], terminal=True)
    for name, signals, expect in [("SIGINT", [signal.SIGINT], 130), ("SIGTERM", [signal.SIGTERM], 143),
                                  ("two SIGINTs", [signal.SIGINT, signal.SIGINT], 130),
                                  ("two SIGINTs again", [signal.SIGINT, signal.SIGINT], 130)]:
        steps.interrupt(f"{name} during --jobs 4", ["snap", "-d", "pattern", "-r", "640x480", "-n", "100000", "--jobs", "4",
                                                    "--stamp", "-o", f"cut-{name.replace(' ', '-')}/{{seq}}.jpg",
                                                    "--db", "c.db", "--quiet"], signals, expect)
    steps.run("verify --repair --jobs 3", ["verify", "--repair", "--jobs", "3", "--db", "c.db", "--quiet"])
    steps.run("verify --jobs 4", ["verify", "--jobs", "4", "--db", "c.db", "--quiet"])

    if os.geteuid() == 0:
        card = os.path.join(work, "card")
        os.mkdir(card)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", card], check=True)
        try:
            steps.run("--fill --jobs 4", ["snap", "-d", "pattern", "-r", "320x240", "--fill", "-n", "20000", "--jobs", "4",
                                          "-o", "card/fill/{seq}.jpg", "--db", "c.db", "--quiet"])
            steps.run("delete the fill", ["delete", "--run", "last", "--db", "c.db", "--quiet"])
            # Its catalog on the card: the room kept for the catalog, given back at the end.
            steps.run("an overrun beside its catalog, --jobs 4",
                      ["snap", "-d", "pattern", "-r", "320x240", "-n", "20000", "--jobs", "4",
                       "-o", "card/run/{seq}.jpg", "--db", "card/c.db", "--quiet"], expect=74)
            steps.run("verify --repair on the full card", ["verify", "--repair", "--db", "card/c.db", "--quiet"])
        finally:
            subprocess.run(["umount", card])
    else:
        print("race: the fill and the overrun on a tmpfs need root: not run")

    server = serve(os.path.join(work, "jobs"))
    url = f"http://127.0.0.1:{server.server_address[1]}/001.jpg"
    steps.run("a URL, --jobs 2, on a terminal", ["snap", "-d", url, "-n", "50", "--jobs", "2", "-o", "url/{seq}.jpg",
                                                 "--db", "c.db"], terminal=True)
    server.shutdown()

    pick_in_tmux(steps, tsan_options)

    for name, command in [
        ("interruptions", [sys.executable, os.path.join(HERE, "..", "interrupt", "interrupt.py"),
                           "--rounds", str(args.interruptions), "--binary", camroll]),
        ("sweep", [sys.executable, os.path.join(HERE, "..", "sweep", "sweep.py"), camroll, "--runs", str(args.sweep)]),
    ]:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        verdicts = [line for line in done.stdout.splitlines() if " passed, " in line or " problem(s) in " in line]
        print("\n".join(f"race: {line}" for line in verdicts[-1:]))
        steps.check(name, done.returncode, 0, b"")

    found = sorted(glob.glob(f"{reports}/report*"))
    summaries = []
    for path in found:
        summaries += [line.strip() for line in open(path, errors="replace") if line.startswith("SUMMARY")]
    for line in sorted(set(summaries)):
        print(f"race: {line}")
    print(f"race: {len(summaries)} ThreadSanitizer report(s) in {len(found)} process(es), "
          f"{len(steps.failures)} step(s) failed, {time.monotonic() - begin:.0f} s")
    if found:
        print(f"race: the reports are in {reports}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if found or steps.failures else 0


if __name__ == "__main__":
    sys.exit(main())
