import FoundationEssentials
import Glibc

/// `camroll snap`: opens the source and the catalog, runs the batch, maps the outcome to an
/// exit status.
struct SnapCommand {
    let options: SnapOptions
    let environment: [String: String]
    let arguments: [String]

    func run() throws -> ExitCode {
        // First, so that a Ctrl-C while the camera or the catalog opens is a cancellation too.
        let cancellation = SignalWatcher.beginCancellable()
        JPEGDecoder.maxPixels = options.maxPixels

        let console = Console(colorMode: options.global.color, environment: environment)
        if options.toStandardOutput && console.stdoutIsTerminal {
            throw CamrollError.usage(
                "-o - sends the JPEG to standard output, which is a terminal here",
                hint: "Redirect it: camroll -o - > photo.jpg, or camroll -o - | display")
        }
        let template = try outputTemplate(console: console)
        // Pango loaded and the font checked before the camera opens: a missing library or font
        // costs no camera time.
        let banner = try bannerPainter()

        // A URL source needs the catalog (its `sources` row) before anything else. For a camera,
        // the catalog opens on another thread meanwhile: opening, negotiating and the warm-up
        // frames are mostly waiting on the device.
        var catalog: Catalog?
        var pendingCatalog: Pending<Catalog>?
        switch options.device {
        case .url: catalog = try openCatalog(for: template)
        case .camera, .firstCamera: pendingCatalog = Pending { [self] in try openCatalog(for: template) }
        case .pattern, .file: break
        }

        Trace.mark("options parsed")
        var opened: FrameSource?
        do {
            opened = try openSource(cancellation: cancellation, catalog: catalog, console: console)
        } catch {
            // The camera's error is the one to report; the catalog is left to finish opening
            // (a migration is never cut short by the exit).
            _ = try? pendingCatalog?.value()
            guard error is CancelledWhileWaiting else { throw error }
            // Ctrl-C while the camera warmed up or the picture downloaded: nothing was saved,
            // no run was begun.
            if !options.global.quiet {
                let what = { if case .url = options.device { "the download ended" } else { "the first frame" } }()
                console.err("cancelled before \(what)\n")
            }
            return ExitCode(cancelledBy: cancellation.signal)
        }
        Trace.mark("source opened")
        guard opened != nil else { throw CamrollError(.failure, "internal error: no source") }
        if let camera = opened as? V4L2Camera, !options.global.quiet {
            for adjustment in camera.adjustments { console.warning(adjustment) }
            if camera.warmUpSettled == false {
                console.warning(
                    "the picture from \(camera.deviceName) was still changing after "
                        + "\(Units.duration(microseconds: camera.warmUpMicroseconds)) (\(camera.warmUpFrames + 1) frames); "
                        + "taken as it was (a flickering light, a moving scene? --skip N takes a fixed number of frames)")
            }
        }
        var source: FrameSource = opened!
        if options.isService, opened is V4L2Camera {
            // A service outlives unplugs: the same camera is waited for and reopened as it was.
            // The wrapper holds the only reference, so that an unplugged camera is closed at
            // once (its driver is freed only when no one holds it).
            source = Self.reconnecting(&opened, request: cameraRequest, cancellation: cancellation,
                                       boundMicroseconds: options.reconnectMicroseconds)
        }
        // Called on the catalog's thread (BatchSaver): a camera's catalog may still be opening
        // on its own; a pattern's or a file's opens there, beside the encoding of the first frame.
        let opening: () throws -> Catalog = { [self, catalog, pendingCatalog] in try catalog ?? pendingCatalog?.value() ?? openCatalog(for: template) }
        return try save(from: source, catalog: opening, template: template, console: console, cancellation: cancellation, banner: banner)
    }

    /// The `--timestamp`/`--title` banner's painter, or nil when none is asked for.
    func bannerPainter() throws -> BannerPainter? {
        options.banner.isRequested ? try BannerPainter(options.banner) : nil
    }

