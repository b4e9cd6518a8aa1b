#!/usr/bin/env python3
"""pick's window, measured in one Xvfb run (make bench-window): what the preview costs, how soon
the first frame is on screen beside ffplay showing a source of the same size, and whether memory
stays flat over a long preview. Figures, not a test: nothing here fails on a slow machine.

- preview rate and CPU: the 1280x720 pattern for SECONDS, in YUYV and in MJPEG (`-f mjpeg`: a
  loop of frames encoded once, as a camera sends them); frames shown counted by the pattern's
  own frame numbers (the shutter's `trace: shutter: frame N` at the start and the end), CPU
  from /proc/PID/stat over the same stretch;
- launch to first frame: from the exec to the first screenshot of the screen holding the
  picture (mean saturation over a threshold: the colour bars), camroll against `ffplay -f lavfi
  testsrc2` (1280x720), alternating, medians;
- RSS after one minute of preview and after MINUTES.

Usage: window.py CAMROLL [--seconds S] [--rounds N] [--minutes M]"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TICKS = os.sysconf("SC_CLK_TCK")


DISPLAYS = iter(range(150 + os.getpid() % 50 * 20, 10 ** 6))


def start_display():
    number = next(DISPLAYS)
    server = subprocess.Popen(["Xvfb", f":{number}", "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    env = dict(os.environ, DISPLAY=f":{number}", GSK_RENDERER="cairo", NO_AT_BRIDGE="1")
    env.pop("WAYLAND_DISPLAY", None)
    for _ in range(100):
        if subprocess.run(["xdpyinfo"], env=env, capture_output=True).returncode == 0:
            return server, env
        time.sleep(0.1)
    sys.exit("bench-window: Xvfb did not start")


def window_of(pid, env, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        found = subprocess.run(["xdotool", "search", "--onlyvisible", "--pid", str(pid)], env=env,
                               capture_output=True, text=True).stdout.split()
        if found:
            return found[0]
        time.sleep(0.05)
    return None


def saturation(env):
    """Mean saturation of the whole screen (0 for the empty grey of Xvfb and a dark window)."""
    screen = subprocess.run(["import", "-window", "root", "-resize", "25%", "miff:-"], env=env, capture_output=True).stdout
    shot = subprocess.run(["convert", "miff:-", "-colorspace", "HSL", "-channel", "G", "-separate", "-format", "%[fx:mean]", "info:"],
                          input=screen, capture_output=True)
    try:
        return float(shot.stdout.decode())
    except ValueError:
        return 0.0


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def rss_megabytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Picker:
    def __init__(self, camroll, env, work, extra=()):
        self.directory = tempfile.mkdtemp(dir=work)
        self.stderr = os.path.join(self.directory, "stderr")
        self.process = subprocess.Popen(
            [camroll, "pick", "--window", "-d", "pattern", "-r", "1280x720", "-o", os.path.join(self.directory, "x.jpg"),
             "--db", os.path.join(self.directory, "c.sqlite3")] + list(extra),
            env=dict(env, CAMROLL_TRACE="1"), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(self.stderr, "w"))
        self.env = env
        self.window = window_of(self.process.pid, env)
        subprocess.run(["xdotool", "windowfocus", "--sync", self.window], env=env)

    def key(self, key):
        subprocess.run(["xdotool", "key", "--window", self.window, key], env=self.env, stderr=subprocess.DEVNULL)
        # Released to the server too: a key whose release missed a window that closed on its press
        # stays down, repeating into the next window (Tests/window/window.py says more).
        subprocess.run(["xdotool", "keyup", key], env=self.env, stderr=subprocess.DEVNULL)

    def shots(self):
        with open(self.stderr) as f:
            return [int(n) for n in re.findall(r"shutter: frame (\d+)", f.read())]

    def stop(self):
        self.process.terminate()
        self.process.wait()


def preview_rate(camroll, env, work, seconds, extra=()):
    picker = Picker(camroll, env, work, extra)
    time.sleep(2)
    picker.key("space")
    time.sleep(0.3)
    picker.key("r")
    started, cpu = time.monotonic(), cpu_seconds(picker.process.pid)
    time.sleep(seconds)
    picker.key("space")
    elapsed, used = time.monotonic() - started, cpu_seconds(picker.process.pid) - cpu
    time.sleep(0.3)
    picker.key("Escape")
    picker.process.wait()
    shots = picker.shots()
    # The second shot's frame number less the first's: the frames shown in between (the pattern
    # makes a frame for each one shown, none while the first shot was held for review).
    frames = shots[1] - shots[0] if len(shots) == 2 else 0
    return frames / elapsed, 100 * used / elapsed


def first_frame(command):
    """Seconds from the exec to the first screen showing the colour bars (an empty Xvfb screen is
    black: saturation 0; the pattern in camroll's window makes the whole screen's ~0.2). Each
    launch on a display of its own, started beforehand: nothing of an earlier window (its keys,
    its focus) reaches this one."""
    server, env = start_display()
    started = time.monotonic()
    errors = tempfile.TemporaryFile()
    process = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors)
    try:
        while time.monotonic() - started < 30:
            if saturation(env) > 0.08:
                return time.monotonic() - started
        errors.seek(0)
        print(f"{os.path.basename(command[0])} showed nothing in 30 s (exit {process.poll()}): {errors.read().decode(errors='replace')[-400:]}")
        return float("nan")
    finally:
        process.terminate()
        process.wait()
        server.terminate()
        server.wait()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("camroll")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--minutes", type=float, default=10)
    arguments = parser.parse_args()
    camroll = os.path.abspath(arguments.camroll)
    work = tempfile.mkdtemp(prefix="camroll-bench-window-")
    server, env = start_display()
    try:
        # YUYV (subsampled into the window's size), then MJPEG as a camera sends it (the pattern's
        # loop of frames encoded once: turbojpeg's DCT scaling into the window's size).
        for name, extra in [("YUYV", []), ("MJPEG", ["-f", "mjpeg"])]:
            # Each on a display of its own: nothing of the earlier window (a key, its focus) reaches it.
            preview_server, preview_env = start_display()
            try:
                rate, cpu = preview_rate(camroll, preview_env, work, arguments.seconds, extra)
            finally:
                preview_server.terminate()
                preview_server.wait()
            print(f"preview, 1280x720 {name} pattern in a 960x640 window: {rate:.1f} fps shown, {cpu:.1f}% of one CPU "
                  f"(over {arguments.seconds:.0f} s)", flush=True)

        ffplay = shutil.which("ffplay")
        camroll_times, ffplay_times = [], []
        for _ in range(arguments.rounds):
            db = os.path.join(work, "first.sqlite3")
            camroll_times.append(first_frame([camroll, "pick", "--window", "-d", "pattern", "-r", "1280x720", "--db", db,
                                              "-o", os.path.join(work, "first.jpg")]))
            if ffplay:
                ffplay_times.append(first_frame([ffplay, "-hide_banner", "-loglevel", "quiet", "-f", "lavfi",
                                                 "-i", "testsrc2=size=1280x720:rate=30"]))
        missed = sum(1 for t in camroll_times + ffplay_times if t != t)
        camroll_times = [t for t in camroll_times if t == t]
        ffplay_times = [t for t in ffplay_times if t == t]
        if not camroll_times:
            sys.exit("bench-window: camroll's window never showed its picture")
        line = f"launch to first frame on screen: camroll {1000 * statistics.median(camroll_times):.0f} ms"
        if ffplay_times:
            ratio = statistics.median(camroll_times) / statistics.median(ffplay_times)
            line += f", ffplay -f lavfi testsrc2 {1000 * statistics.median(ffplay_times):.0f} ms (camroll/ffplay {ratio:.2f})"
        print(line + f", medians of {arguments.rounds} alternating" + (f" ({missed} runs showed nothing in 30 s)" if missed else ""),
              flush=True)

        if arguments.minutes > 0:
            picker = Picker(camroll, env, work)
            time.sleep(60)
            after_one = rss_megabytes(picker.process.pid)
            time.sleep(max(0, arguments.minutes * 60 - 60))
            after_all = rss_megabytes(picker.process.pid)
            picker.stop()
            print(f"RSS of the preview: {after_one:.1f} MB after 1 minute, {after_all:.1f} MB after {arguments.minutes:g} "
                  f"({after_all / after_one:.3f}x)", flush=True)
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
