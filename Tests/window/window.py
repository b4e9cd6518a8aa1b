#!/usr/bin/env python3
"""pick's window, driven as a user drives it: a real GTK 4 window on a real X server (Xvfb),
keys typed with xdotool, the screen read back with ImageMagick's import, the window closed as a
window manager closes it; then stdout, the exit status, the files and the catalog's rows checked.
Also once on Wayland (weston's headless backend), and once with GTK hidden (a mount namespace
in which libgtk-4.so.1 is an empty file).

Usage: window.py CAMROLL [--only NAME]"""

import argparse
import glob
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = []


def case(function):
    CASES.append(function)
    return function


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


class Display:
    """An Xvfb server of its own, and the helper that closes windows politely."""

    def __init__(self, work):
        self.number = 90 + os.getpid() % 100
        while os.path.exists(f"/tmp/.X11-unix/X{self.number}") or os.path.exists(f"/tmp/.X{self.number}-lock"):
            self.number += 1
        self.server = subprocess.Popen(
            ["Xvfb", f":{self.number}", "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.env = dict(os.environ, DISPLAY=f":{self.number}", GSK_RENDERER="cairo", NO_AT_BRIDGE="1")
        self.env.pop("WAYLAND_DISPLAY", None)
        for _ in range(100):
            if subprocess.run(["xdpyinfo"], env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
                break
            time.sleep(0.1)
        else:
            raise Failure("Xvfb did not start")
        self.closer = os.path.join(work, "close_window")
        subprocess.run(["gcc", "-O1", "-o", self.closer, os.path.join(HERE, "close_window.c"), "-lX11"], check=True)

    def stop(self):
        self.server.terminate()
        self.server.wait()


class Pick:
    """One `camroll pick --window` in a directory of its own."""

    def __init__(self, test, arguments, env=None, stdout_file=None):
        self.test = test
        self.directory = tempfile.mkdtemp(prefix="pick-", dir=test.work)
        self.database = os.path.join(self.directory, "c.sqlite3")
        self.stdout_path = stdout_file or os.path.join(self.directory, "stdout")
        self.stderr_path = os.path.join(self.directory, "stderr")
        # The defaults a test does not give itself (an option given twice is a usage error).
        source = [] if "-d" in arguments else ["-d", "pattern"]
        source += [] if "-r" in arguments else ["-r", "640x480"]
        command = [test.camroll, "pick", "--window"] + source + ["--db", self.database] + arguments
        if "-o" not in arguments:
            command += ["-o", os.path.join(self.directory, "out", "{seq}.jpg")]
        environment = dict(env or test.display.env, CAMROLL_TRACE="1")
        self.process = subprocess.Popen(
            command, env=environment, stdin=subprocess.DEVNULL,
            stdout=open(self.stdout_path, "wb"), stderr=open(self.stderr_path, "wb"))
        test.pickers.append(self)
        self.window = None

    def find_window(self, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline:
            found = subprocess.run(["xdotool", "search", "--onlyvisible", "--pid", str(self.process.pid)],
                                   env=self.test.display.env, capture_output=True, text=True).stdout.split()
            if found:
                self.window = found[0]
                subprocess.run(["xdotool", "windowfocus", "--sync", self.window], env=self.test.display.env, timeout=10)
                # The first frames drawn.
                time.sleep(1.0)
                return self.window
            if self.process.poll() is not None:
                raise Failure(f"camroll exited {self.process.returncode} before its window showed: {self.stderr()}")
            time.sleep(0.1)
        raise Failure("no window appeared")

    def key(self, *keys, last=False):
        # The last key of a window's life: it can close the window between the key's press and
        # its release, which xdotool then fails to send (BadWindow).
        subprocess.run(["xdotool", "key", "--window", self.window] + list(keys), env=self.test.display.env, check=not last,
                       stderr=subprocess.DEVNULL if last else None)
        if last:
            # A key whose release did not reach the gone window is still down in the X server,
            # which repeats it into the next window focused (an Escape that cancels each new
            # picker at once): released here, to the server itself.
            subprocess.run(["xdotool", "keyup"] + list(keys), env=self.test.display.env, stderr=subprocess.DEVNULL)

    def screenshot(self, name):
        path = os.path.join(self.directory, name + ".png")
        subprocess.run(["import", "-window", self.window, path], env=self.test.display.env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return path

    def windows(self):
        """The visible windows of the process: its own, and a menu or popover while one is open."""
        return subprocess.run(["xdotool", "search", "--onlyvisible", "--pid", str(self.process.pid)],
                              env=self.test.display.env, capture_output=True, text=True).stdout.split()

    def held(self):
        """Whether the window shows a still picture: two screenshots 0.4 s apart are equal (the
        live pattern's frame counter changes every frame)."""
        first = self.screenshot("held-1")
        time.sleep(0.4)
        return not pixels_differ(first, self.screenshot("held-2"))

    def shutter(self):
        """Space, then the shot held for review (however long a loaded machine takes to show it)."""
        self.key("space")
        wait_until(self.held, "the shot held for review after the shutter")

    def use(self):
        """Enter in the review: Use Photo (the last key of the window's life)."""
        self.key("Return", last=True)

    def close(self):
        subprocess.run([self.test.display.closer, self.window], env=self.test.display.env, check=True)

    def wait(self, timeout=30):
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise Failure("camroll did not exit")

    def stdout(self):
        with open(self.stdout_path, "rb") as f:
            return f.read()

    def stderr(self):
        with open(self.stderr_path, errors="replace") as f:
            return f.read()

    def shutter_frames(self):
        return [int(n) for n in re.findall(r"trace: shutter: frame (\d+)", self.stderr())]

    def rows(self, sql):
        if not os.path.exists(self.database):
            return []
        with sqlite3.connect(self.database) as db:
            return db.execute(sql).fetchall()

    def files(self):
        return sorted(glob.glob(os.path.join(self.directory, "out", "*.jpg")))


def wait_until(condition, what, timeout=20):
    """Polls `condition` until it holds: the tests wait on what the window shows, never on a
    fixed time, so that a loaded machine is only slower."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise Failure(f"{what}: not within {timeout} s")


def red(path, x, y=200):
    """The red of one pixel of a screenshot, 0-255."""
    return int(subprocess.run(["convert", path, "-crop", f"1x1+{x}+{y}", "-format", "%[fx:int(255*r)]", "info:"],
                              capture_output=True, text=True).stdout)


def pixels_differ(first, second):
    compared = subprocess.run(["compare", "-metric", "AE", first, second, "null:"], capture_output=True, text=True)
    return float(compared.stderr.split()[0]) > 0


def decodes(path):
    return subprocess.run(["djpeg", "-outfile", "/dev/null", path], stderr=subprocess.DEVNULL).returncode == 0


@case
def live_preview_then_space_and_enter_saves_and_prints_only_the_path(test):
    pick = Pick(test, [])
    pick.find_window()
    first = pick.screenshot("live1")
    time.sleep(0.5)
    second = pick.screenshot("live2")
    check(pixels_differ(first, second), "the preview does not move: two screenshots half a second apart are equal")
    # The shot is held for review: the screen stops changing.
    pick.shutter()
    pick.use()
    check(pick.wait() == 0, f"exit {pick.process.returncode}: {pick.stderr()}")
    files = pick.files()
    check(len(files) == 1 and decodes(files[0]), f"files: {files}")
    check(pick.stdout() == (files[0] + "\n").encode(), f"stdout is not exactly the path: {pick.stdout()!r}")
    check(pick.rows("SELECT path, status FROM saves") == [(files[0], "saved")], "the catalog's row")
    check(pick.rows("SELECT frame_sequence FROM captures") == [(pick.shutter_frames()[-1],)], "the frame saved is not the one shot")


@case
def r_retakes_and_the_second_shot_is_saved(test):
    pick = Pick(test, [])
    pick.find_window()
    pick.shutter()
    pick.key("r")
    wait_until(lambda: not pick.held(), "the preview live again after r")
    pick.shutter()
    pick.use()
    check(pick.wait() == 0, f"exit {pick.process.returncode}: {pick.stderr()}")
    shots = pick.shutter_frames()
    check(len(shots) == 2 and shots[1] > shots[0], f"shots: {shots}")
    check(pick.rows("SELECT frame_sequence FROM captures") == [(shots[1],)], "the catalog has not the second shot")
    check(len(pick.files()) == 1, "one file")


def check_cancelled(pick):
    status = pick.wait()
    check(status == 130, f"exit {status}: {pick.stderr()}")
    check(pick.stdout() == b"", f"stdout: {pick.stdout()!r}")
    check(pick.files() == [], "files were saved")
    check(pick.rows("SELECT count(*) FROM runs") in ([], [(0,)]), "a run was recorded")
    check("cancelled: nothing saved" in pick.stderr(), pick.stderr())


@case
def escape_cancels(test):
    pick = Pick(test, [])
    pick.find_window()
    pick.key("Escape", last=True)
    check_cancelled(pick)


@case
def closing_the_window_cancels(test):
    pick = Pick(test, [])
    pick.find_window()
    pick.close()
    check_cancelled(pick)


@case
def closing_the_window_in_review_cancels(test):
    pick = Pick(test, [])
    pick.find_window()
    pick.shutter()
    pick.close()
    check_cancelled(pick)


@case
def the_timer_takes_the_photo_three_seconds_after_the_shutter(test):
    pick = Pick(test, ["--timer", "3"])
    pick.find_window()
    pressed = datetime.now(timezone.utc)
    pick.key("space")
    time.sleep(1.5)
    counting = pick.screenshot("countdown")
    wait_until(pick.held, "the timer's shot held for review")
    pick.use()
    check(pick.wait() == 0, f"exit {pick.process.returncode}: {pick.stderr()}")
    captured = pick.rows("SELECT captured_at FROM captures")[0][0]
    taken = datetime.fromisoformat(captured.replace("Z", "+00:00"))
    check((taken - pressed).total_seconds() >= 3.0, f"taken {captured}, {(taken - pressed).total_seconds():.3f} s after the shutter")
    check(os.path.getsize(counting) > 0, "no screenshot of the countdown")


@case
def a_second_press_stops_the_countdown(test):
    pick = Pick(test, ["--timer", "2"])
    pick.find_window()
    pick.key("space")
    time.sleep(0.5)
    pick.key("space")
    time.sleep(2.5)
    check(pick.shutter_frames() == [], "the countdown went on")
    pick.key("Escape", last=True)
    check_cancelled(pick)


@case
def twenty_saves_show_progress_and_print_twenty_paths(test):
    pick = Pick(test, ["-n", "20", "--stamp"])
    pick.find_window()
    pick.shutter()
    pick.use()
    check(pick.wait() == 0, f"exit {pick.process.returncode}: {pick.stderr()}")
    lines = pick.stdout().decode().splitlines()
    files = pick.files()
    check(len(lines) == 20 and sorted(lines) == files, f"stdout: {lines}")
    check(lines[0].endswith("01.jpg"), f"the first path is not the first save's: {lines[0]}")
    check(pick.rows("SELECT count(*) FROM saves WHERE status = 'saved'") == [(20,)], "rows")


@case
def the_progress_bar_shows_and_cancel_stops_the_saves(test):
    # Enough saves, each synced, to look at the window while they run.
    pick = Pick(test, ["-n", "100000", "--stamp", "--fsync", "-r", "320x240"])
    pick.find_window()
    pick.shutter()
    before = pick.screenshot("before-saving")
    pick.key("Return")
    # The progress bar in place of the review's buttons.
    wait_until(lambda: pixels_differ(before, pick.screenshot("saving")), "the window changed for the saves")
    time.sleep(1.0)
    pick.key("Escape", last=True)
    status = pick.wait(timeout=60)
    check(status == 130, f"exit {status}: {pick.stderr()}")
    check(pick.stdout() == b"", "stdout after a cancelled run")
    saved = pick.rows("SELECT count(*) FROM saves WHERE status = 'saved'")[0][0]
    check(0 < saved < 100000 and saved == len(pick.files()), f"{saved} rows, {len(pick.files())} files")
    check(pick.rows("SELECT status FROM runs") == [("cancelled",)], "the run is not cancelled")
    test.note(f"progress: {saved} of 100000 saves before Cancel")


@case
def the_size_menu_from_the_keyboard_reopens_the_source_at_that_size(test):
    pick = Pick(test, [])
    pick.find_window()
    # Tab to the size menu (the camera menu is hidden with the pattern alone), open it, the
    # next size, chosen; then the shutter.
    # The menu's list is a window of its own while it is open; the picture, 16:9 after the
    # change, no longer leaves the window's sides empty (4:3 in the 960x640 window did).
    pick.key("Tab")
    time.sleep(0.3)
    pick.key("space")
    wait_until(lambda: len(pick.windows()) == 2, "the size menu open")
    pick.key("Down", "Return")
    wait_until(lambda: len(pick.windows()) == 1, "the size menu closed")
    wait_until(lambda: red(pick.screenshot("resized"), 40, 200) > 150, "the picture 16:9 after the size's change")
    # The menu gives the focus back 200 ms after its choice; until then Space would open it again.
    time.sleep(0.5)
    pick.shutter()
    pick.use()
    check(pick.wait() == 0, f"exit {pick.process.returncode}: {pick.stderr()}")
    check(pick.rows("SELECT width, height FROM captures") == [(1280, 720)], f"captured {pick.rows('SELECT width, height FROM captures')}")


@case
def json_is_one_object(test):
    pick = Pick(test, ["--json"])
    pick.find_window()
    pick.shutter()
    pick.use()
    check(pick.wait() == 0, f"exit {pick.process.returncode}: {pick.stderr()}")
    text = pick.stdout().decode()
    check(text.count("\n") == 1, f"stdout: {text!r}")
    jq = subprocess.run(["jq", "-e", ".path"], input=text, capture_output=True, text=True)
    check(jq.returncode == 0, f"jq: {jq.stderr}")
    result = json.loads(text)
    files = pick.files()
    check(result["path"] == files[0] and result["paths"] == files, f"{result}")
    check((result["width"], result["height"], result["format"]) == (640, 480, "jpeg"), f"{result}")
    check(result["bytes"] == os.path.getsize(files[0]), f"{result}")
    check(result["run_id"] == pick.rows("SELECT id FROM runs")[0][0], f"{result}")
    check(result["capture_id"] == pick.rows("SELECT id FROM captures")[0][0], f"{result}")
    check(result["device"] == "pattern" and result["seconds"] > 0, f"{result}")


@case
def dash_o_gives_the_jpeg_on_stdout_with_the_catalogs_hash(test):
    directory = tempfile.mkdtemp(prefix="stdout-", dir=test.work)
    photo = os.path.join(directory, "x.jpg")
    pick = Pick(test, ["-o", "-"], stdout_file=photo)
    pick.find_window()
    pick.shutter()
    pick.use()
    check(pick.wait() == 0, f"exit {pick.process.returncode}: {pick.stderr()}")
    check(decodes(photo), "stdout is not a JPEG")
    digest = subprocess.run(["xxhsum", "-H2", photo], capture_output=True, text=True).stdout.split()[0]
    # Where it went: the run's output is '-' and no file was saved; the capture holds its hash.
    recorded = pick.rows("SELECT r.output_template, c.xxh128, c.jpeg_bytes FROM runs r JOIN captures c ON c.run_id = r.id")
    check(recorded == [("-", digest, os.path.getsize(photo))], f"rows {recorded}, file {digest}")
    check(pick.rows("SELECT count(*) FROM saves") == [(0,)], "a save row for standard output")


@case
def m_mirrors_the_preview_only(test):
    pick = Pick(test, [])
    pick.find_window()
    plain = pick.screenshot("plain")
    pick.key("m")
    # The colour bars run the other way: the first column's colour is the last one's.
    # The picture is centred in the window (4:3 in a wider box): x 150 is on its first bar,
    # light grey, which the mirror puts at the right; its last bar, black, comes to the left.
    wait_until(lambda: red(pick.screenshot("mirrored"), 150) < 60, "the preview mirrored after m")
    mirrored = pick.screenshot("mirrored")
    check(red(plain, 150) > 150 and red(mirrored, 810) > 150,
          f"the preview is not mirrored: red {red(plain, 150)} then {red(mirrored, 150)} at the left, {red(mirrored, 810)} at the right")
    pick.shutter()
    pick.use()
    check(pick.wait() == 0, pick.stderr())
    # Saved as the camera sees it: the pattern's first bar is its light grey one, on the left.
    corner = subprocess.run(["convert", pick.files()[0], "-crop", "1x1+20+100", "-format", "%[fx:int(255*r)]", "info:"],
                            capture_output=True, text=True).stdout
    check(int(corner) > 150, f"the saved photo is mirrored (left edge red {corner})")


@case
def dash_dash_mirror_saves_the_photo_mirrored(test):
    pick = Pick(test, ["--mirror"])
    pick.find_window()
    pick.shutter()
    pick.use()
    check(pick.wait() == 0, pick.stderr())
    # The pattern's last bar (black) is now on the left, its first (light grey) on the right.
    def red(x):
        return int(subprocess.run(["convert", pick.files()[0], "-crop", f"1x1+{x}+100", "-format", "%[fx:int(255*r)]", "info:"],
                                  capture_output=True, text=True).stdout)
    check(red(20) < 60 and red(619) > 150, f"not mirrored: red {red(20)} at the left, {red(619)} at the right")


@case
def a_camera_that_cannot_be_opened_is_said_in_the_window_then_its_code(test):
    pick = Pick(test, ["-d", "/dev/video97"])
    pick.find_window()
    before = pick.screenshot("message")
    # The message replaces the picture: the window is not the pattern (no colour bars).
    saturation = float(subprocess.run(["convert", before, "-colorspace", "HSL", "-channel", "G", "-separate", "-format", "%[fx:mean]", "info:"],
                                      capture_output=True, text=True).stdout)
    check(saturation < 0.05, f"mean saturation {saturation:.3f}: the colour bars, not a message")
    check(pick.process.poll() is None, "exited before the message was closed")
    pick.key("Escape", last=True)
    status = pick.wait()
    check(status == 66, f"exit {status}: {pick.stderr()}")
    check("no such device" in pick.stderr() and pick.stdout() == b"", pick.stderr())


@case
def without_gtk_snap_works_and_window_says_which_package(test):
    libraries = glob.glob("/usr/lib/*/libgtk-4.so.1*")
    if os.geteuid() != 0 or not shutil.which("unshare"):
        raise Failure("needs root and unshare(1) to hide GTK")
    directory = tempfile.mkdtemp(prefix="nogtk-", dir=test.work)
    hide = " ".join(f"mount --bind /dev/null {path};" for path in libraries)
    script = (f"{hide} '{test.camroll}' pick --window -d pattern --db {directory}/c.sqlite3; echo \"pick=$?\"; "
              f"'{test.camroll}' snap -d pattern -o {directory}/x.jpg --db {directory}/c.sqlite3 >/dev/null; echo \"snap=$?\"")
    run = subprocess.run(["unshare", "-m", "sh", "-c", script], env=test.display.env, capture_output=True, text=True, timeout=60)
    check("pick=69" in run.stdout and "snap=0" in run.stdout, f"{run.stdout} {run.stderr}")
    check("libgtk-4-1" in run.stderr, f"the package is not named: {run.stderr}")
    check(os.path.exists(f"{directory}/x.jpg"), "snap saved nothing")
    test.note("without GTK: " + run.stderr.strip().splitlines()[0])


@case
def on_wayland_the_window_opens_and_a_signal_cancels(test):
    runtime = tempfile.mkdtemp(prefix="xdg-", dir=test.work)
    os.chmod(runtime, 0o700)
    env = dict(os.environ, XDG_RUNTIME_DIR=runtime, GSK_RENDERER="cairo", NO_AT_BRIDGE="1")
    env.pop("DISPLAY", None)
    weston = subprocess.Popen(["weston", "--backend=headless-backend.so", "--socket=camroll-test", "--idle-time=0"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if os.path.exists(os.path.join(runtime, "camroll-test")):
                break
            time.sleep(0.1)
        else:
            raise Failure("weston did not start")
        env["WAYLAND_DISPLAY"] = "camroll-test"
        pick = Pick(test, [], env=env)
        time.sleep(3)
        check(pick.process.poll() is None, f"pick exited {pick.process.returncode} on Wayland: {pick.stderr()}")
        pick.process.send_signal(signal.SIGINT)
        check_cancelled_by_signal = pick.wait()
        check(check_cancelled_by_signal == 130, f"exit {check_cancelled_by_signal}: {pick.stderr()}")
        check(pick.stdout() == b"" and pick.files() == [], "saved or printed something")
        # GTK chose Wayland: its preview frames were drawn there (the trace has no error) and
        # the X server was not asked (there is none in this environment).
        check("error" not in pick.stderr().lower(), pick.stderr())
    finally:
        weston.terminate()
        weston.wait()


class Test:
    def __init__(self, camroll, work):
        self.camroll = camroll
        self.work = work
        self.display = Display(work)
        self.notes = []
        # The pickers a case started: any still running when it ends is killed, so that a failed
        # case's window (a menu open on it holds the keyboard) leaves nothing to the next.
        self.pickers = []

    def end_case(self):
        for pick in self.pickers:
            if pick.process.poll() is None:
                pick.process.kill()
                pick.process.wait()
        self.pickers = []

    def note(self, text):
        self.notes.append(text)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("camroll")
    parser.add_argument("--only")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (screenshots)")
    arguments = parser.parse_args()
    work = tempfile.mkdtemp(prefix="camroll-window-")
    test = Test(os.path.abspath(arguments.camroll), work)
    passed = failed = 0
    started = time.time()
    try:
        for function in CASES:
            if arguments.only and arguments.only not in function.__name__:
                continue
            begun = time.time()
            try:
                function(test)
                passed += 1
                print(f"PASS {function.__name__} ({time.time() - begun:.1f} s)", flush=True)
            except Exception as error:  # a failed check or a tool that broke: both fail the case
                failed += 1
                print(f"FAIL {function.__name__}: {error}", flush=True)
            finally:
                test.end_case()
    finally:
        test.display.stop()
        if not arguments.keep and failed == 0:
            shutil.rmtree(work, ignore_errors=True)
    for note in test.notes:
        print("note: " + note)
    print(f"window: {passed} passed, {failed} failed in {time.time() - started:.0f} s" + (f" (kept {work})" if failed or arguments.keep else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