    /// The output template, checked: as the user typed it for messages, made absolute for use; a
    /// name that would call the JPEG another format is warned of on `console`.
    func outputTemplate(console: Console) throws -> OutputTemplate {
        if options.toStandardOutput { return try OutputTemplate(OutputTemplate.standardOutput) }
        let templateText = try options.output.map { try UserDirectories.expandingTilde($0, environment: environment) }
            ?? OutputTemplate.defaultText(environment: environment)
        _ = try OutputTemplate(templateText)  // reports a bad template as the user typed it
        let template = try OutputTemplate(try AbsolutePath.resolve(templateText))
        let encoding = options.outputEncoding
        if let ext = template.otherPictureExtension, !options.global.quiet, !(encoding == .png && ext.lowercased() == "png") {
            let name = encoding == .png ? "png" : "jpg"
            console.warning("the photos are \(encoding == .png ? "PNG" : "JPEG") files: names ending in '.\(ext)' will mislead (name them .\(name))")
        } else if encoding == .png, template.otherPictureExtension == nil, !options.global.quiet,
                  !(options.output ?? "").lowercased().hasSuffix(".png"), !options.toStandardOutput {
            console.warning("the photos are PNG files: name them .png")
        }
        if let path = template.fixedPath, Directories.isDirectory(path) {
            // As a name ending in '/' is (OutputTemplate.init); saving would only fail later.
            throw CamrollError.usage("output template '\(templateText)' names a directory, not a file",
                hint: "Add a file name, e.g. '\(templateText)/{seq}.jpg'.")
        }
        // {frame} names each frame's one save (-n 1); copies of a frame need {seq} or {uuid}.
        let named = options.count == 1 ? template.namesEachFrame : template.namesEachSave
        if options.count * options.frames > 1 && !named && !options.overwrite {
            let what = template.namesEachFrame ? "every copy of a frame" : "every save"
            throw CamrollError.usage(
                "output template '\(templateText)' gives \(what) the same name",
                hint: "Put {seq} or {uuid} in it, e.g. -o '\(templateText.replacing(".jpg", with: ""))_{seq}.jpg'.")
        }
        return template
    }

    /// Encodes the source's frames and saves them as asked, with progress and catalog rows; the
    /// exit status. `source` may be a frame already taken (pick's shutter). `catalog` opens the
    /// catalog, or waits for it: it is called on the catalog's thread, once. `reporter`, if
    /// given, is told of the saves instead of the one the options choose (pick's result).
    func save(
        from source: FrameSource, catalog: @escaping () throws -> Catalog, template: OutputTemplate, console: Console,
        cancellation: Cancellation, reporter chosen: ProgressReporter? = nil, banner: BannerPainter? = nil
    ) throws -> ExitCode {
        let pipeline = try ImagePipeline(
            quality: options.quality, maxBytes: options.maxBytes, thumbnailBox: options.thumbnail, edits: options.edits,
            origin: options.exif ? source.origin : nil, stripGPS: options.stripGPS, encoding: options.outputEncoding,
            subsampling: options.subsampling)
        pipeline.banner = try banner ?? bannerPainter()

        if options.fill && !options.countGiven && !options.global.quiet, let warning = Self.fillsTheRootFileSystem(template) {
            console.warning(warning)
        }
        let writer = AtomicFileWriter(
            existing: options.overwrite ? .replace : options.output == nil ? .keepAndNumber : .refuse,
            sync: options.fsync, direct: options.direct)
        if !options.toStandardOutput { writer.tree = OutputTree(root: template.fixedDirectory) }
        if options.direct && !options.global.quiet {
            // Once per directory, whichever of the jobs finds out.
            let warned = Locked<Set<String>>([])
            writer.directRefused = { [console] message in
                if warned.withLock({ $0.insert(message).inserted }) { console.warning(message) }
            }
        }
        let pacing = options.isService ? servicePacing(template: template, console: console, cancellation: cancellation, source: source) : nil
        let saver = BatchSaver(
            source: source, pipeline: pipeline,
            writer: writer,
            catalog: catalog, reporter: chosen ?? reporter(console, source: source), cancellation: cancellation,
            plan: BatchPlan(
                count: options.count, frames: options.frames,
                intervalMicroseconds: options.intervalMicroseconds, stamp: options.stamp, fill: options.fill, jobs: options.jobs,
                template: template, seqWidth: options.isService && !options.framesGiven ? 6 : nil))
        saver.pacing = pacing
        let (summary, failure) = try saver.run(command: commandText())
        if let camera = (source as? ReconnectingCamera)?.current ?? source as? V4L2Camera, !options.global.quiet {
            if camera.droppedFrames > 0 {
                console.warning("\(camera.droppedFrames) broken frame(s) from \(camera.deviceName) were dropped")
            }
            if camera.lostBuffers > 0 {
                console.warning("\(camera.deviceName) refused \(camera.lostBuffers) buffer(s) back; streaming went on with fewer")
            }
        }
        if let failure {
            console.error(failure.message, hint: failure.hint)
            if options.global.json { console.outRaw(CommandLineTool.jsonError(failure)) }
            return failure.exitCode
        }
        if summary.status == .cancelled {
            return ExitCode(cancelledBy: cancellation.signal)
        }
        return .success
    }

