#!/usr/bin/env python3
"""Builds a large camroll catalog through SQLite itself, as years of use would leave one.

    big_catalog.py CAMROLL CATALOG --saves N [--seed S] [--thumbnails]

The schema is camroll's own: CAMROLL takes one photo into CATALOG first, so the catalog is at the
binary's schema version with its indexes and any trigger, and that photo's capture lends its
thumbnail and hash. Then runs of 1 to 10 000 saves (log-uniform: most runs small, a few huge, as a
storage tester's and a webcam's runs mix) are added until N saves are recorded, each run with one
capture (every tenth with its thumbnail unless --thumbnails gives every capture one), saves
numbered 1…k under /srv/camroll/RUN/SEQ.jpg, times one second a run apart. The runs are
'completed' and carry their totals, as a finished run does. The files are not written: the
catalog is what is measured.

Prints the runs and saves made and the seconds taken."""

import argparse
import math
import os
import random
import sqlite3
import subprocess
import sys
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("camroll")
    parser.add_argument("catalog")
    parser.add_argument("--saves", type=int, required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--thumbnails", action="store_true", help="a thumbnail on every capture, not every tenth")
    arguments = parser.parse_args()
    started = time.monotonic()
    if os.path.exists(arguments.catalog):
        sys.exit(f"big_catalog: {arguments.catalog} exists")
    work = os.path.dirname(os.path.abspath(arguments.catalog))
    subprocess.run([arguments.camroll, "snap", "-d", "pattern", "-r", "640x480", "--quiet", "--db", arguments.catalog,
                    "-o", os.path.join(work, "big-catalog-seed.jpg"), "--overwrite"], check=True)

    random.seed(arguments.seed)
    db = sqlite3.connect(arguments.catalog)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=OFF")
    thumbnail, xxh128, jpeg_bytes = db.execute(
        "SELECT t.jpeg, c.xxh128, c.jpeg_bytes FROM captures c JOIN thumbnails t ON t.capture_id = c.id").fetchone()
    columns = {row[1] for row in db.execute("PRAGMA table_info(runs)")}
    with_totals = "saved_count" in columns

    left, run, base = arguments.saves, 1, 1_700_000_000
    while left > 0:
        count = min(left, int(math.exp(random.uniform(0, math.log(10_000)))))
        run += 1
        at = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(base + run))
        template = f"/srv/camroll/{run}/{{seq}}.jpg"
        cursor = db.execute(
            "INSERT INTO runs(uuid, started_at, finished_at, command, device, requested_count, status, output_template, requested_frames)"
            " VALUES (lower(hex(randomblob(16))), ?, ?, 'camroll snap -d pattern', 'pattern', ?, 'completed', ?, 1)",
            (at, at, count, template))
        run_id = cursor.lastrowid
        if with_totals:
            db.execute("UPDATE runs SET saved_count = ?, saved_bytes = ?, saving_us = ? WHERE id = ?",
                       (count, count * jpeg_bytes, count * 40, run_id))
        cursor = db.execute(
            "INSERT INTO captures(run_id, uuid, captured_at, frame_sequence, pixel_format, width, height, jpeg_quality, jpeg_bytes, xxh128)"
            " VALUES (?, lower(hex(randomblob(16))), ?, 1, 'YUYV', 640, 480, 85, ?, ?)",
            (run_id, at, jpeg_bytes, xxh128))
        capture_id = cursor.lastrowid
        if arguments.thumbnails or run % 10 == 0:
            db.execute("INSERT INTO thumbnails(capture_id, jpeg) VALUES (?, ?)", (capture_id, thumbnail))
        db.execute(
            "WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < ?)"
            " INSERT INTO saves(capture_id, seq, path, bytes, xxh128, saved_at, duration_us, synced, status)"
            " SELECT ?, n, ? || n || '.jpg', ?, ?, ?, 40, 0, 'saved' FROM seq",
            (count, capture_id, f"/srv/camroll/{run}/", jpeg_bytes, xxh128, at))
        left -= count
        if run % 500 == 0:
            db.commit()
    db.commit()
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    runs, saves = db.execute("SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM saves)").fetchone()
    db.close()
    print(f"{arguments.catalog}: {runs} runs, {saves} saves, {os.path.getsize(arguments.catalog) / 1e6:.1f} MB "
          f"in {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()
