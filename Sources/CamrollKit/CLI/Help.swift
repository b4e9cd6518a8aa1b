/// The text of `--help` for each command, in swift-argument-parser's layout.
enum Help {
    static let version = "camroll 0.1.0"

    static func text(for command: String?) -> String {
        switch command {
        case "snap": return snap
        case "devices", "formats", "check", "controls": return devices
        case "list", "show", "verify", "delete", "stats": return catalog
        default: return overview
        }
    }

    static let overview = """
        OVERVIEW: Take photos from V4L2 cameras and save them, once or N times, recording every
        save in an SQLite catalog.

        USAGE: camroll [snap] [<options>]
               camroll <subcommand> [<options>]

        SUBCOMMANDS:
          snap (default)          Capture, encode, save N times, record.
          devices                 List the cameras, with their by-id names and access.
          formats [-d <dev>]      Formats, sizes and frame rates.
          controls [-d <dev>]     Camera controls, their ranges and values.
          check [-d <dev>]        Can this user open the camera? If not, why, and the fix.
          list [--run <id>]       Runs, newest first; or one run's saves (--json, --csv).
          show <run> | --capture <id>
                                  One run or capture in full, with its thumbnail.
          verify [--run <id> | <path>...] [--repair]
                                  Re-read saved files; report ok/corrupt/missing/aliased.
          delete --save|--capture|--run <id> [--force]
                                  Delete files and mark their rows, together.
          stats [--run <id>]      Throughput, latency percentiles and histogram.
          help [<subcommand>]     Show help for a subcommand.

        GLOBAL OPTIONS:
          --json                  Machine-readable output (NDJSON events on stdout).
          --quiet                 Print errors only.
          --no-progress           No progress line.
          --color <when>          auto, always or never (NO_COLOR is honoured).
          -h, --help              Show help information.
          --version               Show the version.

        EXAMPLES:
          camroll snap -d pattern -o /tmp/shots/{seq}.jpg
          camroll snap -d pattern -r 1920x1080 -n 10000 --stamp -o /mnt/sd/{seq}.jpg

          See 'camroll help <subcommand>' for detailed help.

        """

    static let devices = """
        OVERVIEW: The cameras of this machine.

        USAGE: camroll devices [--json]
               camroll formats [-d <dev>] [--json]
               camroll controls [-d <dev>] [--json]
               camroll check [-d <dev>]

        OPTIONS:
          -d, --device <dev>      /dev/videoN, N or a /dev/v4l/by-id name. (default: the first camera)
          --json                  Machine-readable output.

        'check' exits 0 when the camera can be used, 77 when permission is denied (and prints
        the fix), 66 when there is no such camera, 69 when it cannot stream.

        """

    static let catalog = """
        OVERVIEW: The catalog: what was saved, and whether it is still there.

        USAGE: camroll list [--run <id>] [--json | --csv]
               camroll show <run-id> | --capture <id> [--json]
               camroll verify [--run <id> | <path>...] [--repair] [--json]
               camroll delete --save <id> | --capture <id> | --run <id> [--force]
               camroll stats [--run <id>] [--json]

        OPTIONS:
          --db <path>             Catalog. (default: $XDG_DATA_HOME/camroll/catalog.sqlite3)
          --repair                After a crash: record files a killed run saved but did not
                                  record, remove its temporary files, finish a stopped delete,
                                  mark missing and corrupt files. Never deletes a user's file.
                                  Exits 1 when any saved data was found lost.
          --force                 Delete files even when they no longer match their recorded
                                  content.

        'verify' checks the catalog (PRAGMA quick_check), then reads every file past the page
        cache and exits 0 when all are intact, 1 when any is corrupt, missing, not a regular
        file, holds another copy's content (detectable with snap --stamp), or a path given is
        not in the catalog. Reading commands open the catalog read-only.
        'delete' removes files in batches; Ctrl-C finishes the batch and reports.

        """

    static let snap = """
        OVERVIEW: Capture a frame, encode it as JPEG and save it N times, recording every save.

        USAGE: camroll snap [<options>]

        SOURCE OPTIONS:
          -d, --device <dev>      /dev/videoN, N, a /dev/v4l/by-id name, 'pattern' (the built-in
                                  test pattern) or file:PATH (an existing JPEG, saved as it is).
                                  Default: the first camera.
          -r, --resolution <WxH>  Frame size. (default: a camera's largest; the pattern's 1280x720)
          -f, --format <fmt>      auto (MJPEG, else YUYV, else converted), mjpeg, yuyv or a
                                  fourcc such as NV12. (default: auto)
          --fps <rate>            Frame rate to ask the camera for. (default: its highest)
          --skip <n>              Warm-up frames dropped while exposure settles. (default: 5)
          --frames <k>            Distinct frames to take, each saved N times. (default: 1)
          --interval <duration>   Pause between frames, e.g. 500ms, 2s.
          --timeout <duration>    Longest wait for a frame. (default: 5s)

        SAVE OPTIONS:
          -n, --count <n>         Saves of each frame, 1 to 1000000000. (default: 1)
          -o, --output <template> Where to save. Tokens: {seq} {seq:N} {uuid} {run} {frame}
                                  {date} {time} {ms}, and %Y %m %d %H %M %S.
                                  (default: $XDG_PICTURES_DIR/camroll/{date}_{time}_{seq}.jpg)
          -q, --quality <1-100>   JPEG quality. (default: 90)
          --max-bytes <size>      Highest quality (up to -q) whose file fits, e.g. 1M, 800K.
          --thumbnail <WxH|none>  Box the catalog's thumbnail fits in, aspect kept. (default: 160x120)
          --max-pixels <n>        Largest picture decoded, against files that claim absurd
                                  sizes; over it: exit 65. (default: 100000000)
          --fsync                 Sync each file and its directory before it counts as saved.
          --stamp                 Give each copy a unique JPEG comment, so copies differ byte-wise.
          --overwrite             Replace existing files (never done otherwise).
          --db <path>             Catalog. (default: $XDG_DATA_HOME/camroll/catalog.sqlite3)
          --set <name=value>      Set a camera control first (see 'camroll controls').

        GLOBAL OPTIONS:
          --json, --quiet, --no-progress, --color <when>, -h/--help

        Ctrl-C stops after the current save: no partial file is left, the run is recorded as
        cancelled and the exit status is 130 (143 for SIGTERM). A second Ctrl-C exits at once,
        after recording every file already under its final name and closing the run.

        """
}
