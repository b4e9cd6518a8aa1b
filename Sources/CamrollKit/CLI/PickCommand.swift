import Glibc

/// `camroll pick`: the camera live in a window (where there is a display) or in the terminal
/// until the shutter; the picture kept is saved as `snap` saves (same options, catalog rows),
/// and standard output gets the result alone, for the program that asked for a photo: the
/// path(s), one JSON object (`--json`), or the JPEG (`-o -`). Cancelled, it saves nothing,
/// records nothing, prints nothing on stdout and exits 130.
struct PickCommand {
    /// An error's hint in pick, where nothing is saved before the shutter: snap's about the
    /// frames an unplugged run kept does not apply; any other (the fix for a busy or forbidden
    /// camera) stays, before it.
    static func nothingSaved(_ hint: String?) -> String {
        guard let hint, !hint.contains("saved before") else { return "Nothing was saved." }
        return hint.hasSuffix("Nothing was saved.") ? hint : hint + " Nothing was saved."
    }

    let options: SnapOptions
    let environment: [String: String]
    let arguments: [String]

    func run() throws -> ExitCode {
        let started = monotonicMicroseconds()
        switch options.device {
        case .file, .url:
            throw CamrollError.usage("pick previews a camera or the test pattern; save a file or URL with 'camroll snap -d …'")
        default: break
        }
        let console = Console(colorMode: options.global.color, environment: environment)
        if options.toStandardOutput && console.stdoutIsTerminal {
            throw CamrollError.usage(
                "-o - sends the JPEG to standard output, which is a terminal here",
                hint: "Redirect it: photo=$(mktemp); camroll pick -o - > \"$photo\"")
        }
        let useWindow = try frontEnd()
        let cancellation = SignalWatcher.beginCancellable()
        JPEGDecoder.maxPixels = options.maxPixels
        var snap = SnapCommand(options: options, environment: environment, arguments: arguments)
        snap.live = true
        let template = try snap.outputTemplate(console: console)
        // The banner goes on the photo kept, not on the preview; its font is checked first.
        let banner = try snap.bannerPainter()

        // The window (or chafa, for the terminal) is loaded before the camera is opened, so that
        // a missing library costs no camera time, and so that the camera's own errors (no
        // permission, busy) can be shown in the window.
        let window = useWindow ? try PickerWindow(environment: environment) : nil
        let painter = useWindow ? nil : try TerminalPainter(requested: options.previewMode, environment: environment, color: console.useColor)
        if let note = painter?.note, !options.global.quiet { console.warning(note) }
        let pendingCatalog = Pending { [snap] in try snap.openCatalog() }
        defer { window?.close() }
        if let window {
            window.setMirrored(options.mirror)
            window.setTimerLabel(seconds: options.timerSeconds > 0 ? options.timerSeconds : 3)
            window.present()
        }

        let opened: Picker.OpenSource
        do {
            opened = try open(options.device, resolution: options.resolution, snap: snap, cancellation: cancellation, console: console)
        } catch is CancelledWhileWaiting {
            _ = try? pendingCatalog.value()
            return ExitCode(cancelledBy: cancellation.signal)
        } catch let error as CamrollError {
            _ = try? pendingCatalog.value()
            window?.showMessage(error.message, detail: error.hint, cancellation: cancellation)
            throw error
        }

        let outcome: Picker.Outcome
        do {
            let decoder = try JPEGDecoder()
            // The preview skipped the full decode: the frame kept gets it.
            let check: (Frame) throws -> Void = { frame in
                if frame.format == .mjpeg { _ = try decoder.decodeRGB(frame.bytes) }
            }
            if let window {
                let picker = Picker(
                    source: opened, screen: window, cancellation: cancellation, copies: options.count,
                    timerSeconds: options.timerSeconds, sources: menus(for: opened),
                    reopen: { device, resolution in
                        try open(device, resolution: resolution, snap: snap, cancellation: cancellation, console: console)
                    },
                    check: check)
                do {
                    outcome = try picker.run()
                } catch var error as CamrollError {
                    error.hint = Self.nothingSaved(error.hint)
                    window.showMessage(error.message, detail: error.hint, cancellation: cancellation)
                    throw error
                }
            } else if let painter {
                let screen = try FullScreen()
                defer { screen.restore() }
                let picker = Picker(
                    source: opened, screen: TerminalPickerScreen(screen: screen, painter: painter), cancellation: cancellation,
                    copies: options.count, timerSeconds: options.timerSeconds, check: check)
                outcome = try picker.run()
            } else {
                throw CamrollError(.failure, "internal error: pick has neither a window nor a terminal")
            }
        } catch var error as CamrollError {
            // Said after the terminal is given back (the defer above runs first).
            error.hint = Self.nothingSaved(error.hint)
            _ = try? pendingCatalog.value()
            throw error
        }
        switch outcome {
        case .cancelled:
            _ = try? pendingCatalog.value()
            if !options.global.quiet { console.err("cancelled: nothing saved\n") }
            return .interrupted
        case .signalled(let signal):
            _ = try? pendingCatalog.value()
            return ExitCode(cancelledBy: signal)
        case .keep(let frame, let source):
            let result = PickResult(console: console, window: window, cancellation: cancellation, options: options)
            // The preview's mirror is for the person in front of the camera; --mirror saves it so.
            let kept = options.mirror ? try frame.mirrored(decoder: try JPEGDecoder()) : frame
            let status = try snap.save(
                from: HeldFrame(kept, from: source), catalog: { try pendingCatalog.value() }, template: template,
                console: console, cancellation: cancellation, reporter: result, banner: banner)
            guard status == .success, !options.toStandardOutput else { return status }
            try result.print(from: try pendingCatalog.value(), device: source.deviceName, since: started)
            return status
        }
    }

