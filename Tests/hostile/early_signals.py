#!/usr/bin/env python3
"""SIGINT or SIGTERM at a random moment from the very start of a run.

    early_signals.py BINARY [--runs N] [--seed S]

N runs (default 500) get the signal 2-20 ms after exec, N more 0-2 ms after it, each a 200-save
`snap -d pattern` started with no signal blocked or ignored (posix_spawn with an empty mask and
the default actions). Every run must end with its own exit: 130 (SIGINT) or 143 (SIGTERM) with a
message on stderr, or 0 if it finished first; never killed by the signal itself, never another
status. Where a run row exists, it is not left 'running' (a cancelled run closes its row).
A run killed by the signal fails the script when its signals were already blocked as it was sent
(/proc/PID/status read just before); one killed before camroll's first instruction ran (exec and
the dynamic loader, in which no program can act on a signal) is counted, beside that window as
LD_DEBUG=statistics measures the loader's own work and as the wall time from exec to the block
is seen from outside (scheduling on a busy machine included).
"""
import argparse
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

parser = argparse.ArgumentParser()
parser.add_argument("binary")
parser.add_argument("--runs", type=int, default=500)
parser.add_argument("--seed", type=int, default=None)
args = parser.parse_args()
BINARY = os.path.abspath(args.binary)
seed = args.seed if args.seed is not None else random.randrange(1 << 30)
rng = random.Random(seed)
print(f"seed {seed}")

# The loader's own time before camroll's first instruction, at the CPU's TSC rate.
def loader_window_ms():
    mhz = None
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("cpu MHz"):
                mhz = float(line.split(":")[1])
                break
    except OSError:
        pass
    samples = []
    for _ in range(20):
        out = subprocess.run([BINARY, "--version"], env=dict(os.environ, LD_DEBUG="statistics"),
                             capture_output=True, text=True).stderr
        found = re.search(r"total startup time in dynamic loader: (\d+) cycles", out)
        if found and mhz:
            samples.append(int(found.group(1)) / (mhz * 1000))
    samples.sort()
    return samples


