/// The picker in a terminal: pictures drawn by a `TerminalPainter` above a status line, keys
/// read raw from a `FullScreen`. Offers no menus: another camera is another `-d`.
final class TerminalPickerScreen: PickerScreen {
    private let screen: FullScreen
    private let painter: TerminalPainter
    private var size: TerminalSize?
    private var seenWindowChanges = -1
    private var hasControls = false

    init(screen: FullScreen, painter: TerminalPainter) {
        self.screen = screen
        self.painter = painter
    }

    func actions(waiting microseconds: Int) throws -> [PickerAction] {
        var actions: [PickerAction] = []
        if SignalWatcher.windowChanges != seenWindowChanges {
            seenWindowChanges = SignalWatcher.windowChanges
            size = screen.size
            screen.write("\u{1B}[2J")
            actions.append(.suspend)  // a redraw, as after `fg`
        }
        for key in screen.keys(waiting: actions.isEmpty ? microseconds : 0) {
            switch key {
            case .interrupt, .escape, .character("q"): actions.append(.cancel)
            case .hangUp: actions.append(.hangUp)
            case .suspend:
                try screen.suspend()
                // Continued: the terminal may have another size, and holds the shell's text.
                size = screen.size
                actions.append(.suspend)
            case .character(" "): actions.append(.shutter)
            case .enter: actions.append(.confirm)
            case .character("u"): actions.append(.keep)
            case .character("r"): actions.append(.retake)
            case .character("t"): actions.append(.timer)
            case .up, .character("["): actions.append(.selectControl(-1))
            case .down, .character("]"): actions.append(.selectControl(1))
            case .left, .character("-"): actions.append(.stepControl(-1))
            case .right, .character("+"), .character("="): actions.append(.stepControl(1))
            default: continue
            }
        }
        return actions
    }

    func sourcesChanged(_ sources: PickerSources, controls: ControlPanel?) { hasControls = controls != nil }

    func show(_ frame: Frame, _ view: PickerView) throws {
        painter.live = view.phase != .review
        try draw(frame, status: status(view))
    }

    private func status(_ view: PickerView) -> String {
        switch view.phase {
        case .review:
            return "frame \(view.frameSequence) taken  ·  enter/u keep" + (view.copies > 1 ? " (\(view.copies) saves)" : "")
                + "  ·  r retake  ·  q cancel"
        case .countdown(let seconds):
            return "\(view.source)  ·  taking the photo in \(seconds) s  ·  space stops the timer  ·  q cancel"
        case .live:
            var parts = [view.source, "frame \(view.frameSequence)", "\(Format.fixed(view.framesPerSecond, 1)) fps"]
            if let control = view.control { parts.append(control) }
            if let notice = view.notice { parts.append(notice) }
            parts.append("space shutter  t timer" + (view.control == nil ? "" : "  ↑↓ control  ←→ change") + "  q cancel")
            return parts.joined(separator: "  ·  ")
        }
    }

    /// The picture as large as the terminal allows above the status line, aspect kept
    /// (`--preview-mode none`: the status line alone).
    private func draw(_ frame: Frame, status: String) throws {
        if size == nil { size = screen.size }
        guard let size else { return }
        var output = Array("\u{1B}[H".utf8)
        if painter.mode != .none {
            // Kitty keeps every image it was sent until told to delete it.
            if painter.mode == .kitty { output += Array("\u{1B}_Ga=d\u{1B}\\".utf8) }
            output += try painter.draw(frame, fitting: size.columns, rows: max(1, size.rows - 1), cell: size.cell)
        }
        // The status line: the bottom row, cut to the width, the rest of the row cleared.
        output += Array("\u{1B}[0m\u{1B}[\(size.rows);1H\u{1B}[7m \(String(status.prefix(max(0, size.columns - 2)))) \u{1B}[0m\u{1B}[K".utf8)
        screen.write(output)
    }
}
