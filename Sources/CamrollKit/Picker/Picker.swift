import Glibc

/// The camera picker: the source live, a shutter (now or after a countdown), the shot held for
/// review, keep or retake, cancel; in a window, another camera or size chosen and controls
/// set. It takes frames from any `FrameSource` and shows them on a `PickerScreen` (a terminal or
/// a window), whose actions it reads: it knows neither V4L2 nor how anything is drawn. Saving is
/// not its business: it returns the frame kept, and the source it came from.
final class Picker {
    enum Outcome {
        /// The frame to save, full size, as `source` delivered it.
        case keep(Frame, from: FrameSource)
        /// q, Esc, Ctrl-C typed, the window closed.
        case cancelled
        /// SIGTERM, SIGHUP or SIGINT from outside.
        case signalled(Int32)
    }

    /// A source open, with what the picker says and offers about it.
    struct OpenSource {
        var source: FrameSource
        /// What the status says about the source (`/dev/video0  YUYV 640x480`).
        var description: String
        var controls: ControlPanel?
        var sizes: [Resolution]
        var resolution: Resolution?
    }

    /// Frames shown per second at most: more costs CPU and is not seen.
    static let previewRate = 30

    private var current: OpenSource
    private let screen: PickerScreen
    private let cancellation: Cancellation
    private let copies: Int
    /// The self-timer's length, in seconds: what the shutter waits (0: none) and what the
    /// timer button counts down.
    private let timerSeconds: Int
    private let timerButtonSeconds: Int
    /// Checks the frame about to be kept (a damaged MJPEG frame is refused); nil: no check.
    private let check: ((Frame) throws -> Void)?
    /// Opens another camera or size (a window's menus): the cameras offered and how to open one.
    private var sources: PickerSources?
    private let reopen: ((DeviceChoice, Resolution?) throws -> OpenSource)?

    private var meter = RateMeter()
    private var notice: String?

    init(
        source: OpenSource, screen: PickerScreen, cancellation: Cancellation, copies: Int, timerSeconds: Int = 0,
        sources: PickerSources? = nil, reopen: ((DeviceChoice, Resolution?) throws -> OpenSource)? = nil,
        check: ((Frame) throws -> Void)? = nil
    ) {
        current = source
        self.screen = screen
        self.cancellation = cancellation
        self.copies = copies
        self.timerSeconds = timerSeconds
        timerButtonSeconds = timerSeconds > 0 ? timerSeconds : 3
        self.sources = sources
        self.reopen = reopen
        self.check = check
        if var sources {
            sources.sizes = source.sizes
            sources.selectedSize = source.resolution.flatMap { source.sizes.firstIndex(of: $0) } ?? -1
            self.sources = sources
            screen.sourcesChanged(sources, controls: source.controls)
        }
    }

