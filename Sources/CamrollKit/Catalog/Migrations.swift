/// The catalog's schema, as forward-only steps. Step k brings `PRAGMA user_version` from k-1
/// to k in one transaction. Never edit a released step: add a new one.
enum Migrations {
    static let steps: [String] = [
        // 1: runs, captures, saves — the column names are a contract (docs/catalog.md).
        """
        CREATE TABLE runs(
            id INTEGER PRIMARY KEY,
            uuid TEXT UNIQUE NOT NULL,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            command TEXT NOT NULL,
            device TEXT NOT NULL,
            requested_count INTEGER NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('running','completed','cancelled','failed')),
            error TEXT,
            -- What `verify --repair` needs to find files a killed run renamed into place
            -- but did not record: the expanded-path template, the frames asked for, the pid.
            output_template TEXT,
            requested_frames INTEGER,
            pid INTEGER
        );
        CREATE TABLE captures(
            id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES runs(id),
            uuid TEXT UNIQUE NOT NULL,
            captured_at TEXT NOT NULL,
            frame_sequence INTEGER,
            pixel_format TEXT NOT NULL,
            width INTEGER NOT NULL,
            height INTEGER NOT NULL,
            jpeg_quality INTEGER,
            jpeg_bytes INTEGER NOT NULL,
            xxh128 TEXT NOT NULL,
            thumbnail BLOB
        );
        CREATE INDEX captures_run ON captures(run_id);
        CREATE TABLE saves(
            id INTEGER PRIMARY KEY,
            capture_id INTEGER NOT NULL REFERENCES captures(id),
            seq INTEGER NOT NULL,
            path TEXT NOT NULL,
            bytes INTEGER NOT NULL,
            xxh128 TEXT NOT NULL,
            saved_at TEXT NOT NULL,
            duration_us INTEGER NOT NULL,
            synced INTEGER NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('saved','deleted','missing','corrupt'))
        );
        CREATE INDEX saves_capture ON saves(capture_id);
        CREATE INDEX saves_path ON saves(path);
        """,
        // 2: two more save states. `replaced`: a later save took the path (its file is that
        // save's now). `deleting`: `delete` is removing the file; repair finishes the job after an
        // interruption. SQLite cannot change a CHECK in place: the table is rebuilt, same columns.
        """
        CREATE TABLE saves_v2(
            id INTEGER PRIMARY KEY,
            capture_id INTEGER NOT NULL REFERENCES captures(id),
            seq INTEGER NOT NULL,
            path TEXT NOT NULL,
            bytes INTEGER NOT NULL,
            xxh128 TEXT NOT NULL,
            saved_at TEXT NOT NULL,
            duration_us INTEGER NOT NULL,
            synced INTEGER NOT NULL,
            status TEXT NOT NULL
                CHECK (status IN ('saved','deleted','missing','corrupt','replaced','deleting'))
        );
        INSERT INTO saves_v2 SELECT id, capture_id, seq, path, bytes, xxh128, saved_at, duration_us, synced, status FROM saves;
        DROP TABLE saves;
        ALTER TABLE saves_v2 RENAME TO saves;
        CREATE INDEX saves_capture ON saves(capture_id);
        CREATE INDEX saves_path ON saves(path);
        -- Older saves of a path that a later save took over.
        UPDATE saves SET status = 'replaced'
            WHERE status IN ('saved','missing','corrupt')
              AND EXISTS (SELECT 1 FROM saves later WHERE later.path = saves.path AND later.id > saves.id
                                                      AND later.status != 'deleted');
        """,
        """
        -- Pictures fetched from a URL: where the cached copy is, what it should hash to, and
        -- what the server said of it (for a conditional request next time).
        CREATE TABLE sources(
            id INTEGER PRIMARY KEY,
            url TEXT UNIQUE NOT NULL,
            cached_path TEXT NOT NULL,
            bytes INTEGER NOT NULL,
            xxh128 TEXT NOT NULL,
            etag TEXT,
            last_modified TEXT,
            fetched_at TEXT NOT NULL,
            checked_at TEXT NOT NULL
        );
        """,
        // 4: which of `snap --jobs N` writers saved a file (1…N; NULL with one writer).
        """
        ALTER TABLE saves ADD COLUMN job INTEGER;
        """,
        // 5: what a run saved, as its summary said it (NULL for runs before this step, and for
        // runs `verify --repair` closed): its figures outlive its files, and the summary, `list`,
        // `stats` and the plot show one MB/s, `saved_bytes` over `saving_us`.
        """
        ALTER TABLE runs ADD COLUMN saved_count INTEGER;
        ALTER TABLE runs ADD COLUMN saved_bytes INTEGER;
        ALTER TABLE runs ADD COLUMN saving_us INTEGER;
        """,
        // 6: the device and inode of the directory a file was saved into: `delete` unlinks it
        // only there, not through a directory swapped or linked in its place since.
        """
        ALTER TABLE saves ADD COLUMN directory_device INTEGER;
        ALTER TABLE saves ADD COLUMN directory_inode INTEGER;
        """,
        // 7: a service run
        // (`snap --every`). Its period, the slots it skipped (a capture that overran, a clock
        // step, a camera away), and what happened along the way — one row per event, not per
        // photo, so that a run of weeks adds a row only when something happens.
        """
        ALTER TABLE runs ADD COLUMN every_us INTEGER;
        ALTER TABLE runs ADD COLUMN skipped_slots INTEGER;
        CREATE TABLE run_events(
            id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES runs(id),
            at TEXT NOT NULL,
            kind TEXT NOT NULL
                CHECK (kind IN ('skipped','clock','unplugged','reconnected','retention','hook','stopped')),
            slot INTEGER,
            count INTEGER,
            detail TEXT
        );
        CREATE INDEX run_events_run ON run_events(run_id);
        """,
        // 8: thumbnails in a table of their own, one row a capture that has one. In the capture's
        // row a thumbnail (kilobytes) filled its page; when retention dropped it with its file,
        // the page stayed in the table nearly empty, never reused, since new captures go at the
        // end: a service run with `--keep-last` grew its catalog by 4.2 kB a photo. Deleted from
        // here, a thumbnail's page goes back to the free list, and the next one takes it.
        // (legacy_alter_table: a view of the user's own that names the column, or one broken
        // already, would otherwise make the drop fail, and with it every run.)
        """
        CREATE TABLE thumbnails(
            capture_id INTEGER PRIMARY KEY REFERENCES captures(id),
            jpeg BLOB NOT NULL
        );
        INSERT INTO thumbnails(capture_id, jpeg) SELECT id, thumbnail FROM captures WHERE thumbnail IS NOT NULL;
        PRAGMA legacy_alter_table=ON;
        ALTER TABLE captures DROP COLUMN thumbnail;
        PRAGMA legacy_alter_table=OFF;
        """,
        // 9: the `--timestamp`/`--title` banner drawn into a capture, its texts one a line
        // (title first); NULL when there was none.
        """
        ALTER TABLE captures ADD COLUMN banner TEXT;
        """,
    ]
}
