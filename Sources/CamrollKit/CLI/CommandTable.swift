/// Every command and option camroll has, in one table. The parsers look options up here (an
/// option that is not in the table is unknown to them), and `--help`, the man page and the
/// shell completions are generated from it: none of them can name an option the others lack.

/// What an option's or an argument's value is, for the completions.
enum ValueKind: Sendable, Equatable {
    case none
    /// Free text: nothing to offer.
    case text
    /// A camera, `pattern` or `file:PATH`.
    case source
    /// A camera node only.
    case camera
    /// A camera node or `pattern` (pick's sources).
    case cameraOrPattern
    case file
    case runID
    case captureID
    case saveID
    case command
    case choices([String])
    /// `NAME=`: the chosen camera's control names.
    case control
    /// `WxH`: the chosen camera's frame sizes.
    case size
}

struct OptionSpec: Sendable {
    /// Short form first, if there is one: `["-d", "--device"]`.
    var names: [String]
    /// `<dev>`; nil for a flag.
    var value: String?
    var help: String
    var kind: ValueKind = .none
    /// May be given more than once (`--set`), each value kept. Any other option with a value
    /// given twice is a usage error naming both values, not the last one silently taken.
    var repeatable = false
    /// The value may be left out (`--timestamp` alone, `--timestamp '%H:%M'`): it is taken
    /// after `=`, or from the next argument when that holds a `%` and is not an option.
    var valueIsOptional = false

    /// The name the parsers switch on: the long one.
    var id: String { names.last ?? "" }
    /// A value must follow (one that may be left out does not count).
    var takesValue: Bool { value != nil && !valueIsOptional }
    /// `-d, --device <dev>`
    var synopsis: String { names.joined(separator: ", ") + (value.map { " " + $0 } ?? "") }
}

struct ArgumentSpec: Sendable {
    var name: String
    var help: String
    var kind: ValueKind
}

struct CommandSpec: Sendable {
    var name: String
    /// One line, for the list of commands.
    var abstract: String
    var usage: [String]
    var overview: String
    var sections: [(title: String, options: [OptionSpec])]
    var arguments: [ArgumentSpec] = []
    var discussion: String = ""

    var options: [OptionSpec] { sections.flatMap(\.options) }

    func option(named name: String) -> OptionSpec? {
        options.first { $0.names.contains(name) } ?? CommandTable.global.first { $0.names.contains(name) }
    }
}

enum CommandTable {
    static let global: [OptionSpec] = [
        OptionSpec(names: ["--json"], help: "Machine-readable output: JSON on stdout (NDJSON events for snap), errors too."),
        OptionSpec(names: ["--quiet"], help: "Print errors only."),
        OptionSpec(names: ["--no-progress"], help: "No progress line."),
        OptionSpec(names: ["--color"], value: "<when>", help: "auto, always or never (NO_COLOR is honoured).",
                   kind: .choices(["auto", "always", "never"])),
        OptionSpec(names: ["-h", "--help"], help: "Show help information."),
    ]

    static let database = OptionSpec(
        names: ["--db"], value: "<path>", help: "Catalog. (default: $XDG_DATA_HOME/camroll/catalog.sqlite3)", kind: .file)

    static let camera = OptionSpec(
        names: ["-d", "--device"], value: "<dev>", help: "/dev/videoN, N or a /dev/v4l/by-id name. (default: the first camera)",
        kind: .camera)

