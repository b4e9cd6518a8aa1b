#!/usr/bin/env python3
"""What each command costs on a catalog of years (make bench-catalog): catalogs of 1 M and 10 M
saves built by big_catalog.py, and an empty one, measured in the same run.

- a new `snap -n SAVES` run's saves/s on the big catalog over the same run on the empty one
  (alternating pairs, medians): indexes and the repair bookkeeping must not grow with the table;
- the wall time of list, show, stats, verify and delete --dry-run of one run, `list --run` to its
  first row, `verify PATH` of one file, and `verify --repair --run` of a run killed with SIGKILL
  (medians of ROUNDS), each beside the same command on the empty catalog's run;
- the catalog's bytes per save, with a thumbnail on every tenth capture and on every one;
- the query plans: every statement the commands prepare (CAMROLL_TRACE_SQL=1) through EXPLAIN
  QUERY PLAN, any full scan of saves or captures printed.

Figures, not a test: the ratios are what to read.

Usage: catalog_scale.py CAMROLL [--sizes 1000000,10000000] [--rounds 5] [--work DIR]"""

import argparse
import os
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def timed(command, first_line=False):
    """Seconds to the command's end (or, with first_line, to its first line on stdout)."""
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if first_line:
        process.stdout.readline()
        elapsed = time.monotonic() - started
        process.kill()
        process.wait()
        return elapsed
    process.communicate()
    return time.monotonic() - started


def median_ms(command, rounds, first_line=False):
    return 1000 * statistics.median(timed(command, first_line) for _ in range(rounds))


def saves_per_second(camroll, catalog, work, saves):
    output = os.path.join(work, "out")
    shutil.rmtree(output, ignore_errors=True)
    result = subprocess.run([camroll, "snap", "-d", "pattern", "-r", "320x240", "-n", str(saves), "--db", catalog,
                             "-o", os.path.join(output, "{seq}.jpg"), "--json", "--no-progress"],
                            capture_output=True, text=True)
    match = re.search(r'"saves_per_s"\s*:\s*([0-9.]+)', result.stdout)
    if not match:
        sys.exit(f"bench-catalog: no saves/s from snap: {result.stdout[-300:]}{result.stderr[-300:]}")
    return float(match.group(1))


def killed_run_repair_ms(camroll, catalog, work):
    """A run of many saves killed with SIGKILL after a second, then repaired: the repair's time."""
    output = os.path.join(work, "killed")
    shutil.rmtree(output, ignore_errors=True)
    process = subprocess.Popen([camroll, "snap", "-d", "pattern", "-r", "320x240", "-n", "1000000", "--db", catalog,
                                "-o", os.path.join(output, "{seq}.jpg"), "--quiet"])
    time.sleep(1)
    process.send_signal(signal.SIGKILL)
    process.wait()
    run = sqlite3.connect(catalog).execute("SELECT max(id) FROM runs").fetchone()[0]
    elapsed = timed([camroll, "verify", "--repair", "--run", str(run), "--db", catalog])
    shutil.rmtree(output, ignore_errors=True)
    return 1000 * elapsed


