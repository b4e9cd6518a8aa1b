import CGtk
import Glibc

/// The picker in a GTK 4 window (Sources/CGtk): the preview filling the window, a shutter, a
/// timer, a mirror for the preview, menus of cameras and sizes, the camera's controls; then the
/// shot with Retake and Use Photo, the saves' progress, or a message. GTK runs on the thread
/// that made the window, inside `actions(waiting:)`, as a terminal's keys are read there.
final class PickerWindow: PickerScreen {
    static let title = "Take a photo"
    /// The desktop's name for the window (Wayland app_id, X11 WM_CLASS), as the desktop entry's.
    static let applicationID = "camroll"

    private let scaler = PreviewScaler()
    private var shownSize: (width: Int, height: Int)?
    private var mode: Int32 = -1
    private var sources: PickerSources?

    /// Loads GTK and connects to the display; the window is not shown yet. Exit 69 without
    /// GTK (naming its package), 69 without a display it can open.
    init(environment: [String: String]) throws {
        var why = [CChar](repeating: 0, count: 256)
        guard cgtk_load(&why, why.count) == 1 else {
            throw CamrollError(
                .unavailable, "cannot open a window: \(String(nulTerminated: why))",
                hint: "Install GTK 4 (Debian: sudo apt install libgtk-4-1), or use the terminal: camroll pick --terminal")
        }
        guard cgtk_open(Self.title, Self.applicationID, &why, why.count) == 1 else {
            let display = environment["WAYLAND_DISPLAY"].map { "Wayland display \($0)" }
                ?? environment["DISPLAY"].map { "display \($0)" } ?? "no display"
            throw CamrollError(
                .unavailable, "cannot open a window on \(display): \(String(nulTerminated: why))",
                hint: "Use the terminal instead: camroll pick --terminal")
        }
    }

    /// Whether this environment has a display a window can go to.
    static func displayAvailable(_ environment: [String: String]) -> Bool {
        !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty || !(environment["DISPLAY"] ?? "").isEmpty
    }

    func present() { cgtk_present() }

    func close() { cgtk_close() }

    func setMirrored(_ mirrored: Bool) { cgtk_set_mirror(mirrored ? 1 : 0) }

    func setTimerLabel(seconds: Int) { cgtk_set_timer_label("_Timer \(seconds) s") }

    func actions(waiting microseconds: Int) throws -> [PickerAction] {
        cgtk_wait(Int32(clamping: (microseconds + 999) / 1000))
        var actions: [PickerAction] = []
        var event = cgtk_event()
        while cgtk_next_event(&event) == 1 {
            switch Int(event.kind) {
            case Int(CGTK_EVENT_SHUTTER.rawValue): actions.append(.shutter)
            case Int(CGTK_EVENT_CONFIRM.rawValue): actions.append(.confirm)
            case Int(CGTK_EVENT_KEEP.rawValue): actions.append(.keep)
            case Int(CGTK_EVENT_RETAKE.rawValue): actions.append(.retake)
            case Int(CGTK_EVENT_CANCEL.rawValue): actions.append(.cancel)
            case Int(CGTK_EVENT_TIMER.rawValue): actions.append(.timer)
            case Int(CGTK_EVENT_CAMERA.rawValue): actions.append(.switchCamera(Int(event.index)))
            case Int(CGTK_EVENT_RESOLUTION.rawValue): actions.append(.switchSize(Int(event.index)))
            case Int(CGTK_EVENT_CONTROL.rawValue): actions.append(.setControl(index: Int(event.index), value: event.value))
            default: continue  // the mirror: the window flips the preview itself
            }
        }
        return actions
    }

    func sourcesChanged(_ sources: PickerSources, controls: ControlPanel?) {
        self.sources = sources
        withCStrings(sources.cameras.map(\.label)) { cgtk_set_choices(Int32(CGTK_EVENT_CAMERA.rawValue), $0, Int32($1), Int32(sources.selectedCamera)) }
        withCStrings(sources.sizes.map(\.description)) {
            cgtk_set_choices(Int32(CGTK_EVENT_RESOLUTION.rawValue), $0, Int32($1), Int32(sources.selectedSize))
        }
        let entries = controls?.entries ?? []
        withCStrings(entries.map(\.label)) { labels, count in
            cgtk_set_controls(
                Int32(count), labels, entries.map { CLongLong($0.minimum) }, entries.map { CLongLong($0.maximum) },
                entries.map { CLongLong($0.step) }, entries.map { CLongLong($0.value) }, entries.map { $0.isBoolean ? 1 : 0 })
        }
    }

