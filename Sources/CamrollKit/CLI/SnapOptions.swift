/// Where frames come from, as given to `-d/--device`.
public enum DeviceChoice: Sendable, Equatable {
    /// No `-d`: the first capture-capable camera.
    case firstCamera
    case pattern
    case file(String)
    /// `http://…`, `https://…`: downloaded once, then served from the cache.
    case url(String)
    /// `/dev/videoN`, `N`, or a `/dev/v4l/by-id` name.
    case camera(String)

    init(parsing text: String) throws {
        if text == "pattern" {
            self = .pattern
        } else if text.lowercased().hasPrefix("http://") || text.lowercased().hasPrefix("https://") {
            guard text.split(separator: "/", omittingEmptySubsequences: true).count >= 2 else {
                throw CamrollError.usage("'\(text)' is not a URL with a host, e.g. https://example.org/photo.jpg")
            }
            self = .url(text)
        } else if let separator = text.firstRange(of: "://"), !text[..<separator.lowerBound].isEmpty,
                  text[..<separator.lowerBound].allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) }) {
            // ftp://, gopher://, rtsp://…: a scheme, not a by-id name.
            throw CamrollError.usage(
                "unsupported scheme '\(text[..<separator.lowerBound])' in '\(WebAddress.withoutPassword(text))': camroll fetches only http:// and https://",
                hint: "Give an http(s) URL, a camera (/dev/videoN, N, a /dev/v4l/by-id name), 'pattern' or file:PATH.")
        } else if text.hasPrefix("file:") {
            let path = String(text.dropFirst(5))
            guard !path.isEmpty else { throw CamrollError.usage("'file:' needs a path, e.g. file:photo.jpg") }
            self = .file(path)
        } else if let number = Int(text), number >= 0 {
            self = .camera("/dev/video\(number)")
        } else if text.isEmpty {
            throw CamrollError.usage("the device name is empty")
        } else if text.hasPrefix("/") {
            self = .camera(text)
        } else {
            // A bare by-id name, as `camroll devices` prints it.
            self = .camera("/dev/v4l/by-id/" + text)
        }
    }
}

/// Everything `camroll snap` was asked, validated before any device or file is opened.
public struct SnapOptions: Sendable {
    public var device: DeviceChoice = .firstCamera
    public var count = 1
    public var output: String?
    public var resolution: Resolution?
    public var format = "auto"
    public var fps: Double?
    public var quality = 90
    /// `-q` was given (it makes a JPEG file re-encoded, not copied).
    public var qualityGiven = false
    public var crop: CropRequest?
    /// `--encoding`; nil: from the output name (`.png`), else JPEG.
    public var encoding: PictureEncoding?
    /// `--subsampling`; nil: the source's (`ImagePipeline.subsampling(own:)`).
    public var subsampling: ChromaSubsampling?
    /// `--rotate`, `--flip`, `--greyscale`.
    public var turn = ImageTurn()
    public var exif = true
    /// `--strip-gps`: the location dropped, the rest of the EXIF kept.
    public var stripGPS = false
    /// `--offline`: a URL source only from the cache.
    public var offline = false
    /// `--user-from FILE|env:NAME`: a URL's `user:password`, kept out of the arguments.
    public var userFrom: String?
    /// `--skip N`, or `--skip auto` (the default): see `WarmUp`.
    public var warmUp = WarmUp.untilSettled
    public var frames = 1
    public var intervalMicroseconds = 0
    public var timeoutMicroseconds = 5_000_000
    /// `--timeout` was given: for a URL, the whole download's time limit (else a minute).
    public var timeoutGiven = false
    public var fsync = false
    public var stamp = false
    /// `--fill`: save until the file system is full (`count` is then an upper bound).
    public var fill = false
    /// Whether `-n` was given (with `--fill`, a bound the user chose).
    public var countGiven = false
    /// `--jobs`: writers saving at once.
    public var jobs = 1
    /// `--direct`: write with O_DIRECT, past the page cache.
    public var direct = false
    public var overwrite = false
    /// `--stats`: the storage figures in the summary even for one save.
    public var stats = false
    public var maxBytes: Int?
    /// The largest picture decoded (`--max-pixels`), against files that claim absurd sizes.
    public var maxPixels = JPEGDecoder.defaultMaxPixels
    /// Box the capture's thumbnail fits in; nil: none (`--thumbnail none`).
    public var thumbnail: Resolution? = Thumbnail.defaultBox
    public var database: String?
    public var controls: [(name: String, value: String)] = []
    /// `pick --preview-mode`: nil draws the way the terminal supports best.
    public var previewMode: PreviewMode?
    /// `pick --window` / `--terminal`; nil: a window where there is a display.
    public var pickerFrontEnd: PickerFrontEnd?
    /// `pick --timer S`: the shutter waits this many seconds (0: none).
    public var timerSeconds = 0
    /// `pick --mirror`: the preview mirrored from the start.
    public var mirror = false
    /// A service run (`--every` and what goes with it; see `ServicePacing`).
    public var everyMicroseconds: Int?
    public var aligned = true
    public var forMicroseconds: Int?
    /// `--until`, wall clock, µs since the epoch.
    public var untilMicroseconds: Int?
    /// `--reconnect`: how long an unplugged camera is waited for; nil: forever with --every,
    /// not at all without it.
    public var reconnectMicroseconds: Int?
    public var retention = RetentionPolicy()
    public var latest: String?
    public var hook: [String]?
    public var hookTimeoutMicroseconds = 60_000_000
    /// `--frames` was given (with --every, the run ends after that many photos; else never).
    public var framesGiven = false
    public var global = GlobalOptions()
    /// `--timestamp`, `--title` and the banner's looks (SnapOptions+Banner).
    public var banner = BannerRequest()

