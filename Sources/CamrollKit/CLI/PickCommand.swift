import Glibc

/// `camroll pick`: the camera live in the terminal until the shutter; the picture kept is saved
/// as `snap` saves (same options, progress, catalog rows). Cancelled, it saves nothing and
/// records nothing.
struct PickCommand {
    let options: SnapOptions
    let environment: [String: String]
    let arguments: [String]

    func run() throws -> ExitCode {
        switch options.device {
        case .file, .url:
            throw CamrollError.usage("pick previews a camera or the test pattern; save a file or URL with 'camroll snap -d …'")
        default: break
        }
        if options.frames > 1 || options.intervalMicroseconds > 0 {
            throw CamrollError.usage("pick takes one picture per shutter; '--frames' and '--interval' are for 'camroll snap'")
        }
        if options.fill {
            throw CamrollError.usage("'--fill' is a storage test; use 'camroll snap --fill'")
        }
        if options.toStandardOutput {
            throw CamrollError.usage("pick saves files; 'camroll snap -o -' sends a photo to standard output")
        }
        // After the options: a wrong one is reported as itself, in a terminal or not.
        guard isatty(STDIN_FILENO) == 1, isatty(STDERR_FILENO) == 1 else {
            throw CamrollError.usage("pick needs a terminal; use 'camroll snap' in scripts")
        }
        let cancellation = SignalWatcher.beginCancellable()
        JPEGDecoder.maxPixels = options.maxPixels
        let console = Console(colorMode: options.global.color, environment: environment)
        var snap = SnapCommand(options: options, environment: environment, arguments: arguments)
        snap.live = true
        let template = try snap.outputTemplate(console: console)
        // Chafa is loaded (and the terminal's abilities read) before the camera is opened, so
        // that a missing library costs no camera time.
        let painter = try TerminalPainter(
            requested: options.previewMode,
            environment: environment, color: console.useColor)
        let pendingCatalog = Pending { [snap] in try snap.openCatalog() }
        let source: FrameSource
        do {
            source = try snap.openSource(cancellation: cancellation, catalog: nil, console: console)
        } catch is CancelledWhileWaiting {
            _ = try? pendingCatalog.value()
            return ExitCode(cancelledBy: cancellation.signal)
        } catch {
            _ = try? pendingCatalog.value()
            throw error
        }
        let camera = source as? V4L2Camera
        let description = Picker.Description(
            device: source.deviceName,
            format: camera.map { "\($0.format.code) \($0.resolution)" }
                ?? (source as? TestPattern).map { "YUYV \($0.resolution)" } ?? "",
            copies: options.count)

        let outcome: Picker.Outcome
        do {
            let screen = try FullScreen()
            defer { screen.restore() }
            let decoder = try JPEGDecoder()
            let picker = Picker(
                source: source, screen: screen, painter: painter, controls: camera.flatMap { ControlPanel($0.controls) },
                cancellation: cancellation, description: description,
                check: { frame in
                    // The preview skipped the full decode: the frame kept gets it.
                    if frame.format == .mjpeg { _ = try decoder.decodeRGB(frame.bytes) }
                })
            do {
                outcome = try picker.run()
            } catch var error as CamrollError {
                // Said after the terminal is given back (the defer above runs first). Nothing
                // is saved before the shutter, whatever snap's hint would say about a run.
                error.hint = "Nothing was saved."
                throw error
            }
        }
        switch outcome {
        case .cancelled:
            if !options.global.quiet { console.err("cancelled: nothing saved\n") }
            return .interrupted
        case .signalled(let signal):
            return ExitCode(cancelledBy: signal)
        case .keep(let frame):
            return try snap.save(
                from: HeldFrame(frame, from: source), catalog: { try pendingCatalog.value() }, template: template,
                console: console, cancellation: cancellation)
        }
    }
}