    static let snap = CommandSpec(
        name: "snap", abstract: "Capture, encode, save N times, record. (the default command)",
        usage: ["camroll snap [<options>]"],
        overview: "Capture a frame, encode it as JPEG and save it N times, recording every save.",
        sections: [
            ("SOURCE OPTIONS", [
                OptionSpec(names: ["-d", "--device"], value: "<dev>",
                           help: "/dev/videoN, N, a /dev/v4l/by-id name, 'pattern' (the built-in test pattern), file:PATH (a JPEG, saved as it is unless -r, --crop or -q change it; or a PNG) or an http(s):// URL (downloaded once, then cached). (default: the first camera)",
                           kind: .source),
                OptionSpec(names: ["-r", "--resolution"], value: "<WxH>",
                           help: "Frame size; for a file or URL, the box it is scaled down into, aspect kept. (default: a camera's largest; the pattern's 1280x720)", kind: .size),
                OptionSpec(names: ["-f", "--format"], value: "<fmt>",
                           help: "auto (MJPEG, else YUYV, else converted), mjpeg, yuyv or a fourcc such as NV12. (default: auto)",
                           kind: .choices(["auto", "mjpeg", "yuyv", "nv12", "yu12", "rgb3"])),
                OptionSpec(names: ["--fps"], value: "<rate>", help: "Frame rate to ask the camera for. (default: its highest)", kind: .text),
                OptionSpec(
                    names: ["--skip"], value: "<n|auto>",
                    help: "Warm-up frames dropped while exposure settles; auto: until the picture's brightness holds steady (at most 2 s). (default: auto)",
                    kind: .choices(["auto", "0", "5", "10"])),
                OptionSpec(names: ["--frames"], value: "<k>", help: "Distinct frames to take, each saved N times. (default: 1)", kind: .text),
                OptionSpec(names: ["--interval"], value: "<duration>", help: "Pause after each frame before the next, e.g. 500ms, 2s: the period drifts by each capture's time (--every keeps a clock).", kind: .text),
                OptionSpec(names: ["--timeout"], value: "<duration>", help: "Longest wait for a frame; for a URL, the longest the whole download may take (60s when not given), which also stops when it gets under 1 kB a second for 5s (or this long). (default: 5s)", kind: .text),
                OptionSpec(names: ["--set"], value: "<name=value>",
                           help: "Set a camera control first (see 'camroll controls'); may be repeated.", kind: .control,
                           repeatable: true),
                OptionSpec(names: ["--max-pixels"], value: "<n>",
                           help: "Largest picture decoded, against files that claim absurd sizes; over it: exit 65. (default: 100000000)",
                           kind: .text),
                OptionSpec(names: ["--offline"], help: "Use a URL's cached copy without asking the network; exit 66 when there is none."),
                OptionSpec(names: ["--user-from"], value: "<file|env:NAME>",
                           help: "A URL's user and password, USER:PASSWORD on the first line of a file or in an environment variable, kept out of the command line (which others on the machine can read). (default: the URL's own, else ~/.netrc)",
                           kind: .file),
            ]),
            ("SAVE OPTIONS", [
                OptionSpec(names: ["-n", "--count"], value: "<n>", help: "Saves of each frame, 1 to 1000000000. (default: 1)", kind: .text),
                OptionSpec(names: ["-o", "--output"], value: "<template>",
                           help: "Where to save. Tokens: {seq} {seq:N} {seq/N} {uuid} {run} {frame} {date} {time} {ms}, and %Y %m %d %H %M %S; a leading ~/ is the home directory; - sends the JPEG to standard output instead (recorded, not saved). (default: $XDG_PICTURES_DIR/camroll/{date}_{time}_{seq}.jpg)",
                           kind: .file),
                OptionSpec(names: ["-q", "--quality"], value: "<1-100>", help: "JPEG quality; given with a JPEG file, re-encodes it. (default: 90)", kind: .text),
                OptionSpec(names: ["--crop"], value: "<WxH[+X+Y]|W:H>",
                           help: "Keep this part of the picture: a size (centred unless placed) or an aspect ratio such as 1:1 or 413:626; lossless on a JPEG when nothing else changes it.",
                           kind: .text),
                OptionSpec(names: ["--rotate"], value: "<degrees>",
                           help: "Turn the picture clockwise by 90, 180 or 270 degrees, after the crop; lossless on a JPEG or an MJPEG frame whose sides are whole 8/16-pixel blocks.",
                           kind: .choices(["90", "180", "270"])),
                OptionSpec(names: ["--flip"], value: "<h|v>", help: "Mirror the picture left-right (h) or top-bottom (v), after --rotate.",
                           kind: .choices(["h", "v"])),
                OptionSpec(names: ["--greyscale"], help: "Save a greyscale (one-component) JPEG: the colour dropped, the luma kept as it was."),
                OptionSpec(names: ["--subsampling"], value: "<444|422|420>",
                           help: "JPEG chroma subsampling: colour for every pixel (444), each pair side by side (422) or each 2x2 block (420); a JPEG source is encoded again when it differs from its own. (default: the source's: 422 for a YUYV camera and the pattern, 420 for other cameras' YUV 4:2:0, a JPEG file's own, 444 for PNG; 420 with --max-bytes)",
                           kind: .choices(["444", "422", "420"])),
                OptionSpec(names: ["--encoding"], value: "<png|jpeg>",
                           help: "The file format saved: jpeg, or png (lossless, 8-bit RGB or grey, EXIF in an eXIf chunk). (default: png for an output name ending in .png, else jpeg; for -o -, jpeg)",
                           kind: .choices(["jpeg", "png"])),
                OptionSpec(names: ["--no-exif"], help: "Write no EXIF (nor XMP) at all: no time, camera, settings, location, maker notes or embedded thumbnail, whatever the source had."),
                OptionSpec(names: ["--strip-gps"], help: "Drop the location (EXIF's GPS tags, an XMP packet that names one) and keep the rest of a photo's EXIF."),
                OptionSpec(names: ["--max-bytes"], value: "<size>", help: "Highest quality (up to -q) whose file fits, e.g. 1M, 800K.", kind: .text),
                OptionSpec(names: ["--thumbnail"], value: "<WxH|none>",
                           help: "Box the catalog's thumbnail fits in, aspect kept. (default: 160x120)", kind: .choices(["160x120", "320x240", "none"])),
                OptionSpec(names: ["--fsync"], help: "Sync each file and its directory before it counts as saved."),
                OptionSpec(names: ["--stamp"], help: "Give each copy a unique JPEG comment, so copies differ byte-wise."),
                OptionSpec(names: ["--fill"],
                           help: "Save until the file system is full, then stop with exit 0 (a storage test, as f3write does); -n is then an upper bound; implies --stamp."),
                OptionSpec(names: ["--direct"],
                           help: "Write with O_DIRECT, past the page cache, so that rates and latencies are the device's; where the file system refuses it, a warning and the page cache."),
                OptionSpec(names: ["--jobs"], value: "<n>",
                           help: "Writers saving at once, 1 to 64, each its own files: a device that works in parallel (SSD, NVMe, a network share) at its real rate. (default: 1)",
                           kind: .text),
                OptionSpec(names: ["--overwrite"], help: "Replace existing files (never done otherwise)."),
                OptionSpec(names: ["--stats"],
                           help: "Print the storage figures even for one photo: saves/s, MB/s (the bytes saved over the saving time: writing, naming and recording the files, not the capture or the pauses), save latency percentiles, the run's number. (default: for more than one save; one photo is one line, its path)"),
                database,
            ]),
            ("OVERLAY OPTIONS", overlay),
            ("SERVICE OPTIONS", [
                OptionSpec(names: ["--config"], value: "<file>",
                           help: "Read options from this file, one a line, named as here without the dashes ('every = 1m', 'fsync'); the command line's follow them (see docs/service.md).",
                           kind: .file),
                OptionSpec(names: ["--every"], value: "<duration>",
                           help: "A photo at each multiple of this period on the wall clock (500ms, 10s, 1m, 1h, 1d), without drift; a slot missed because the previous photo overran is skipped, counted, logged and recorded. Runs until --for, --until, --frames or a signal.",
                           kind: .text),
                OptionSpec(names: ["--align"], value: "<clock|none>",
                           help: "clock: slots at whole multiples of the period on the local clock (--every 1m at :00); none: the first slot now. (default: clock)",
                           kind: .choices(["clock", "none"])),
                OptionSpec(names: ["--for"], value: "<duration>", help: "End the run after this long, e.g. 2h, 30m.", kind: .text),
                OptionSpec(names: ["--until"], value: "<time>",
                           help: "End the run at this time: HH:MM[:SS] (its next coming) or YYYY-MM-DDTHH:MM[:SS], local time (UTC with a trailing Z).",
                           kind: .text),
                OptionSpec(names: ["--reconnect"], value: "<duration>",
                           help: "How long to wait for an unplugged camera to come back (the same camera, by its bus and by-id names), reopened as it was. (default: forever)",
                           kind: .text),
                OptionSpec(names: ["--keep-last"], value: "<n>", help: "After each photo, delete all but the newest N photos this output template's runs recorded.", kind: .text),
                OptionSpec(names: ["--keep-for"], value: "<duration>", help: "After each photo, delete those older than this, counted back from the newest, e.g. 7d, 12h.", kind: .text),
                OptionSpec(names: ["--keep-bytes"], value: "<size>", help: "After each photo, delete the oldest until the photos take at most this, e.g. 2G.", kind: .text),
                OptionSpec(names: ["--latest"], value: "<path>", help: "A link to (or copy of) the newest photo, replaced atomically after each one (for a web server).", kind: .file),
                OptionSpec(names: ["--exec"], value: "<cmd> [<arg>...] ;",
                           help: "Run this program after each photo, {path} {seq} {time} replaced in its arguments; no shell; one at a time (a photo saved while it runs gets none); its failures are logged, never fatal. End it with ';' (\\; in a shell).",
                           kind: .text),
                OptionSpec(names: ["--exec-timeout"], value: "<duration>", help: "Kill a hook that runs longer than this. (default: 60s)", kind: .text),
            ]),
        ],
        discussion: """
            Ctrl-C stops after the current save: no partial file is left, the run is recorded as
            cancelled and the exit status is 130 (143 for SIGTERM). A second Ctrl-C exits at once,
            after recording every file already under its final name and closing the run.
            """)