    private enum State {
        case live
        /// Counting down to the shot at this moment (monotonic microseconds).
        case countdown(until: Int)
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
            let wait: Int
            switch state {
            case .live, .countdown: wait = max(0, nextFrameDue - monotonicMicroseconds())
            case .review: wait = needsDrawing ? 0 : 50_000
            }
            for action in try screen.actions(waiting: wait) {
                switch (action, state) {
                case (.cancel, _), (.hangUp, _):
                    return .cancelled
                case (.suspend, _):
                    needsDrawing = true
                case (.shutter, .live), (.confirm, .live):
                    if timerSeconds > 0 {
                        state = .countdown(until: monotonicMicroseconds() + timerSeconds * 1_000_000)
                    } else if let frame = shown, let held = hold(frame) {
                        state = .review(held)
                    }
                    needsDrawing = true
                case (.timer, .live):
                    state = .countdown(until: monotonicMicroseconds() + timerButtonSeconds * 1_000_000)
                    needsDrawing = true
                case (.shutter, .countdown), (.timer, .countdown), (.confirm, .countdown):
                    // A second press stops the countdown, as a phone's timer does.
                    state = .live
                    needsDrawing = true
                case (.confirm, .review(let frame)), (.keep, .review(let frame)):
                    return .keep(frame, from: current.source)
                case (.retake, .review):
                    state = .live
                    needsDrawing = true
                case (.selectControl(let offset), .live):
                    current.controls?.select(by: offset)
                    needsDrawing = true
                case (.stepControl(let direction), .live):
                    changeControl { try $0.adjust(by: direction) }
                    needsDrawing = true
                case (.setControl(let index, let value), .live), (.setControl(let index, let value), .countdown):
                    changeControl { try $0.set(index, to: value) }
                case (.switchCamera(let index), .live):
                    try switchSource(camera: index, size: nil)
                    shown = nil
                case (.switchSize(let index), .live):
                    try switchSource(camera: nil, size: index)
                    shown = nil
                default:
                    continue
                }
            }
            switch state {
            case .live where monotonicMicroseconds() >= nextFrameDue, .countdown where monotonicMicroseconds() >= nextFrameDue:
                // On a fixed schedule, not a fixed pause after each frame, so that the preview
                // runs at the rate asked for; more than a frame behind, the schedule starts again.
                let now = monotonicMicroseconds()
                nextFrameDue = nextFrameDue + frameInterval < now ? now + frameInterval : nextFrameDue + frameInterval
                guard let frame = try newestFrame() else { return .signalled(cancellation.signal ?? SIGINT) }
                meter.count(at: monotonicMicroseconds())
                shown = frame
                if case .countdown(let until) = state {
                    let left = until - monotonicMicroseconds()
                    if left <= 0 {
                        // The frame shown was asked for after the countdown ended: the shot is
                        // of that moment, not of one before it.
                        state = hold(frame).map(State.review) ?? .live
                        needsDrawing = true
                        continue
                    }
                    try screen.show(frame, view(frame, .countdown((left + 999_999) / 1_000_000)))
                } else {
                    try screen.show(frame, view(frame, .live))
                }
                needsDrawing = false
            case .review(let frame) where needsDrawing:
                // The shot held still: drawn once, with the screen's full care.
                try screen.show(frame, view(frame, .review))
                needsDrawing = false
            default:
                break
            }
        }
    }

    /// The newest frame, or nil when a signal came while the camera was between frames.
    private func newestFrame() throws -> Frame? {
        do {
            return try current.source.newestFrame()
        } catch is CancelledWhileWaiting {
            return nil
        }
    }

    /// `frame`, checked, to be held for review; nil (and a notice) when it is damaged.
    private func hold(_ frame: Frame) -> Frame? {
        do {
            try check?(frame)
            notice = nil
            Trace.mark("shutter: frame \(frame.sequence)")
            return frame
        } catch let error as CamrollError {
            notice = "that frame was damaged (\(error.message)); take it again"
        } catch {
            notice = "\(error)"
        }
        return nil
    }

    private func changeControl(_ change: (ControlPanel) throws -> Void) {
        guard let controls = current.controls else { return }
        do {
            try change(controls)
            notice = nil
        } catch let error as CamrollError {
            notice = error.message
        } catch {
            notice = "\(error)"
        }
    }

    /// Another camera (`camera`, an index into the menu) or size: the current source is closed
    /// first (a camera streams to one handle at a time, and whoever else holds a reference to
    /// it — the command that opened it — must not keep it streaming). A source that cannot be
    /// opened leaves the picker on the one before, if it opens again.
    private func switchSource(camera: Int?, size: Int?) throws {
        guard let reopen, var sources else { return }
        let cameraIndex = camera ?? sources.selectedCamera
        guard sources.cameras.indices.contains(cameraIndex) else { return }
        let resolution = size.flatMap { sources.sizes.indices.contains($0) ? sources.sizes[$0] : nil }
        let previous = (device: sources.cameras[sources.selectedCamera].device, resolution: current.resolution)
        current.source.close()
        current = OpenSource(source: NoSource(), description: "", controls: nil, sizes: [], resolution: nil)
        do {
            current = try reopen(sources.cameras[cameraIndex].device, resolution)
            sources.selectedCamera = cameraIndex
            notice = nil
        } catch let error as CamrollError {
            current = try reopen(previous.device, previous.resolution)
            notice = "\(sources.cameras[cameraIndex].label): \(error.message)"
        }
        sources.sizes = current.sizes
        sources.selectedSize = current.resolution.flatMap { current.sizes.firstIndex(of: $0) } ?? -1
        self.sources = sources
        screen.sourcesChanged(sources, controls: current.controls)
    }

    private func view(_ frame: Frame, _ phase: PickerView.Phase) -> PickerView {
        PickerView(
            phase: phase, source: current.description, frameSequence: frame.sequence, framesPerSecond: meter.rate,
            control: current.controls?.status, notice: notice, copies: copies)
    }
}

/// What the picker holds between letting one camera go and opening the next: a camera can be
/// open once.
private final class NoSource: FrameSource {
    let deviceName = ""
    let origin = PhotoOrigin.testPattern
    func nextFrame() throws -> Frame { throw CamrollError(.unavailable, "no camera is open") }
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