    /// The camera in `opened`, moved into a `ReconnectingCamera` (`opened` is left nil).
    private static func reconnecting(
        _ opened: inout FrameSource?, request: V4L2Camera.Request, cancellation: Cancellation, boundMicroseconds: Int?
    ) -> FrameSource {
        let camera = opened as! V4L2Camera
        opened = nil
        return ReconnectingCamera(camera: camera, path: camera.deviceName, request: request, cancellation: cancellation,
                                  boundMicroseconds: boundMicroseconds)
    }

    /// A service run's clock and chores (`--every`), its log and systemd's notifications; an
    /// unplugged camera's events go to the same log and the catalog.
    private func servicePacing(template: OutputTemplate, console: Console, cancellation: Cancellation, source: FrameSource) -> ServicePacing {
        let log = ServiceLog(console: console, mode: options.global.json ? .json : options.global.quiet ? .none : .lines)
        let notifier = ServiceNotifier(environment: environment)
        if let problem = notifier.problem, !options.global.quiet { console.warning(problem) }
        var settings = ServicePacing.Settings(periodMicroseconds: options.everyMicroseconds ?? 1_000_000)
        settings.aligned = options.aligned
        settings.forMicroseconds = options.forMicroseconds
        settings.untilMicroseconds = options.untilMicroseconds
        settings.retention = options.retention
        settings.template = template.text
        settings.latest = options.latest
        settings.hook = options.hook
        settings.hookTimeoutMicroseconds = options.hookTimeoutMicroseconds
        let pacing = ServicePacing(settings: settings, cancellation: cancellation, log: log, notifier: notifier)
        if let camera = source as? ReconnectingCamera {
            camera.shouldEnd = { [weak pacing] in pacing?.endReached() ?? false }
            camera.onEvent = { [weak pacing, unowned camera] event in
                guard let pacing else { return }
                switch event {
                case .unplugged(let why):
                    pacing.cameraWasAway = true
                    log.event("unplugged", why + "; waiting for it to come back")
                    pacing.record(.init(.unplugged, detail: why))
                case .waiting:
                    pacing.stillWaiting()
                case .otherCamera(let identity):
                    log.event("unplugged", "another camera is at \(camera.deviceName): \(identity); not taken")
                case .reconnected(let away, let tries):
                    log.event("reconnected", "\(camera.deviceName) is back after \(Units.duration(microseconds: away)) (\(tries) tries)",
                              fields: ["away_s": Double(away) / 1e6])
                    pacing.record(.init(.reconnected, count: tries, detail: "away \(Units.duration(microseconds: away))"))
                }
            }
        }
        return pacing
    }

    /// The catalog; for a fill of the copy-on-write file system the catalog is on (`template`'s),
    /// held by this run alone (`Catalog(exclusive:)`).
    func openCatalog(for template: OutputTemplate? = nil) throws -> Catalog {
        let path = try options.database.map { try UserDirectories.expandingTilde($0, environment: environment) }
            ?? Catalog.defaultPath(environment: environment)
        var exclusive = false
        if options.fill, let template, let absolute = try? AbsolutePath.resolve(path, code: .cannotCreate) {
            let directory = PathText.directory(of: absolute)
            exclusive = Directories.onOneFileSystem(template.fixedDirectory, directory) && Directories.copiesOnWrite(holding: directory)
        }
        let catalog = try Catalog(path: path, exclusive: exclusive)
        Trace.mark("catalog opened")
        return catalog
    }

    /// A warning when an unbounded `--fill` is about to fill the root file system: its directory
    /// is not on a card, stick or disk of its own — most often one that is not mounted (yet),
    /// or a typo in its path, and a full root file system stops much else on the machine.
    static func fillsTheRootFileSystem(_ template: OutputTemplate) -> String? {
        // The fill's directory, or one above it where the template's tokens name directories too.
        let directory = template.fixedDirectory
        guard Directories.mountPoint(holding: directory) == "/" else { return nil }
        var info = statvfs()
        let free = statvfs("/", &info) == 0 ? " (\(Units.bytes(info.availableBytes)) free)" : ""
        return "--fill will fill the root file system\(free): \(directory) is on it, not on a card or disk of its own "
            + "(is it mounted?); Ctrl-C stops the fill, -n bounds it"
    }