    /// The banner drawn into the picture (fswebcam's names, where camroll has the same thing).
    static let overlay: [OptionSpec] = [
        OptionSpec(names: ["--timestamp"], value: "[<strftime>]",
                   help: "Draw the capture time in a banner, in local time, by this strftime format (given after '=', or as the next argument when it holds a '%'). (default format: '\(BannerRequest.defaultTimestampFormat)')",
                   kind: .text, valueIsOptional: true),
        OptionSpec(names: ["--title"], value: "<text>", help: "Draw this text in the banner, at its left (UTF-8, one line; any script, emoji).", kind: .text),
        OptionSpec(names: ["--banner"], value: "<top|bottom>", help: "Where the banner goes. (default: bottom)", kind: .choices(["top", "bottom"])),
        OptionSpec(names: ["--font"], value: "<family>",
                   help: "The banner's font family, as fc-list names it; one not installed is an error (exit 64). (default: sans)", kind: .text),
        OptionSpec(names: ["--font-size"], value: "<pixels>",
                   help: "The banner's text height in pixels, 4 to 1000. (default: a 30th of the picture's height, at least 10)", kind: .text),
        OptionSpec(names: ["--banner-colour", "--banner-color"], value: "<colour>",
                   help: "The banner's background: #RRGGBB, #RRGGBBAA (AA the opacity) or a name (black, white, grey, transparent…). (default: #263a93bf)",
                   kind: .text),
        OptionSpec(names: ["--text-colour", "--text-color"], value: "<colour>", help: "The banner's text colour, as --banner-color. (default: white)", kind: .text),
    ]

