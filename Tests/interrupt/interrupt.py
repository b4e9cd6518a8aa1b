#!/usr/bin/env python3
"""Interrupts real camroll processes at random moments and proves that `verify --repair` always
brings catalog and disk into exact agreement.

Each round picks a scenario — SIGINT, SIGTERM, SIGKILL or a double SIGINT during `snap`; a signal
0–40 ms after start (start-up); SIGINT or SIGKILL during `delete --run`; or a writer in another
PID namespace while `verify --repair` runs — over pattern runs at 1280x720 or 1920x1080, some with
--fsync, some with --stamp, some with --jobs 2 or 4 (parallel writers in one process), some with two
writers sharing one catalog. After the interruption it
counts every disagreement between catalog and disk, runs `verify --repair`, and counts again.

    Tests/interrupt/interrupt.py [--rounds N] [--binary PATH] [--seed S] [--scenario NAME]

Exit status 0 only when, after repair, every count is zero in every round, and every signalled
process ended as it must (130 for SIGINT, 143 for SIGTERM, never carrying on).
"""
import argparse
import collections
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

TEMPORARY = re.compile(r"^\..+\.camroll-\d+(-[0-9a-f]{12})?\.tmp$")
KINDS = ["temporary files", "rows without files", "files without rows", "runs left running",
         "rows mid-delete", "integrity"]


def disagreements(catalog, out_dirs):
    """Counts of each kind of disagreement between the catalog and the files under out_dirs."""
    counts = dict.fromkeys(KINDS, 0)
    files = set()
    for directory in out_dirs:
        if not os.path.isdir(directory):
            continue
        for parent, _, names in os.walk(directory):  # {seq/50}: a directory for every 50 saves
            for name in names:
                if TEMPORARY.match(name):
                    counts["temporary files"] += 1
                else:
                    files.add(os.path.join(parent, name))
    if not os.path.exists(catalog):
        counts["files without rows"] = len(files)
        return counts
    db = sqlite3.connect(catalog, timeout=30)
    try:
        if db.execute("PRAGMA integrity_check").fetchone()[0] != "ok":
            counts["integrity"] = 1
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "saves" not in tables:
            counts["files without rows"] = len(files)
            return counts
        saved = {row[0] for row in db.execute("SELECT path FROM saves WHERE status = 'saved'")}
        counts["rows without files"] = len(saved - files)
        counts["files without rows"] = len(files - saved)
        counts["runs left running"] = db.execute("SELECT count(*) FROM runs WHERE status = 'running'").fetchone()[0]
        counts["rows mid-delete"] = db.execute("SELECT count(*) FROM saves WHERE status = 'deleting'").fetchone()[0]
    finally:
        db.close()
    return counts