    public var isService: Bool { everyMicroseconds != nil }

    public static let maxCount = 1_000_000_000
    public static let defaultPatternResolution = Resolution(width: 1280, height: 720)

    /// Parses snap's options, or pick's (snap's and its own).
    static func parse(_ arguments: [String], command: CommandSpec = CommandTable.snap) throws -> SnapOptions {
        var options = SnapOptions()
        let arguments = command.name == "snap" ? try ServiceConfig.expand(arguments, command: command) : arguments
        var scanner = ArgumentScanner(arguments, command: command.name)
        var countGiven = false
        while let parsed = try scanner.next(in: command) {
            guard case .option(let option, let given, let typed) = parsed else {
                if case .positional(let word) = parsed {
                    // `camroll --db x.db list`: the options were taken as snap's, the command came too late.
                    if CommandLineTool.subcommands.contains(word) && word != command.name {
                        throw CamrollError.usage("'\(word)' is a command: it comes before the options",
                                                 hint: "Put it first: camroll \(word) [options]; see 'camroll \(word) --help'.")
                    }
                    throw scanner.usageError("unexpected argument '\(word)'")
                }
                continue
            }
            if try options.global.apply(option, value: given, scanner) { continue }
            let name = typed
            let value = given ?? ""
            switch option.id {
            case "--help": throw HelpRequest(command: command.name)
            case "--device": options.device = try DeviceChoice(parsing: value)
            case "--count":
                options.count = try ValueParser.integer(value, option: name, range: 1...maxCount)
                countGiven = true
            case "--output": options.output = value
            case "--resolution":
                guard let resolution = Resolution(parsing: value) else {
                    throw scanner.usageError("invalid resolution '\(value)': expected WIDTHxHEIGHT, e.g. 1280x720")
                }
                guard resolution.isWithinLimits else {
                    throw scanner.usageError("invalid resolution '\(value)': width and height must be from 1 to \(Resolution.largestSide)")
                }
                options.resolution = resolution
            case "--format":
                let text = value.lowercased()
                guard text == "auto" || PixelFormatName.parse(text) != nil else {
                    throw scanner.usageError(
                        "invalid format '\(text)': expected auto, mjpeg, yuyv or a fourcc such as NV12")
                }
                options.format = text
            case "--fps":
                // V4L2 takes it as a fraction, here thousandths of a frame a second (V4L2Camera.timePerFrame).
                guard let fps = Double(value), fps >= 0.001, fps <= 1000 else {
                    throw scanner.usageError("invalid value '\(value)' for '--fps': expected a rate from 0.001 to 1000, e.g. 30")
                }
                options.fps = fps
            case "--quality":
                options.quality = try ValueParser.integer(value, option: name, range: 1...100)
                options.qualityGiven = true
            case "--crop":
                guard let crop = CropRequest(parsing: value) else {
                    throw scanner.usageError("invalid value '\(value)' for '--crop': expected WxH, WxH+X+Y or an aspect ratio such as 1:1")
                }
                options.crop = crop
            case "--rotate":
                guard let degrees = Int(value), [0, 90, 180, 270].contains(degrees) else {
                    throw scanner.usageError("invalid value '\(value)' for '--rotate': expected 90, 180 or 270 (degrees clockwise)")
                }
                options.turn.rotation = degrees
            case "--flip":
                guard let flip = ImageTurn.Flip(rawValue: value.lowercased()) else {
                    throw scanner.usageError("invalid value '\(value)' for '--flip': expected h (left-right) or v (top-bottom)")
                }
                options.turn.flip = flip
            case "--greyscale": options.turn.greyscale = true
            case "--subsampling":
                guard let subsampling = ChromaSubsampling(parsing: value) else {
                    throw scanner.usageError("invalid value '\(value)' for '--subsampling': expected 444, 422 or 420")
                }
                options.subsampling = subsampling
            case "--encoding":
                guard let encoding = PictureEncoding(rawValue: value.lowercased()) else {
                    throw scanner.usageError("invalid value '\(value)' for '--encoding': expected png or jpeg (camroll writes no other format)")
                }
                options.encoding = encoding
            case "--no-exif": options.exif = false
            case "--strip-gps": options.stripGPS = true
            case "--offline": options.offline = true
            case "--user-from": options.userFrom = value
            case "--skip":
                if value == "auto" {
                    options.warmUp = .untilSettled
                } else if Int(value.filter { $0 != "_" }) == nil {
                    throw scanner.usageError("invalid value '\(value)' for '--skip': expected a number of frames or 'auto'")
                } else {
                    options.warmUp = .frames(try ValueParser.integer(value, option: name, range: 0...10_000))
                }
            case "--frames":
                options.frames = try ValueParser.integer(value, option: name, range: 1...maxCount)
                options.framesGiven = true
            case "--config": break  // read by ServiceConfig.expand, before
            case "--every":
                let period = try ValueParser.duration(value, option: name)
                guard period >= 1_000 else {
                    throw scanner.usageError("invalid value '\(value)' for '--every': the period must be at least 1ms, e.g. 500ms, 10s, 1m")
                }
                options.everyMicroseconds = period
            case "--align":
                switch value.lowercased() {
                case "clock": options.aligned = true
                case "none": options.aligned = false
                default: throw scanner.usageError("invalid value '\(value)' for '--align': expected clock or none")
                }
            case "--for":
                let length = try ValueParser.duration(value, option: name)
                guard length > 0 else { throw scanner.usageError("'--for' must be above 0") }
                options.forMicroseconds = length
            case "--until": options.untilMicroseconds = try ValueParser.wallClock(value, option: name)
            case "--reconnect": options.reconnectMicroseconds = try ValueParser.duration(value, option: name)
            case "--keep-last": options.retention.keepLast = try ValueParser.integer(value, option: name, range: 1...maxCount)
            case "--keep-for":
                let length = try ValueParser.duration(value, option: name)
                guard length > 0 else { throw scanner.usageError("'--keep-for' must be above 0") }
                options.retention.keepForMicroseconds = length
            case "--keep-bytes": options.retention.keepBytes = try ValueParser.size(value, option: name)
            case "--latest": options.latest = try ValueParser.path(value, option: name)
            case "--exec":
                guard !value.isEmpty, value != ";" else { throw scanner.usageError("'--exec' needs a command, e.g. --exec upload {path} \\;") }
                options.hook = [value] + (try scanner.values(until: ";", for: name))
            case "--exec-timeout":
                options.hookTimeoutMicroseconds = try ValueParser.duration(value, option: name)
                guard options.hookTimeoutMicroseconds > 0 else { throw scanner.usageError("'--exec-timeout' must be above 0") }
            case "--interval": options.intervalMicroseconds = try ValueParser.duration(value, option: name)
            case "--timeout":
                options.timeoutMicroseconds = try ValueParser.duration(value, option: name)
                options.timeoutGiven = true
                guard options.timeoutMicroseconds > 0 else { throw scanner.usageError("'--timeout' must be above 0") }
            case "--fsync": options.fsync = true
            case "--stamp": options.stamp = true
            case "--fill": options.fill = true
            case "--direct": options.direct = true
            case "--jobs": options.jobs = try ValueParser.integer(value, option: name, range: 1...64)
            case "--overwrite": options.overwrite = true
            case "--stats": options.stats = true
            case "--max-bytes": options.maxBytes = try ValueParser.size(value, option: name)
            case "--max-pixels": options.maxPixels = try ValueParser.integer(value, option: name, range: 1...100_000_000_000)
            case "--thumbnail":
                if ["none", "off", "no"].contains(value.lowercased()) {
                    options.thumbnail = nil
                } else {
                    guard let box = Resolution(parsing: value), (8...1024).contains(box.width), (8...1024).contains(box.height) else {
                        throw scanner.usageError("invalid value '\(value)' for '--thumbnail': expected WxH from 8x8 to 1024x1024, or none")
                    }
                    options.thumbnail = box
                }
            case "--db": options.database = try ValueParser.path(value, option: name)
            case "--set":
                let parts = value.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, !parts[0].isEmpty else {
                    throw scanner.usageError("invalid value '\(value)' for '--set': expected NAME=VALUE, e.g. brightness=128")
                }
                options.controls.append((String(parts[0]), String(parts[1])))
            case "--preview-mode": options.previewMode = try ValueParser.previewMode(value, scanner)
            case "--window", "--terminal":
                let chosen: PickerFrontEnd = option.id == "--window" ? .window : .terminal
                if let earlier = options.pickerFrontEnd, earlier != chosen {
                    throw CamrollError.usage("'--window' and '--terminal' cannot both be given")
                }
                options.pickerFrontEnd = chosen
            case "--timer": options.timerSeconds = try ValueParser.integer(value, option: name, range: 0...3600)
            case "--mirror": options.mirror = true
            case _ where BannerRequest.optionIDs.contains(option.id):
                try options.banner.apply(option.id, value: given, typed: name, scanner)
            default:
                throw CommandTable.unhandled(option, in: command.name)
            }
        }
        try options.global.validate(scanner)
        if options.isService && !options.framesGiven {
            // No end but --for, --until, a signal: as many frames as there can be.
            options.frames = maxCount / options.count
        }
        if options.fill {
            // Every file's bytes unique, so that verify can tell a file overwritten by a later
            // one (a fake-capacity card wrapping around) from one merely damaged.
            options.stamp = true
            if !countGiven { options.count = maxCount / options.frames }
            options.countGiven = countGiven
        }
        try options.validate()
        try options.banner.validate()
        return options
    }