def run_once(directory, delay_ms, number):
    read, write = os.pipe()
    out = os.path.join(directory, "out")
    db = os.path.join(directory, "c.db")
    argv = [BINARY, "-d", "pattern", "-r", "64x48", "-n", "200", "-o", out + "/{seq}.jpg", "--db", db, "--no-progress"]
    # stdout and stderr both to the pipe: a cancelled run's summary is on stdout, an error on stderr.
    actions = [(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
               (os.POSIX_SPAWN_DUP2, write, 1), (os.POSIX_SPAWN_DUP2, write, 2)]
    pid = os.posix_spawn(BINARY, argv, dict(os.environ, NO_COLOR="1"), file_actions=actions, setsigmask=[],
                         setsigdef=[signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
    # The clock starts at exec: glibc's posix_spawn returns once the child has exec'd (it runs
    # on the parent's memory until then, CLONE_VFORK), so what follows is the new program's time
    # (the dynamic loader's, then camroll's), not the fork's and the exec's.
    start = time.perf_counter()
    os.close(write)
    # Slept, not spun: a parent spinning on a CPU holds it from the child it has just started,
    # which on two CPUs then waits for one to run its loader (the harness's own time, counted
    # as the program's; clock_nanosleep wakes within ~0.1 ms here).
    target = start + delay_ms / 1000
    while (left := target - time.perf_counter()) > 0:
        time.sleep(left)
    # Whether camroll's first instruction had run: its signals blocked (read just before the
    # signal is sent, so a run found blocked was blocked when it came).
    try:
        with open(f"/proc/{pid}/status") as status_file:
            blocked = any(line.startswith("SigBlk:") and int(line.split()[1], 16) & (1 << (number - 1))
                          for line in status_file)
    except OSError:
        blocked = False
    sent_after = (time.perf_counter() - start) * 1000
    os.kill(pid, number)
    stderr = b""
    while True:
        chunk = os.read(read, 65536)
        if not chunk:
            break
        stderr += chunk
    os.close(read)
    _, status = os.waitpid(pid, 0)
    killed = os.WIFSIGNALED(status)
    code = os.WTERMSIG(status) if killed else os.WEXITSTATUS(status)
    row = None
    if os.path.exists(db):
        try:
            with sqlite3.connect(db) as catalog:
                row = catalog.execute("SELECT status FROM runs ORDER BY id DESC LIMIT 1").fetchone()
        except sqlite3.Error:
            row = ("unreadable",)
    return killed, code, stderr.decode(errors="replace"), sent_after, row, blocked


def band(low, high):
    failures, killed_count, exits = [], 0, {}
    directory = tempfile.mkdtemp(prefix="camroll-signals-")
    try:
        for index in range(args.runs):
            number = rng.choice([signal.SIGINT, signal.SIGTERM])
            shutil.rmtree(os.path.join(directory, "out"), ignore_errors=True)
            for name in os.listdir(directory):
                os.unlink(os.path.join(directory, name)) if os.path.isfile(os.path.join(directory, name)) else None
            killed, code, stderr, sent, row, blocked = run_once(directory, rng.uniform(low, high), number)
            if killed:
                killed_count += 1
                key = "killed after its signals were blocked" if blocked else "killed before camroll's first instruction"
                exits[key] = exits.get(key, 0) + 1
                if not blocked:
                    latest = "latest such signal, ms after exec"
                    exits[latest] = round(max(exits.get(latest, 0), sent), 2)
                if blocked:
                    failures.append(f"run {index}: killed by signal {code} sent {sent:.2f} ms after exec, its signals blocked")
                continue
            exits[code] = exits.get(code, 0) + 1
            expected = 128 + number
            if code not in (0, expected):
                failures.append(f"run {index}: exit {code} (signal {number} at {sent:.2f} ms): {stderr.strip()[:200]}")
            elif code == expected and not re.search(r"cancel|stopped by", stderr):
                failures.append(f"run {index}: exit {code} without saying it was cancelled (signal at {sent:.2f} ms): {stderr.strip()[:200]!r}")
            if row is not None and row[0] in ("running", "unreadable"):
                failures.append(f"run {index}: exit {code}, its run row left {row[0]} (signal at {sent:.2f} ms)")
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return failures, killed_count, exits


TRIVIAL = r"""
#include <signal.h>
#include <unistd.h>
static void block(int argc, char **argv, char **envp) {
    sigset_t set; sigemptyset(&set); sigaddset(&set, SIGINT); sigprocmask(SIG_BLOCK, &set, 0);
}
__attribute__((section(".preinit_array"), used)) static void (*const early)(int, char **, char **) = block;
int main(void) { usleep(20000); return 0; }
"""


def trivial_program(directory):
    """A C program that blocks SIGINT as camroll does and needs no library but libc: the least
    exec, the loader and this machine's scheduling take now, for comparison."""
    source = os.path.join(directory, "trivial.c")
    with open(source, "w") as file:
        file.write(TRIVIAL)
    binary = os.path.join(directory, "trivial")
    if subprocess.run(["cc", "-O2", "-o", binary, source], capture_output=True).returncode != 0:
        return None
    return binary


def time_to_block_ms(binary=BINARY, runs=100):
    """From exec to the program's signals being blocked, as seen from outside (its
    /proc/PID/status polled): the wall time of the dynamic loader on this machine now,
    scheduling included."""
    times = []
    for _ in range(runs):
        pid = os.posix_spawn(binary, [binary, "--version"], dict(os.environ),
                             file_actions=[(os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0)], setsigmask=[])
        start = time.perf_counter()  # at exec, as in run_once
        seen = None
        while seen is None:
            try:
                with open(f"/proc/{pid}/status") as status_file:
                    text = status_file.read()
            except OSError:
                break
            if "State:\tZ" in text:
                break
            if int(text.split("SigBlk:")[1].split()[0], 16) & 2:
                seen = (time.perf_counter() - start) * 1000
            else:
                time.sleep(50e-6)  # leaves the CPU to the child (see run_once)
        os.waitpid(pid, 0)
        if seen is not None:
            times.append(seen)
    times.sort()
    return times


def main():
    window = loader_window_ms()
    if window:
        print(f"dynamic loader's own work before camroll's first instruction (LD_DEBUG=statistics, {len(window)} runs): "
              f"median {window[len(window) // 2]:.2f} ms, max {window[-1]:.2f} ms")
    print(f"load average {' '.join(open('/proc/loadavg').read().split()[:3])} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="camroll-trivial-") as directory:
        for label, binary in [("camroll", BINARY), ("a C program linked to libc alone", trivial_program(directory))]:
            blocked = time_to_block_ms(binary) if binary else []
            if blocked:
                print(f"exec to signals blocked, {label}, wall time seen from outside ({len(blocked)} runs): min {blocked[0]:.2f} ms, "
                      f"median {blocked[len(blocked) // 2]:.2f} ms, 95th {blocked[len(blocked) * 95 // 100]:.2f} ms, max {blocked[-1]:.2f} ms")
    late_failures, late_killed, late_exits = band(2, 20)
    print(f"{args.runs} runs, signal 2-20 ms after exec: {late_exits}")
    early_failures, early_killed, early_exits = band(0, 2)
    print(f"{args.runs} runs, signal 0-2 ms after exec: {early_exits}")
    for failure in late_failures + early_failures:
        print("FAIL", failure)
    print(f"{len(late_failures) + len(early_failures)} failure(s)")
    return 1 if late_failures or early_failures else 0


if __name__ == "__main__":
    sys.exit(main())