def plans(camroll, catalog, commands):
    """The statements of `commands` whose plan scans saves or captures whole."""
    found = []
    seen = set()
    db = sqlite3.connect(catalog)
    for command in commands:
        traced = subprocess.run([camroll] + command + ["--db", catalog], capture_output=True, text=True,
                                env=dict(os.environ, CAMROLL_TRACE_SQL="1")).stderr
        for sql in re.findall(r"^trace: sql: (.*)$", traced, flags=re.M):
            if sql in seen or not sql.upper().startswith(("SELECT", "WITH", "UPDATE", "DELETE", "INSERT")):
                continue
            seen.add(sql)
            names = {"saves", "captures"} | {m.group(2) for m in re.finditer(r"\b(saves|captures)\s+(?:AS\s+)?(\w+)", sql, re.I)}
            try:
                plan = [row[3] for row in db.execute("EXPLAIN QUERY PLAN " + sql, [None] * sql.count("?"))]
            except sqlite3.Error as error:
                found.append((command, sql, [f"(not explained: {error})"]))
                continue
            scans = [line for line in plan if (m := re.match(r"SCAN (\w+)", line)) and m.group(1) in names]
            if scans:
                found.append((command, sql, scans))
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("camroll")
    parser.add_argument("--sizes", default="1000000,10000000")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--saves", type=int, default=2000, help="saves of the new run measured on each catalog")
    parser.add_argument("--work")
    arguments = parser.parse_args()
    camroll = os.path.abspath(arguments.camroll)
    work = arguments.work or tempfile.mkdtemp(prefix="camroll-bench-catalog-", dir="/var/tmp")
    os.makedirs(work, exist_ok=True)
    sizes = [int(size) for size in arguments.sizes.split(",")]
    rounds = arguments.rounds

    def build(name, saves, *extra):
        path = os.path.join(work, name)
        if not os.path.exists(path):
            subprocess.run([sys.executable, os.path.join(HERE, "big_catalog.py"), camroll, path, "--saves", str(saves)] + list(extra),
                           check=True)
        return path

    empty = build("empty.sqlite3", 1)
    catalogs = [(size, build(f"{size}.sqlite3", size)) for size in sizes]

    # Bytes per save: the same 100 000 saves with a thumbnail on every tenth capture and on each.
    # (Before any measurement adds runs to the empty catalog.)
    sparse, dense = build("bytes-sparse.sqlite3", 100_000), build("bytes-dense.sqlite3", 100_000, "--thumbnails")
    per_save = {path: (os.path.getsize(path) - os.path.getsize(empty)) / 100_000 for path in (sparse, dense)}

    def per_run_commands(catalog):
        db = sqlite3.connect(catalog)
        last = db.execute("SELECT max(id) FROM runs").fetchone()[0]
        biggest = db.execute("SELECT id FROM runs ORDER BY requested_count DESC, id LIMIT 1").fetchone()[0]
        path = db.execute("SELECT s.path FROM saves s JOIN captures c ON c.id = s.capture_id WHERE c.run_id = ? LIMIT 1",
                          (last,)).fetchone()[0]
        return [("list", ["list"], False), ("show last", ["show", "last"], False),
                ("stats (the newest run)", ["stats"], False), ("stats --run last", ["stats", "--run", str(last)], False),
                ("show BIG (the largest run)", ["show", str(biggest)], False),
                ("stats --run BIG", ["stats", "--run", str(biggest)], False),
                ("list --run BIG, first row", ["list", "--run", str(biggest)], True),
                ("verify --run last", ["verify", "--run", str(last)], False), ("verify PATH", ["verify", path], False),
                ("delete --run last --dry-run", ["delete", "--run", str(last), "--dry-run"], False),
                ("list --all (every run)", ["list", "--all"], False)]

    print(f"camroll {subprocess.run([camroll, '--version'], capture_output=True, text=True).stdout.splitlines()[0]}; "
          f"{os.cpu_count()} CPUs; medians of {rounds}; work in {work}", flush=True)
    for size, catalog in catalogs:
        db = sqlite3.connect(catalog)
        runs, saves = db.execute("SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM saves)").fetchone()
        db.close()
        print(f"\n## {saves:,} saves in {runs:,} runs ({os.path.getsize(catalog) / 1e6:.0f} MB) beside an empty catalog\n")
        pairs = [(saves_per_second(camroll, catalog, work, arguments.saves), saves_per_second(camroll, empty, work, arguments.saves))
                 for _ in range(rounds)]
        big_rate, empty_rate = statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)
        print("| measure | big catalog | empty catalog | big/empty |\n|---|---|---|---|")
        print(f"| snap -n {arguments.saves}: saves/s | {big_rate:.0f} | {empty_rate:.0f} | {big_rate / empty_rate:.2f} |")
        empty_commands = {name: command for name, command, _ in per_run_commands(empty)}
        for name, command, first_line in per_run_commands(catalog):
            big = median_ms([camroll] + command + ["--db", catalog], rounds, first_line)
            small = median_ms([camroll] + empty_commands[name] + ["--db", empty], rounds, first_line)
            print(f"| {name} (ms) | {big:.0f} | {small:.0f} | {big / small:.2f} |", flush=True)
        repairs = [(killed_run_repair_ms(camroll, catalog, work), killed_run_repair_ms(camroll, empty, work)) for _ in range(3)]
        big, small = statistics.median(r[0] for r in repairs), statistics.median(r[1] for r in repairs)
        print(f"| verify --repair --run of a run SIGKILLed after 1 s (ms) | {big:.0f} | {small:.0f} | {big / small:.2f} |")
        scans = plans(camroll, catalog, [command for _, command, _ in per_run_commands(catalog) if command != ["list", "--all"]])
        print("\nfull scans of saves or captures: " + ("none" if not scans else ""))
        for command, sql, lines in scans:
            print(f"- {' '.join(command)}: {lines} in {sql[:160]}")

    print(f"\ncatalog bytes per save: {per_save[sparse]:.0f} with a thumbnail on every tenth capture, "
          f"{per_save[dense]:.0f} with one on every capture (runs of 1-10 000 saves, one capture each)")


if __name__ == "__main__":
    main()