    func show(_ frame: Frame, _ view: PickerView) throws {
        switch view.phase {
        case .live:
            setMode(CGTK_MODE_LIVE)
            cgtk_set_overlay(nil)
        case .countdown(let seconds):
            setMode(CGTK_MODE_LIVE)
            cgtk_set_overlay(String(seconds))
        case .review:
            setMode(CGTK_MODE_REVIEW)
            cgtk_set_overlay(nil)
        }
        var parts = [view.source]
        switch view.phase {
        case .review: parts.append("frame \(view.frameSequence) taken" + (view.copies > 1 ? ": Use Photo saves it \(view.copies) times" : ""))
        default: parts.append("\(Format.fixed(view.framesPerSecond, 1)) fps")
        }
        if let notice = view.notice { parts.append(notice) }
        cgtk_set_status(parts.joined(separator: "  ·  "))
        try draw(frame, fullCare: view.phase == .review)
    }

    /// The saves' progress, with Cancel.
    func showProgress(done: Int, total: Int, text: String) {
        setMode(CGTK_MODE_SAVING)
        cgtk_set_progress(total > 0 ? Double(done) / Double(total) : 1, text)
    }

    /// A message in place of the picture (the camera could not be opened, or went away), with
    /// Close; returns once the user closes it (Close, Esc, the window's close button) or a
    /// signal comes.
    func showMessage(_ headline: String, detail: String?, cancellation: Cancellation) {
        setMode(CGTK_MODE_MESSAGE)
        cgtk_set_message(headline, detail)
        cgtk_set_status("")
        while !cancellation.isCancelled {
            cgtk_wait(100)
            var event = cgtk_event()
            var closed = false
            while cgtk_next_event(&event) == 1 { closed = closed || event.kind == Int32(CGTK_EVENT_CANCEL.rawValue) || event.kind == Int32(CGTK_EVENT_CONFIRM.rawValue) }
            if closed { return }
        }
    }

    /// Whether Cancel (or Esc, or the close button) was pressed since the last call, handling
    /// what GTK has pending without waiting: called between saves.
    func cancelPressed() -> Bool {
        cgtk_wait(0)
        var event = cgtk_event()
        var cancelled = false
        while cgtk_next_event(&event) == 1 { cancelled = cancelled || event.kind == Int32(CGTK_EVENT_CANCEL.rawValue) }
        return cancelled
    }

    private func setMode(_ newMode: cgtk_mode) {
        guard Int32(newMode.rawValue) != mode else { return }
        mode = Int32(newMode.rawValue)
        cgtk_set_mode(mode)
    }

    /// The frame scaled to about the preview's size on screen (a JPEG decoded at the DCT scale
    /// nearest it, YUV sampled), never larger than needed: GTK scales it the rest of the way.
    /// Held for review, at the full size the screen can show.
    private func draw(_ frame: Frame, fullCare: Bool) throws {
        var width: Int32 = 0, height: Int32 = 0
        cgtk_preview_size(&width, &height)
        let box = (width: max(160, Int(width)), height: max(120, Int(height)))
        let picture = try scaler.picture(of: frame, width: fullCare ? box.width : box.width / 2, height: fullCare ? box.height : box.height / 2)
        picture.pixels.withUnsafeBufferPointer { pixels in
            cgtk_show_picture(pixels.baseAddress, Int32(picture.width), Int32(picture.height), Int32(picture.width * 3))
        }
        shownSize = (picture.width, picture.height)
    }
}

/// `strings` as a C array of C strings (NULL-terminated, so never empty) for the length of `body`.
private func withCStrings<T>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>?, Int) -> T) -> T {
    let copies = strings.map { UnsafePointer(strdup($0)) } + [nil]
    defer { for copy in copies { free(UnsafeMutablePointer(mutating: copy)) } }
    return copies.withUnsafeBufferPointer { body($0.baseAddress, strings.count) }
}