    static let previewMode = OptionSpec(
        names: ["--preview-mode"], value: "<mode>",
        help: "How pictures are drawn: kitty, sixel or iterm2 images, symbols (colour blocks), or none. (default: what the terminal supports)",
        kind: .choices(PreviewMode.allCases.map(\.rawValue)))

    /// What pick takes of snap's options: one picture per shutter, from a camera or the pattern,
    /// saved as snap saves it. Not --frames, --interval (one shutter, one picture), --fill,
    /// --jobs (storage tests), a file's or URL's (--offline, --user-from: nothing to preview) or
    /// a service run's (--config, --every and the rest: one photo, then the caller has it).
    private static let pickOmits: Set<String> = [
        "--frames", "--interval", "--fill", "--jobs", "--offline", "--config", "--every", "--align", "--for", "--until", "--reconnect",
        "--keep-last", "--keep-for", "--keep-bytes", "--latest", "--exec", "--exec-timeout", "--user-from",
    ]

    static let pick = CommandSpec(
        name: "pick", abstract: "The camera picker: a window (or the terminal); the photo's path on stdout.",
        usage: ["camroll pick [<options>]", "photo=$(camroll pick) || exit"],
        overview: "Shows the camera live in a window where there is a display, else in the terminal; the shutter takes the picture shown, which is kept (saved N times, as snap saves) or retaken. Standard output carries the result alone: the saved photo's path.",
        sections: snap.sections.map { section in
            (section.title, section.options.compactMap { option -> OptionSpec? in
                if pickOmits.contains(option.id) { return nil }
                guard option.id == "--device" else { return option }
                return OptionSpec(names: option.names, value: option.value,
                                  help: "/dev/videoN, N, a /dev/v4l/by-id name, or 'pattern' (the built-in test pattern). (default: the first camera)",
                                  kind: .cameraOrPattern)
            })
        }.filter { !$0.options.isEmpty } + [("PICKER OPTIONS", [
            OptionSpec(names: ["--window"], help: "Show a window (GTK 4); exit 69 when there is no display or no GTK."),
            OptionSpec(names: ["--terminal"], help: "Show the camera in the terminal, even where there is a display."),
            OptionSpec(names: ["--timer"], value: "<seconds>", help: "The shutter takes the photo after this many seconds, counted down over the preview. (default: 0; the timer button counts 3)", kind: .text),
            OptionSpec(names: ["--mirror"], help: "Save the photo mirrored, left for right, as a selfie camera does (and show the window's preview so). Without it the photo is saved as the camera sees it, whatever the window's Mirror button shows."),
            previewMode,
        ])],
        discussion: """
            Result: on success standard output holds the saved photo's path, one line (with -n N,
            the N paths, one a line, the first the one to use); with --json one JSON object (paths,
            width, height, bytes, format, capture and run IDs, device, seconds); with -o - the
            JPEG itself. Everything else (progress, the summary, messages) goes to standard error
            or the window. Cancelled, nothing is saved, nothing is printed and the exit status is
            130 (143 for SIGTERM); an error exits with its own status.

            Keys (window and terminal): space takes the picture (after the timer, if set), t
            takes it after a countdown, a second press stops the countdown; then enter or u keeps
            it and r retakes. q or Esc cancel, as does closing the window. In the window, m
            mirrors the preview, and the menus choose another camera, another size and the
            camera's controls. In the terminal, up and down (or [ and ]) choose a camera control,
            left and right (or - and +) change it; it needs a terminal on stdin and stderr.
            """)