    /// A window or the terminal: as asked, else a window where there is a display and GTK,
    /// the terminal otherwise.
    private func frontEnd() throws -> Bool {
        let hasTerminal = isatty(STDIN_FILENO) == 1 && isatty(STDERR_FILENO) == 1
        switch options.pickerFrontEnd {
        case .window:
            return true
        case .terminal:
            guard hasTerminal else {
                throw CamrollError.usage("pick --terminal needs a terminal on stdin and stderr; use 'camroll snap' in scripts")
            }
            return false
        case nil:
            if PickerWindow.displayAvailable(environment) { return true }
            guard hasTerminal else {
                throw CamrollError.usage(
                    "pick needs a display (for its window) or a terminal; there is neither",
                    hint: "Use 'camroll snap' in scripts.")
            }
            return false
        }
    }

    /// Opens `device` at `resolution` (nil: as the options ask), with what the picker shows of it.
    private func open(
        _ device: DeviceChoice, resolution: Resolution?, snap: SnapCommand, cancellation: Cancellation, console: Console
    ) throws -> Picker.OpenSource {
        var options = options
        options.device = device
        options.resolution = resolution ?? options.resolution
        var opening = SnapCommand(options: options, environment: environment, arguments: arguments)
        opening.live = true
        let source = try opening.openSource(cancellation: cancellation, catalog: nil, console: console)
        if let camera = source as? V4L2Camera {
            return Picker.OpenSource(
                source: camera, description: "\(camera.deviceName)  \(camera.format.code) \(camera.resolution)",
                controls: ControlPanel(camera.controls), sizes: camera.sizes, resolution: camera.resolution)
        }
        let pattern = source as? TestPattern
        let size = pattern?.resolution ?? SnapOptions.defaultPatternResolution
        return Picker.OpenSource(
            source: source, description: "\(source.deviceName)  \((pattern?.format ?? .yuyv).code) \(size)", controls: nil,
            sizes: TestPattern.offeredSizes, resolution: size)
    }

    /// The window's camera menu: the test pattern and every camera found.
    private func menus(for opened: Picker.OpenSource) -> PickerSources {
        var cameras = [PickerSources.Camera(label: "Test pattern", device: .pattern)]
        for entry in DeviceList.captureDevices() {
            let name = entry.capabilities.map { "\($0.card.printable) (\(entry.path))" } ?? entry.path
            cameras.append(PickerSources.Camera(label: name, device: .camera(entry.path)))
        }
        let current = opened.source.deviceName
        let selected = cameras.firstIndex {
            if case .camera(let path) = $0.device { return path == current || Self.sameFile(path, current) }
            return current == "pattern" && $0.device == .pattern
        }
        if selected == nil, case .camera = options.device {
            // A camera named by a link (/dev/v4l/by-id/…) the list shows by its node.
            cameras.append(PickerSources.Camera(label: current, device: .camera(current)))
        }
        return PickerSources(cameras: cameras, selectedCamera: selected ?? cameras.count - 1, sizes: opened.sizes, selectedSize: -1)
    }

    /// Whether two paths name one file (a camera's node and a link to it).
    private static func sameFile(_ one: String, _ other: String) -> Bool {
        var first = stat(), second = stat()
        return stat(one, &first) == 0 && stat(other, &second) == 0 && first.st_dev == second.st_dev && first.st_ino == second.st_ino
            && first.st_rdev == second.st_rdev
    }
}