    func openSource(cancellation: Cancellation, catalog: Catalog?, console: Console) throws -> FrameSource {
        switch options.device {
        case .url(let url):
            guard let catalog else { throw CamrollError(.failure, "the catalog must be open before a URL is fetched") }
            var fetcher = HTTPFetcher(stallSeconds: max(1, (options.timeoutMicroseconds + 999_999) / 1_000_000))
            if options.timeoutGiven { fetcher.deadlineMilliseconds = max(1, options.timeoutMicroseconds / 1000) }
            fetcher.cancellation = cancellation
            if let source = options.userFrom { fetcher.credentials = try WebAddress.credentials(from: source, environment: environment) }
            // The live line the saving progress uses: redrawn at most ten times a second, cut to
            // the terminal's width.
            let line = console.stderrIsTerminal && !options.global.quiet && !options.global.noProgress && !options.global.json
                ? ProgressLine(console: console, live: true) : nil
            if let line {
                fetcher.progress = { received, expected in
                    line.show {
                        func megabytes(_ bytes: Int) -> String { Format.fixed(Double(bytes) / 1e6, 2) + " MB" }
                        return "downloading \(WebAddress.withoutPassword(url))  "
                            + (expected > 0 ? "\(megabytes(received)) of \(megabytes(expected))" : megabytes(received))
                    }
                }
            }
            let picture = RemotePicture(
                url: url, catalog: catalog, cacheDirectory: try UserDirectories.cache(environment: environment),
                fetcher: fetcher)
            defer { line?.clear() }
            return try picture.open(offline: options.offline)
        case .pattern:
            return TestPattern(
                resolution: options.resolution ?? SnapOptions.defaultPatternResolution,
                format: PixelFormatName.parse(options.format) == .mjpeg ? .mjpeg : .yuyv)
        case .file(let path):
            return try ImageFile(path: path)
        case .camera(let path):
            return try V4L2Camera(path: path, request: cameraRequest, cancellation: cancellation)
        case .firstCamera:
            guard let path = DeviceList.firstCamera() else {
                throw CamrollError(
                    .unavailable, "no camera found",
                    hint: "Use '-d pattern' for the built-in test pattern, or '-d file:PHOTO.jpg' for an image file.")
            }
            return try V4L2Camera(path: path, request: cameraRequest, cancellation: cancellation)
        }
    }

    /// What is asked of a camera. A live preview (`pick`) streams on: all the buffers, and the
    /// MJPEG check only for the frame it keeps.
    var cameraRequest: V4L2Camera.Request {
        V4L2Camera.Request(
            format: options.format, resolution: options.resolution, fps: options.fps,
            warmUp: options.warmUp, timeoutMicroseconds: options.timeoutMicroseconds,
            controls: options.controls, singleFrame: options.frames == 1 && !live, checksEveryFrame: !live)
    }

    /// Frames are taken for a live preview (pick), not straight for saving.
    var live = false

    private func reporter(_ console: Console, source: FrameSource) -> ProgressReporter {
        if options.global.json {
            guard let camera = source as? V4L2Camera else { return JSONProgress(console: console) }
            var warmUp: [String: Any] = ["warm_up_frames": camera.warmUpFrames]
            if let settled = camera.warmUpSettled { warmUp["warm_up_settled"] = settled }
            return JSONProgress(console: console, sourceFields: warmUp)
        }
        if options.global.quiet { return QuietProgress() }
        // A service's photos are logged one a line by its pacing (ServiceLog); the summary as ever.
        if options.isService { return PlainProgress(console: console, showProgress: false, detailed: true) }
        if options.toStandardOutput { return StandardOutputProgress(console: console, showProgress: !options.global.noProgress) }
        // One photo is one line, its path; a storage test's figures for more (or with --stats).
        let detailed = options.stats || options.count * options.frames > 1
        if console.stderrIsTerminal && !options.global.noProgress { return TerminalProgress(console: console, detailed: detailed) }
        return PlainProgress(console: console, showProgress: !options.global.noProgress, detailed: detailed)
    }

    /// The command as typed, for the catalog's `runs.command`: quoted as a shell would need,
    /// without the password of a web address (`WebAddress`).
    private func commandText() -> String {
        // A loop, not `map` + `joined` + `replacing`: see AbsolutePath.resolve for why.
        var text = ""
        for argument in arguments.map(WebAddress.withoutPassword) {
            if !text.isEmpty { text += " " }
            if argument.allSatisfy({ $0.isLetter || $0.isNumber || "-_./:=,{}".contains($0) }) && !argument.isEmpty {
                text += argument
                continue
            }
            text += "'"
            for character in argument { text += character == "'" ? "'\\''" : String(character) }
            text += "'"
        }
        return text
    }
}