    static let devices = CommandSpec(
        name: "devices", abstract: "List the cameras, with their by-id names and access.",
        usage: ["camroll devices [--json]"], overview: "The cameras of this machine (metadata-only nodes are left out).",
        sections: [])

    static let formats = CommandSpec(
        name: "formats", abstract: "Formats, sizes and frame rates of a camera.",
        usage: ["camroll formats [-d <dev>] [--json]"], overview: "The formats, sizes and frame rates a camera offers.",
        sections: [("OPTIONS", [camera])])

    static let controls = CommandSpec(
        name: "controls", abstract: "Camera controls, their ranges and values.",
        usage: ["camroll controls [-d <dev>] [--json]"], overview: "A camera's controls, their ranges and current values.",
        sections: [("OPTIONS", [camera])])

    static let check = CommandSpec(
        name: "check", abstract: "Can this user open the camera? If not, why, and the fix.",
        usage: ["camroll check [-d <dev>]"], overview: "Whether this user can open the camera and stream from it.",
        sections: [("OPTIONS", [camera])],
        discussion: """
            Exits 0 when the camera can be used, 77 when permission is denied (and prints the fix),
            66 when there is no such camera, 69 when it cannot stream.
            """)

    static let list = CommandSpec(
        name: "list", abstract: "Runs, newest first; or one run's saves.",
        usage: ["camroll list [--run <id>] [--limit <n> | --all] [--utc] [--bytes] [--json | --csv]"],
        overview: "The runs in the catalog, newest first: when, status, device, files saved, their size, MB/s (the bytes saved over the saving time) and the first file; with --run, that run's saves.",
        sections: [("OPTIONS", [
            OptionSpec(names: ["--run"], value: "<id>", help: "List this run's saves instead of the runs, frame by frame in the order saved.", kind: .runID),
            OptionSpec(names: ["--limit"], value: "<n>", help: "At most this many rows (the newest runs, the first saves).", kind: .text),
            OptionSpec(names: ["--all"], help: "Every run. (default: the newest that fit the screen; --json and --csv list them all)"),
            OptionSpec(names: ["--utc"], help: "Times in UTC as the catalog keeps them, not local time (--json and --csv always)."),
            OptionSpec(names: ["--bytes"], help: "Sizes in bytes, not kB/MB/GB (--json and --csv always)."),
            OptionSpec(names: ["--csv"], help: "Comma-separated values, with a header line."),
            database,
        ])],
        discussion: """
            The table fits the terminal (COLUMNS and LINES where set; 80x24 when stdout is not a
            terminal): the first file's path is shortened from the left, with "…".
            """)