    /// `-o -`: each frame's JPEG goes to standard output, one after another, and no file is
    /// saved (as fswebcam and ffmpeg take `-`).
    public var toStandardOutput: Bool { output == OutputTemplate.standardOutput }

    /// What the photos are saved as: `--encoding`, else PNG for an output name ending in `.png`.
    public var outputEncoding: PictureEncoding {
        if let encoding { return encoding }
        guard let output, !toStandardOutput else { return .jpeg }
        return output.lowercased().hasSuffix(".png") ? .png : .jpeg
    }

    /// A file or a URL: a picture that exists, not a camera.
    var isPicture: Bool {
        switch device {
        case .file, .url: true
        default: false
        }
    }

    /// What `-r`, `--crop` and `-q` ask done to the picture's pixels.
    var edits: ImageEdits {
        ImageEdits(fit: isPicture ? resolution : nil, crop: crop, reencode: isPicture && qualityGiven, turn: turn)
    }

    func validateService() throws {
        let serviceOnly: [(Bool, String)] = [
            (forMicroseconds != nil, "--for"), (untilMicroseconds != nil, "--until"), (!aligned, "--align"),
            (reconnectMicroseconds != nil, "--reconnect"), (retention.keepLast != nil, "--keep-last"),
            (retention.keepForMicroseconds != nil, "--keep-for"), (retention.keepBytes != nil, "--keep-bytes"),
            (latest != nil, "--latest"), (hook != nil, "--exec"), (hookTimeoutMicroseconds != 60_000_000, "--exec-timeout"),
        ]
        if !isService, let (_, option) = serviceOnly.first(where: { $0.0 }) {
            throw CamrollError.usage(
                "'\(option)' belongs to a run on a clock: give --every too",
                hint: "e.g. camroll snap --every 10s \(option) …; --frames K --interval D takes K photos with pauses between them.")
        }
        guard isService else { return }
        let conflicts = [(intervalMicroseconds > 0, "--interval"), (fill, "--fill"), (toStandardOutput, "-o -"), (jobs > 1, "--jobs")]
        if let (_, option) = conflicts.first(where: { $0.0 }) {
            throw CamrollError.usage("'\(option)' cannot be used with --every",
                                     hint: "--every takes a photo at each slot of the clock; --interval is a pause after each photo.")
        }
        if case .url = device { throw CamrollError.usage("--every takes photos from a camera or the pattern, not from a URL") }
        if let untilMicroseconds, untilMicroseconds <= realtimeMicroseconds() {
            throw CamrollError.usage("'--until' is in the past", hint: "Give a time to come, e.g. --until 18:00 or --until 2030-01-31T18:00.")
        }
    }