class Rounds:
    def __init__(self, binary, work):
        self.binary = binary
        self.work = work
        self.before = collections.defaultdict(lambda: collections.Counter())
        self.after = collections.defaultdict(lambda: collections.Counter())
        self.rounds = collections.Counter()
        self.jobs_used = collections.Counter()
        self.names_used = collections.Counter()
        self.bad_exits = []
        self.failed_rounds = 0
        self.round_failed = False
        self.can_unshare = os.geteuid() == 0 and shutil.which("unshare") is not None

    def snap_command(self, catalog, out, rng, extra=()):
        size = rng.choice(["1280x720", "1920x1080"])
        # Now and then a directory for every 50 saves: repair must look one level down.
        name = "{seq}.jpg" if rng.random() < 0.75 else os.path.join("{seq/50}", "{seq}.jpg")
        self.names_used[name] += 1
        command = [self.binary, "-d", "pattern", "-r", size, "-n", "1000000", "--json", "--thumbnail", "none",
                   "-o", os.path.join(out, name), "--db", catalog]
        if rng.random() < 0.3:
            command.append("--fsync")
        if rng.random() < 0.5:
            command.append("--stamp")
        jobs = rng.choice([1, 1, 2, 4])
        self.jobs_used[jobs] += 1
        if jobs > 1:
            command += ["--jobs", str(jobs)]
        return command + list(extra)

    @staticmethod
    def wait_for_start(process):
        line = process.stdout.readline()
        return b'"event":"start"' in line

    def expect_exit(self, scenario, process, wanted, timeout=60):
        try:
            status = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            self.bad_exits.append(f"{scenario}: still running {timeout} s after the signal")
            self.round_failed = True
            return
        status = status if status >= 0 else 128 - status
        if status not in wanted:
            self.bad_exits.append(f"{scenario}: exit {status}, expected {sorted(wanted)}")
            self.round_failed = True

    def repair_and_count(self, scenario, catalog, outs):
        for kind, count in disagreements(catalog, outs).items():
            self.before[scenario][kind] += count
        if os.path.exists(catalog):
            subprocess.run([self.binary, "verify", "--repair", "--quiet", "--db", catalog],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
        for kind, count in disagreements(catalog, outs).items():
            self.after[scenario][kind] += count
            if count:
                self.round_failed = True
        self.rounds[scenario] += 1

    # Scenarios -----------------------------------------------------------------------------

    def signal_during_snap(self, rng, directory, scenario):
        catalog = os.path.join(directory, "c.sqlite3")
        writers = 2 if rng.random() < 0.25 else 1  # two writers sharing one catalog
        outs = [os.path.join(directory, f"out{k}") for k in range(writers)]
        processes = [subprocess.Popen(self.snap_command(catalog, out, rng), stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL) for out in outs]
        for process in processes:
            self.wait_for_start(process)
        time.sleep(rng.uniform(0, 0.6))
        for process in processes:
            if scenario == "SIGINT":
                process.send_signal(signal.SIGINT)
            elif scenario == "SIGTERM":
                process.send_signal(signal.SIGTERM)
            elif scenario == "SIGKILL":
                process.kill()
            else:  # double SIGINT
                process.send_signal(signal.SIGINT)
                time.sleep(rng.uniform(0, 0.003))
                process.send_signal(signal.SIGINT)
        wanted = {"SIGINT": {130}, "SIGTERM": {143}, "SIGKILL": {137}, "double SIGINT": {130}}[scenario]
        for process in processes:
            process.stdout.close()
            self.expect_exit(scenario, process, wanted)
        self.repair_and_count(scenario, catalog, outs)

    def signal_at_start_up(self, rng, directory, scenario):
        catalog = os.path.join(directory, "c.sqlite3")
        out = os.path.join(directory, "out")
        number = rng.choice([signal.SIGINT, signal.SIGTERM])
        process = subprocess.Popen(self.snap_command(catalog, out, rng), stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0, 0.040))
        process.send_signal(number)
        self.expect_exit(scenario, process, {128 + number}, timeout=20)
        self.repair_and_count(scenario, catalog, [out])

    def signal_during_delete(self, rng, directory, scenario):
        catalog = os.path.join(directory, "c.sqlite3")
        out = os.path.join(directory, "out")
        subprocess.run([self.binary, "-d", "pattern", "-r", "64x48", "-n", str(rng.randint(1000, 4000)), "--quiet",
                        "--thumbnail", "none", "-o", os.path.join(out, "{seq}.jpg"), "--db", catalog], check=True)
        process = subprocess.Popen([self.binary, "delete", "--run", "1", "--db", catalog],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.01, 0.3))
        if scenario == "delete SIGINT":
            process.send_signal(signal.SIGINT)
            self.expect_exit(scenario, process, {0, 130})  # 0: it had finished
        else:
            process.kill()
            self.expect_exit(scenario, process, {0, 137})
        self.repair_and_count(scenario, catalog, [out])

    def repair_beside_writer_in_pid_namespace(self, rng, directory, scenario):
        catalog = os.path.join(directory, "c.sqlite3")
        out = os.path.join(directory, "out")
        process = subprocess.Popen(["unshare", "--pid", "--fork", "--mount-proc"] + self.snap_command(catalog, out, rng),
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.wait_for_start(process)
        time.sleep(rng.uniform(0.05, 0.4))
        subprocess.run([self.binary, "verify", "--repair", "--quiet", "--db", catalog],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
        # The writer is alive: its run must still be open, its files still its own.
        db = sqlite3.connect(catalog, timeout=30)
        closed = db.execute("SELECT count(*) FROM runs WHERE status != 'running'").fetchone()[0]
        db.close()
        if closed:
            self.bad_exits.append(f"{scenario}: repair closed a live writer's run")
            self.round_failed = True
        children = open(f"/proc/{process.pid}/task/{process.pid}/children").read().split()
        for child in children:
            os.kill(int(child), signal.SIGINT)
        process.stdout.close()
        self.expect_exit(scenario, process, {130})
        self.repair_and_count(scenario, catalog, [out])

    def run(self, rounds, rng, only=None):
        scenarios = [("SIGINT", self.signal_during_snap), ("SIGTERM", self.signal_during_snap),
                     ("SIGKILL", self.signal_during_snap), ("double SIGINT", self.signal_during_snap),
                     ("start-up signal", self.signal_at_start_up), ("delete SIGINT", self.signal_during_delete),
                     ("delete SIGKILL", self.signal_during_delete)]
        if self.can_unshare:
            scenarios.append(("writer in a PID namespace", self.repair_beside_writer_in_pid_namespace))
        if only:
            scenarios = [(name, action) for name, action in scenarios if name == only]
            if not scenarios:
                sys.exit(f"no scenario '{only}'")
        for index in range(rounds):
            scenario, action = scenarios[index % len(scenarios)]
            directory = tempfile.mkdtemp(dir=self.work)
            self.round_failed = False
            try:
                action(rng, directory, scenario)
            finally:
                shutil.rmtree(directory, ignore_errors=True)
            self.failed_rounds += self.round_failed

    def report(self):
        print(f"{'scenario':28} {'rounds':>6}  disagreements before repair → after repair")
        clean = True
        for scenario, rounds in self.rounds.items():
            before = ", ".join(f"{kind} {self.before[scenario][kind]}" for kind in KINDS if self.before[scenario][kind])
            after_total = sum(self.after[scenario].values())
            clean = clean and after_total == 0
            after = ", ".join(f"{kind} {self.after[scenario][kind]}" for kind in KINDS if self.after[scenario][kind])
            print(f"{scenario:28} {rounds:>6}  {before or 'none'} → {after or 'none'}")
        for problem in self.bad_exits:
            print("BAD EXIT:", problem)
        print("snap runs by --jobs: " + ", ".join(f"{jobs}: {count}" for jobs, count in sorted(self.jobs_used.items()))
              + "; by name: " + ", ".join(f"{name}: {count}" for name, count in sorted(self.names_used.items())))
        total = sum(self.rounds.values())
        print(f"interruptions: {total - self.failed_rounds} passed, {self.failed_rounds} failed")
        return clean and not self.bad_exits and self.failed_rounds == 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=500)
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--binary", default=os.path.join(here, "..", "..", ".build", "debug", "camroll"))
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--scenario", help="run only this one, e.g. 'start-up signal'")
    arguments = parser.parse_args()
    # A signal a process is started with ignored (SIGINT, for a `cmd &` of a shell without job
    # control) is discarded until camroll's signal thread takes it over, and camroll leaves SIGHUP
    # ignored (nohup's way). This harness may itself be started so: its camrolls get the default
    # dispositions, so that a signal sent in their first milliseconds reaches them.
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(number) == signal.SIG_IGN:
            signal.signal(number, signal.SIG_DFL)
    seed = arguments.seed if arguments.seed is not None else random.randrange(1 << 30)
    print(f"seed {seed}, {arguments.rounds} rounds, {os.path.abspath(arguments.binary)}")
    work = tempfile.mkdtemp(prefix="camroll-interrupt-")
    try:
        rounds = Rounds(os.path.abspath(arguments.binary), work)
        began = time.time()
        rounds.run(arguments.rounds, random.Random(seed), arguments.scenario)
        ok = rounds.report()
        print(f"{time.time() - began:.0f} s")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