    static let show = CommandSpec(
        name: "show", abstract: "One run or capture in full, with its thumbnail.",
        usage: ["camroll show <run-id> | last [--json]", "camroll show --capture <id> | last [--json]"],
        overview: "One run (or one capture) in full: its row, its captures, its saves by status, and its picture on a terminal.",
        sections: [("OPTIONS", [
            OptionSpec(names: ["--capture"], value: "<id>", help: "Show this capture and its run; 'last' for the newest.", kind: .captureID),
            OptionSpec(names: ["--full"], help: "Draw the saved file itself, not the catalog's thumbnail."),
            previewMode,
            database,
        ])],
        arguments: [ArgumentSpec(name: "<run-id>", help: "The run to show; 'last' for the newest.", kind: .runID)])

    static let verify = CommandSpec(
        name: "verify", abstract: "Re-read saved files; report ok/corrupt/missing/aliased.",
        usage: ["camroll verify [--run <id> | <path>...] [--repair] [--jobs <n>] [--json]"],
        overview: "Checks the catalog, then reads every saved file back past the page cache and compares its size and XXH3-128 with the catalog.",
        sections: [("OPTIONS", [
            OptionSpec(names: ["--run"], value: "<id>", help: "Only this run's saves.", kind: .runID),
            OptionSpec(names: ["--repair"],
                       help: "After a crash: record files a killed run saved but did not record, remove its temporary files, finish a stopped delete, mark missing and corrupt files. Never deletes a user's file. Exits 1 when any saved data was found lost."),
            OptionSpec(names: ["--jobs"], value: "<n>",
                       help: "Files read at once, 1 to 64: a device that works in parallel read at its real rate. (default: 1)", kind: .text),
            database,
        ])],
        arguments: [ArgumentSpec(name: "<path>...", help: "Only these files; each must be in the catalog.", kind: .file)],
        discussion: """
            Exits 0 when all are intact, 1 when any is corrupt, missing, not a regular file, holds
            another copy's content (detectable with snap --stamp), or a path given is not in the
            catalog; 65 when the catalog itself is damaged. Reading commands open the catalog
            read-only. Like f3read it also counts the data: ok, lost (missing), corrupted and
            overwritten; files holding parts of later stamped saves of their run (a fake-capacity
            device wrapping around) give the device's real capacity.
            """)