    func validate() throws {
        try validateService()
        let (total, overflow) = count.multipliedReportingOverflow(by: frames)
        guard !overflow, total <= Self.maxCount else {
            throw CamrollError.usage("--count × --frames must be at most \(Self.maxCount)")
        }
        if device == .pattern {
            if let resolution, resolution.width % 2 != 0 {
                throw CamrollError.usage(
                    "invalid resolution '\(resolution)' for the test pattern: the width must be even (YUYV)")
            }
            if format != "auto" && ![PixelFormat.yuyv, .mjpeg].contains(PixelFormatName.parse(format)) {
                throw CamrollError.usage("the test pattern is YUYV or MJPEG; '--format \(format)' cannot be given with it")
            }
        }
        if isPicture && format != "auto" {
            throw CamrollError.usage("'--format' chooses a camera's pixel format; a file or URL is read as it is")
        }
        if outputEncoding == .png {
            if maxBytes != nil {
                throw CamrollError.usage(
                    "'--max-bytes' cannot be used with PNG output: a PNG is lossless, there is no quality to lower",
                    hint: "Save a JPEG (-o NAME.jpg or --encoding jpeg) to fit a size, or make the picture smaller with -r.")
            }
            if let subsampling {
                throw CamrollError.usage(
                    "'--subsampling \(subsampling.option)' is for JPEG output: a PNG keeps every pixel's colour",
                    hint: "Save a JPEG (-o NAME.jpg or --encoding jpeg) to choose its subsampling.")
            }
            if stamp {
                throw CamrollError.usage("'--stamp' marks JPEG copies with a comment segment; a PNG has none",
                                         hint: "Save a JPEG (-o NAME.jpg) to stamp the copies.")
            }
        }
        if offline && !{ if case .url = device { true } else { false } }() {
            throw CamrollError.usage("'--offline' applies to a URL source (-d https://…)")
        }
        if userFrom != nil {
            guard case .url(let url) = device else {
                throw CamrollError.usage("'--user-from' applies to a URL source (-d https://…)")
            }
            if WebAddress.withoutPassword(url) != url || WebAddress.hasUser(url) {
                throw CamrollError.usage("'--user-from' gives the user and password: the URL must not carry them too")
            }
        }
        if toStandardOutput {
            // --fill sets --stamp and -n, so it is named before them.
            let conflicts = [(fill, "--fill"), (count > 1, "-n"), (jobs > 1, "--jobs"), (direct, "--direct"), (fsync, "--fsync"),
                             (overwrite, "--overwrite"), (stamp, "--stamp"), (global.json, "--json")]
            if let (_, option) = conflicts.first(where: { $0.0 }) {
                throw CamrollError.usage(
                    "'\(option)' cannot be used with -o - (standard output)",
                    hint: "-o - sends each frame's JPEG once to standard output, and nothing else goes there; "
                        + "--frames K sends K of them, one after another.")
            }
        }
        let isCamera = device == .firstCamera || { if case .camera = device { true } else { false } }()
        if !controls.isEmpty && !isCamera {
            throw CamrollError.usage("'--set' controls a camera; '\(device == .pattern ? "pattern" : "file:")' has no controls")
        }
    }
}

/// Where `camroll pick` shows the camera.
public enum PickerFrontEnd: Sendable, Equatable {
    case window, terminal
}

/// `-f` names: friendly ones (`mjpeg`, `yuyv`) or any fourcc.
enum PixelFormatName {
    static func parse(_ text: String) -> PixelFormat? {
        switch text.lowercased() {
        case "mjpeg", "mjpg": return .mjpeg
        case "jpeg": return .jpeg
        case "yuyv", "yuy2": return .yuyv
        default:
            let padded = text.uppercased().padded(to: 4)
            return text.count >= 3 && text.count <= 4 ? PixelFormat(code: padded) : nil
        }
    }
}

/// Thrown by a parser when the user asked for help: not an error, exit 0.
struct HelpRequest: Error {
    var command: String?
}
