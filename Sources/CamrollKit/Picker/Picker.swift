import Glibc

/// The camera picker's screen: the source live in the terminal, a shutter, the shot held for
/// review, keep or retake, cancel. It takes frames from any `FrameSource` and hands pictures to a
/// `TerminalPainter`; it knows neither V4L2 nor chafa. Saving is not its business: it returns
/// the frame kept.
final class Picker {
    enum Outcome {
        /// The frame to save, full size, as the source delivered it.
        case keep(Frame)
        /// q, Esc or Ctrl-C.
        case cancelled
        /// SIGTERM, SIGHUP or SIGINT from outside.
        case signalled(Int32)
    }

    /// What the status line says about the source (`/dev/video0  YUYV 640x480`).
    struct Description {
        var device: String
        var format: String
        /// Saves a kept picture gets (`-n`).
        var copies: Int
    }

    /// Frames drawn per second at most: more costs CPU and is not seen.
    static let previewRate = 30

    private let source: FrameSource
    private let screen: FullScreen
    private let painter: TerminalPainter
    private let controls: ControlPanel?
    private let cancellation: Cancellation
    private let description: Description
    /// Checks the frame about to be kept (a damaged MJPEG frame is refused); nil: no check.
    private let check: ((Frame) throws -> Void)?

    private var size: TerminalSize?
    private var seenWindowChanges = -1
    private var meter = RateMeter()
    private var notice: String?

    init(
        source: FrameSource, screen: FullScreen, painter: TerminalPainter, controls: ControlPanel?,
        cancellation: Cancellation, description: Description, check: ((Frame) throws -> Void)? = nil
    ) {
        self.source = source
        self.screen = screen
        self.painter = painter
        self.controls = controls
        self.cancellation = cancellation
        self.description = description
        self.check = check
    }

    private enum State {
        case live
        case review(Frame)
    }

    func run() throws -> Outcome {
        var state = State.live
        var shown: Frame?
        var nextFrameDue = 0
        var needsDrawing = true
        let frameInterval = 1_000_000 / Self.previewRate
        while true {
            if let signal = cancellation.signal { return .signalled(signal) }
            if SignalWatcher.windowChanges != seenWindowChanges {
                seenWindowChanges = SignalWatcher.windowChanges
                size = screen.size
                screen.write("\u{1B}[2J")
                needsDrawing = true
            }
            let isLive = { if case .live = state { true } else { false } }()
            let wait = isLive ? max(0, nextFrameDue - monotonicMicroseconds()) : 50_000
            for key in screen.keys(waiting: wait) {
                switch (key, state) {
                case (.interrupt, _), (.escape, _), (.character("q"), _), (.hangUp, _):
                    return .cancelled
                case (.suspend, _):
                    try screen.suspend()
                    // Continued: the terminal may have another size, and holds the shell's text.
                    size = screen.size
                    needsDrawing = true
                case (.character(" "), .live), (.enter, .live):
                    guard let frame = shown else { continue }
                    do {
                        try check?(frame)
                        state = .review(frame)
                        notice = nil
                    } catch let error as CamrollError {
                        notice = "that frame was damaged (\(error.message)); press space again"
                    }
                    needsDrawing = true
                case (.enter, .review(let frame)), (.character("u"), .review(let frame)):
                    return .keep(frame)
                case (.character("r"), .review):
                    state = .live
                    needsDrawing = true
                case (.up, .live), (.character("["), .live):
                    controls?.select(by: -1)
                    needsDrawing = true
                case (.down, .live), (.character("]"), .live):
                    controls?.select(by: 1)
                    needsDrawing = true
                case (.left, .live), (.character("-"), .live):
                    adjust(by: -1)
                    needsDrawing = true
                case (.right, .live), (.character("+"), .live), (.character("="), .live):
                    adjust(by: 1)
                    needsDrawing = true
                default:
                    continue
                }
            }
            switch state {
            case .live where monotonicMicroseconds() >= nextFrameDue:
                // On a fixed schedule, not a fixed pause after each frame, so that the preview
                // runs at the rate asked for; more than a frame behind, the schedule starts again.
                let now = monotonicMicroseconds()
                nextFrameDue = nextFrameDue + frameInterval < now ? now + frameInterval : nextFrameDue + frameInterval
                let frame: Frame
                do {
                    frame = try source.newestFrame()
                } catch is CancelledWhileWaiting {
                    // A signal while the camera was between frames.
                    return .signalled(cancellation.signal ?? SIGINT)
                }
                meter.count(at: monotonicMicroseconds())
                shown = frame
                painter.live = true
                try draw(frame, status: liveStatus(frame))
                needsDrawing = false
            case .review(let frame) where needsDrawing:
                // The shot held still: drawn with the painter's full care, once.
                painter.live = false
                try draw(frame, status: "frame \(frame.sequence) taken  ·  enter/u keep"
                    + (description.copies > 1 ? " (\(description.copies) saves)" : "") + "  ·  r retake  ·  q cancel")
                needsDrawing = false
            default:
                break
            }
        }
    }

    private func adjust(by direction: Int) {
        guard let controls else { return }
        do {
            try controls.adjust(by: direction)
            notice = nil
        } catch let error as CamrollError {
            notice = error.message
        } catch {
            notice = "\(error)"
        }
    }

    private func liveStatus(_ frame: Frame) -> String {
        var parts = ["\(description.device)  \(description.format)", "frame \(frame.sequence)", "\(Format.fixed(meter.rate, 1)) fps"]
        if let controls { parts.append(controls.status) }
        if let notice { parts.append(notice) }
        parts.append("space shutter" + (controls == nil ? "" : "  ↑↓ control  ←→ change") + "  q cancel")
        return parts.joined(separator: "  ·  ")
    }

    /// The picture as large as the terminal allows above the status line, aspect kept
    /// (`--preview-mode none`: the status line alone).
    private func draw(_ frame: Frame, status: String) throws {
        guard let size else { return }
        var output = Array("\u{1B}[H".utf8)
        if painter.mode != .none { output += try picture(frame, size: size) }
        // The status line: the bottom row, cut to the width, the rest of the row cleared.
        output += Array("\u{1B}[0m\u{1B}[\(size.rows);1H\u{1B}[7m \(String(status.prefix(max(0, size.columns - 2)))) \u{1B}[0m\u{1B}[K".utf8)
        screen.write(output)
    }

    private func picture(_ frame: Frame, size: TerminalSize) throws -> [UInt8] {
        // Kitty keeps every image it was sent until told to delete it.
        let clear = painter.mode == .kitty ? Array("\u{1B}_Ga=d\u{1B}\\".utf8) : []
        return try clear + painter.draw(frame, fitting: size.columns, rows: max(1, size.rows - 1), cell: size.cell)
    }
}

/// Frames per second over the last second.
struct RateMeter {
    private var times: [Int] = []

    mutating func count(at microseconds: Int) {
        times.append(microseconds)
        times.removeAll { $0 < microseconds - 1_000_000 }
    }

    var rate: Double {
        guard let first = times.first, let last = times.last, last > first else { return 0 }
        return Double(times.count - 1) * 1_000_000 / Double(last - first)
    }
}