    static let delete = CommandSpec(
        name: "delete", abstract: "Delete files and mark their rows, together.",
        usage: ["camroll delete --save <id> | --capture <id> | --run <id> [--force] [--dry-run]"],
        overview: "Deletes saved files and marks their rows deleted, in batches, so that any stop leaves catalog and disk in agreement.",
        sections: [("OPTIONS", [
            OptionSpec(names: ["--save"], value: "<id>", help: "Delete this save's file.", kind: .saveID),
            OptionSpec(names: ["--capture"], value: "<id>", help: "Delete every file of this capture.", kind: .captureID),
            OptionSpec(names: ["--run"], value: "<id>", help: "Delete every file of this run.", kind: .runID),
            OptionSpec(names: ["--force"], help: "Delete files even when they no longer match their recorded content."),
            OptionSpec(names: ["--dry-run"],
                       help: "List the files that would be deleted (and those that would be kept, and why); delete nothing, change no row."),
            database,
        ])],
        discussion: """
            Ctrl-C finishes the current batch and reports; after SIGKILL, 'camroll verify --repair'
            finishes it. A file that is not a regular file, or whose path a later save owns, is kept.
            """)

    static let stats = CommandSpec(
        name: "stats", abstract: "Throughput, latency percentiles and histogram.",
        usage: ["camroll stats [--run <id> | --all] [--plot <file.svg|file.png>] [--json]"],
        overview: "Of the newest run that saved anything (or --run, or --all runs): saves/s and MB/s (the bytes saved over each run's saving time: writing, naming and recording its files, not capturing or pausing; the figures of snap's summary), save latency min/p50/p95/p99/max and a histogram (its counts on a log scale), and the throughput of the run (the newest, or --run) over its time. Every save a run made counts, whatever became of its file since.",
        sections: [("OPTIONS", [
            OptionSpec(names: ["--run"], value: "<id>", help: "This run. (default: the newest run with saves)", kind: .runID),
            OptionSpec(names: ["--all"], help: "Every run in the catalog together: their saves' latencies and their saving times added up."),
            OptionSpec(names: ["--plot"], value: "<file.svg|file.png>",
                       help: "Also write the run's charts, as SVG or (with librsvg) PNG: save latency over time, throughput over time, the latency histogram.",
                       kind: .file),
            database,
        ])])

    static let help = CommandSpec(
        name: "help", abstract: "Show help for a command.", usage: ["camroll help [<command>]"],
        overview: "Shows the help of a command.", sections: [],
        arguments: [ArgumentSpec(name: "<command>", help: "The command.", kind: .command)])

    static let commands: [CommandSpec] = [snap, pick, devices, formats, controls, check, list, show, verify, delete, stats, help]

    /// `commands`' names, without making their specs: a process runs one command, and telling
    /// its name from the others' made all twelve tables of options, code run once for nothing
    /// (under qemu's translation, `make bench-startup`, the blocks counted in docs/benchmarks.md).
    /// A test checks that these are `commands`' names.
    static let names = ["snap", "pick", "devices", "formats", "controls", "check", "list", "show", "verify", "delete", "stats", "help"]

    static func command(_ name: String) -> CommandSpec? { commands.first { $0.name == name } }

    /// The parsers' `default:` for an option the table has and they do not handle: a bug,
    /// caught by the test that feeds every table option to its parser.
    static func unhandled(_ option: OptionSpec, in command: String) -> CamrollError {
        CamrollError(.failure, "internal error: '\(command)' does not handle its option '\(option.id)'")
    }
}
