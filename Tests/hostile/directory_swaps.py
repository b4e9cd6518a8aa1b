#!/usr/bin/env python3
"""A directory a run saves into, or a delete removes from, swapped for a link at a random moment.

    directory_swaps.py BINARY [--rounds N] [--seed S]

Each round is one of:
  seq      snap -n 6000 -o 'sw/{seq/500}/{seq}.jpg', and at a random moment once the run has made
           sw, sw is moved away and a link to another directory (holding files of its own) put in
           its place;
  jobs     the same with --jobs 4;
  planted  a link planted in the tree before the run (sw/05 -> the other directory);
  delete   delete --run 1 (--force half the time) while d is moved away and a link to the
           victim directory put in its place at a random moment.
After each: not one file written into the other directory, not one of its files unlinked or
changed; then `verify --repair`, and a second `verify --repair` that finds nothing left to
repair (catalog and disk agree), and no row `saved` whose file is not at its path. Exit 0 when
every round holds; prints what failed and the count of rounds of each kind.
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

parser = argparse.ArgumentParser()
parser.add_argument("binary")
parser.add_argument("--rounds", type=int, default=200)
parser.add_argument("--seed", type=int, default=None)
args = parser.parse_args()
BINARY = os.path.abspath(args.binary)
seed = args.seed if args.seed is not None else random.randrange(1 << 30)
rng = random.Random(seed)
print(f"seed {seed}")


def files(directory):
    found = {}
    for top, _, names in os.walk(directory):
        for name in names:
            path = os.path.join(top, name)
            if not os.path.islink(path):
                with open(path, "rb") as f:
                    found[path] = f.read()
    return found


def camroll(*arguments):
    return subprocess.run([BINARY, *arguments], capture_output=True, text=True, timeout=300)


def repaired_twice(db):
    """verify --repair, then another: what the second found to do (all zero when consistent)."""
    camroll("verify", "--repair", "--json", "--db", db)
    second = camroll("verify", "--repair", "--json", "--db", db)
    try:
        report = json.loads(second.stdout.splitlines()[-1])
    except (IndexError, ValueError):
        return f"no JSON from the second repair: {second.stdout[-300:]} {second.stderr[-300:]}"
    repaired = report.get("repaired", {})
    left = {k: v for k, v in repaired.items() if k in ("runs_closed", "files_adopted", "temporary_files_removed",
                                                          "rows_marked", "deletions_finished") and v}
    return f"the second repair still found {left}" if left else None


def saved_rows_exist(db):
    import sqlite3
    with sqlite3.connect(db) as catalog:
        rows = catalog.execute("SELECT path FROM saves WHERE status = 'saved'").fetchall()
    gone = [path for (path,) in rows if not os.path.isfile(path) or os.path.islink(path)]
    return f"{len(gone)} saved rows without their file, e.g. {gone[:2]}" if gone else None


def round_snap(top, kind):
    other = os.path.join(top, "other")
    os.mkdir(other)
    for n in range(5):
        with open(os.path.join(other, f"{n}.jpg"), "wb") as f:
            f.write(b"not camroll's %d" % n)
    before = files(other)
    sw = os.path.join(top, "sw")
    db = os.path.join(top, "c.db")
    if kind == "planted":
        os.makedirs(sw)
        for name in ("5", "05", "005"):  # the fifth group's directory, whatever its width
            os.symlink(other, os.path.join(sw, name))
    command = [BINARY, "-d", "pattern", "-r", "32x24", "-n", "6000", "-o", sw + "/{seq/500}/{seq}.jpg", "--db", db,
               "--no-progress", "--quiet"] + (["--jobs", "4"] if kind == "jobs" else [])
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if kind != "planted":
        # From the moment the run has made sw (a link there before the run starts is the path
        # the user named, which the run follows, as any program would).
        deadline = time.time() + 30
        while not os.path.isdir(sw) and process.poll() is None and time.time() < deadline:
            time.sleep(0.0005)
        time.sleep(rng.uniform(0.0, 1.5))
        os.rename(sw, sw + ".old")
        os.symlink(other, sw)
    stderr = process.communicate(timeout=300)[1]
    problems = []
    if process.returncode not in (0, 73):
        problems.append(f"exit {process.returncode}: {stderr.strip()[:200]}")
    if files(other) != before:
        problems.append(f"the other directory changed: {sorted(set(files(other)) ^ set(before))[:3]}")
    problem = repaired_twice(db)
    if problem:
        problems.append(problem)
    return process.returncode, problems


def round_delete(top):
    d = os.path.join(top, "d")
    db = os.path.join(top, "c.db")
    saved = camroll("-d", "pattern", "-r", "32x24", "-n", "3000", "-o", d + "/{seq}.jpg", "--db", db, "--quiet")
    if saved.returncode != 0:
        return saved.returncode, [f"setup: {saved.stderr[:200]}"]
    victim = os.path.join(top, "victim")
    os.mkdir(victim)
    # The victim holds files of the same names: some unrelated, some exact copies of saves.
    for n in range(1, 3001, 7):
        source = os.path.join(d, f"{n:04d}.jpg")
        target = os.path.join(victim, f"{n:04d}.jpg")
        if n % 2:
            shutil.copy(source, target)
        else:
            with open(target, "wb") as f:
                f.write(b"victim %d" % n)
    before = files(victim)
    force = rng.random() < 0.5
    process = subprocess.Popen([BINARY, "delete", "--run", "1", "--db", db] + (["--force"] if force else []),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(rng.uniform(0.0, 0.3))
    os.rename(d, d + ".real")
    os.symlink(victim, d)
    stderr = process.communicate(timeout=300)[1]
    problems = []
    if process.returncode not in (0, 1):
        problems.append(f"delete exit {process.returncode}: {stderr.strip()[:200]}")
    if files(victim) != before:
        problems.append(f"victim changed (force={force}): {len(set(before) - set(files(victim)))} unlinked")
    # Back in place for the repair: what the delete kept is still the run's.
    os.unlink(d)
    os.rename(d + ".real", d)
    problem = repaired_twice(db) or saved_rows_exist(db)
    if problem:
        problems.append(problem)
    return process.returncode, problems


def main():
    kinds = ["seq", "jobs", "planted", "delete"]
    counts = {kind: 0 for kind in kinds}
    statuses = {}
    failures = []
    for number in range(args.rounds):
        kind = kinds[number % len(kinds)]
        top = tempfile.mkdtemp(prefix="camroll-swap-")
        try:
            status, problems = round_delete(top) if kind == "delete" else round_snap(top, kind)
        finally:
            shutil.rmtree(top, ignore_errors=True)
        counts[kind] += 1
        statuses[(kind, status)] = statuses.get((kind, status), 0) + 1
        for problem in problems:
            failures.append(f"round {number} ({kind}): {problem}")
            print("FAIL", failures[-1], flush=True)
    print("rounds:", ", ".join(f"{kind} {count}" for kind, count in counts.items()))
    print("exits:", ", ".join(f"{kind} {status}: {n}" for (kind, status), n in sorted(statuses.items())))
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
