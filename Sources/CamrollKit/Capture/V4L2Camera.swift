import CV4L2
import FoundationEssentials
import Glibc

/// A V4L2 camera as a frame source: format negotiation, mmap streaming, poll with a timeout.
/// The stream stays open from the first frame to the last (`--frames`, `--interval`).
public final class V4L2Camera: FrameSource {
    public struct Request: Sendable {
        /// `auto`, or a name `-f` accepts.
        public var format: String = "auto"
        public var resolution: Resolution?
        public var fps: Double?
        /// Frames dropped after STREAMON while exposure and white balance settle.
        public var warmUp: WarmUp = .untilSettled
        public var timeoutMicroseconds: Int = 5_000_000
        public var controls: [(name: String, value: String)] = []
        /// Only one frame will be taken: fewer buffers.
        public var singleFrame = false
        /// Decode every MJPEG frame once, so that a damaged one is dropped rather than saved.
        /// A live preview checks only the frame it keeps: a full decode per frame is the cost
        /// the preview's scaled decode exists to avoid.
        public var checksEveryFrame = true
    }

    /// Warm-up frames dropped where a frame's brightness cannot be read: what `--skip` was by
    /// default before the warm-up watched the pictures.
    static let blindWarmUp = 5
    /// Consecutive broken frames after which the camera is declared faulty.
    static let maxConsecutiveBadFrames = 30
    /// Buffers asked for when streaming: enough to keep frames coming while one is encoded.
    /// A single photo asks for 2 (the fewest most drivers accept): each buffer is a whole frame
    /// the driver allocates and maps, time spent before the first frame.
    static let bufferCount: UInt32 = 4
    static let singleFrameBufferCount: UInt32 = 2

    public let deviceName: String
    /// Which camera this is, to know it again after an unplug (`ReconnectingCamera`).
    public let identity: CameraIdentity
    /// Read when first asked for (only when EXIF is written): enumerating a camera's controls
    /// is dozens of ioctls on the way to the first photo.
    public private(set) lazy var origin = PhotoOrigin.camera(path: deviceName, card: card, controls: CameraControls(device: device))
    private let card: String
    public private(set) var format: PixelFormat
    public private(set) var resolution: Resolution
    public private(set) var framesPerSecond: Double?
    /// Frames the driver flagged as broken, empty, or that failed the MJPEG check.
    public private(set) var droppedFrames = 0
    /// What differed from the request, for the user to be told.
    public private(set) var adjustments: [String] = []
    /// Frames dropped before the first photo, and whether the picture had settled by then
    /// (false: the warm-up's limit ended it; nil: `--skip N`, nothing measured).
    public private(set) var warmUpFrames = 0
    public private(set) var warmUpSettled: Bool?
    /// From STREAMON to the first photo's frame, with the default warm-up.
    public private(set) var warmUpMicroseconds = 0
    /// The frame the warm-up ended on, which the first `nextFrame()` hands out (the picture
    /// settled on it: waiting for another would cost a frame's time for nothing).
    private var settledFrame: Frame?

    private let device: V4L2Device
    private let cancellation: Cancellation?
    private let timeoutMicroseconds: Int
    private var buffers: [(start: UnsafeMutableRawPointer, length: Int)] = []
    private var bytesPerLine = 0
    private var fullRange = false
    private var converter: FormatConverter?
    private lazy var decoder: JPEGDecoder? = try? JPEGDecoder()
    private let checksEveryFrame: Bool
    private var streaming = false

    /// The sizes the camera offers in the format it streams (a picker's size menu).
    public var sizes: [Resolution] { device.sizes(for: format) }

    /// Its controls, to read and change while it streams.
    public var controls: CameraControls { CameraControls(device: device) }

    public init(path: String, request: Request, cancellation: Cancellation? = nil) throws {
        let finding = AccessCheck.examine(path: path)
        guard finding.ok else { throw CamrollError(finding.exitCode, finding.message, hint: finding.hint) }
        deviceName = path
        // Without libv4l2 first: a camera that offers YUYV or MJPEG itself (most do) needs none
        // of it, and opening through it is most of the camera's start-up cost on a slow machine.
        device = try V4L2Device(path: path, throughLibv4l2: false)
        self.cancellation = cancellation
        self.timeoutMicroseconds = request.timeoutMicroseconds
        self.checksEveryFrame = request.checksEveryFrame

        var caps = try device.capabilities()
        if !caps.canCapture || !caps.canStream {
            // A multi-planar-only driver: libv4l2's plugin presents it as a single-planar one.
            device.useLibv4l2()
            caps = try device.capabilities()
        }
        identity = CameraIdentity(capabilities: caps, path: path)
        guard caps.canCapture else {
            throw CamrollError(.noInput, "\(path) (\(caps.card)) cannot capture video",
                               hint: "It may be a metadata node; list the cameras with 'camroll devices'.")
        }
        guard caps.canStream else {
            throw CamrollError(.unavailable, "\(path) (\(caps.card)) does not support streaming I/O")
        }
        var choice = try? Self.choose(request, device: device)
        if choice.map({ !Self.handledWithoutConversion.contains($0.0) }) ?? true {
            // A format camroll does not read itself, or one only libv4l2's conversions offer.
            device.useLibv4l2()
            choice = nil
        }
        (format, resolution) = try choice ?? Self.choose(request, device: device)
        framesPerSecond = nil
        card = caps.card
        try CameraControls(device: device).apply(request.controls)
        try configure(request)
        try startStreaming(bufferCount: request.singleFrame ? Self.singleFrameBufferCount : Self.bufferCount)
        switch request.warmUp {
        case .frames(let count):
            for _ in 0..<count { _ = try dequeue(keep: false) }
            warmUpFrames = count
        case .untilSettled:
            try warmUpUntilSettled()
        }
    }

    deinit { close() }

    /// Streaming stopped, the buffers unmapped and the device closed now: the driver lets
    /// another handle (another process, or this one reopening it) stream at once, where it
    /// refuses (EBUSY) while this one is open. A picker switching cameras closes the one it
    /// leaves; frames asked for afterwards fail.
    public func close() {
        stopStreaming()
        converter = nil
        device.close()
    }

    private func stopStreaming() {
        if streaming {
            var type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
            _ = try? device.ioctl(CV4L2_VIDIOC_STREAMOFF, "VIDIOC_STREAMOFF", &type)
            streaming = false
        }
        for buffer in buffers { cv4l2_munmap(buffer.start, buffer.length) }
        buffers = []
    }

    public func nextFrame() throws -> Frame {
        let fresh = monotonicMicroseconds() - lastDequeue <= Self.staleAfterMicroseconds
        if let frame = settledFrame {
            settledFrame = nil
            if fresh { return frame }
        }
        // After a pause (--interval), the queued buffers hold frames from its start: a frame
        // taken now must show now.
        if !fresh { discardQueuedFrames() }
        while true {
            if let frame = try dequeue(keep: true) { return frame }
        }
    }

    /// The latest frame: waits for one, then takes whichever newer ones are already waiting
    /// in the driver's queue, so that a consumer slower than the camera (a preview) shows now,
    /// not frames from several buffers ago.
    public func newestFrame() throws -> Frame {
        var newest = try nextFrame()
        while true {
            var descriptor = pollfd(fd: device.fd, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 0) > 0, let frame = try dequeue(keep: true) else { return newest }
            newest = frame
        }
    }

    static let staleAfterMicroseconds = 200_000
    private var lastDequeue = Int.max / 2

    /// Hands every buffer the driver has already filled straight back, without waiting.
    private func discardQueuedFrames() {
        while true {
            var buffer = v4l2_buffer()
            buffer.type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
            buffer.memory = CV4L2_MEMORY_MMAP
            guard (try? device.ioctl(CV4L2_VIDIOC_DQBUF, "VIDIOC_DQBUF", &buffer)) != nil else { return }
            requeue(buffer.index)
        }
    }

    // MARK: Negotiation

    /// The formats camroll reads itself, straight from the driver (MJPEG passed through, YUYV
    /// split into planes), in the order `auto` prefers them; any other goes through libv4l2,
    /// which may convert it.
    static let handledWithoutConversion: [PixelFormat] = [.mjpeg, .jpeg, .yuyv]

    /// Picks the pixel format and size: MJPEG (saved as it comes), then YUYV, then anything
    /// else libv4lconvert can turn into YUV; the largest size unless `-r` says otherwise.
    static func choose(_ request: Request, device: V4L2Device) throws -> (PixelFormat, Resolution) {
        let offered = device.formats()
        let native = offered.filter { !$0.emulated }.map(\.format)
        let format: PixelFormat
        if request.format == "auto" {
            let candidates = native.filter { candidate in
                guard let wanted = request.resolution else { return true }
                let sizes = device.sizes(for: candidate)
                return sizes.isEmpty || sizes.contains(wanted)
            }
            let pool = candidates.isEmpty ? native : candidates
            guard let best = handledWithoutConversion.first(where: pool.contains) ?? pool.first else {
                throw CamrollError(.unavailable, "\(device.path) offers no capture format")
            }
            format = best
        } else {
            guard let wanted = PixelFormatName.parse(request.format) else {
                throw CamrollError.usage("invalid format '\(request.format)'")
            }
            guard offered.contains(where: { $0.format == wanted }) else {
                let list = native.map(\.code).joined(separator: ", ")
                throw CamrollError(.unavailable, "\(device.path) does not offer format \(wanted.code)",
                                   hint: "It offers: \(list). See 'camroll formats -d \(device.path)'.")
            }
            format = wanted
        }
        if let size = request.resolution { return (format, size) }
        let largest = device.sizes(for: format).max { $0.width * $0.height < $1.width * $1.height }
        return (format, largest ?? Resolution(width: 640, height: 480))
    }

    private func configure(_ request: Request) throws {
        var v4l2Format = v4l2_format()
        v4l2Format.type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
        v4l2Format.fmt.pix.width = UInt32(resolution.width)
        v4l2Format.fmt.pix.height = UInt32(resolution.height)
        v4l2Format.fmt.pix.pixelformat = format.fourcc
        v4l2Format.fmt.pix.field = CV4L2_FIELD_ANY
        try busyAware { try device.ioctl(CV4L2_VIDIOC_S_FMT, "VIDIOC_S_FMT", &v4l2Format) }

        // The driver may change what was asked: read it back and say so.
        let got = PixelFormat(fourcc: v4l2Format.fmt.pix.pixelformat)
        let size = Resolution(width: Int(v4l2Format.fmt.pix.width), height: Int(v4l2Format.fmt.pix.height))
        // What the driver says bounds every size computed from here on (planes, conversions,
        // the encoder's 32-bit arguments): one past what `-r` takes is refused, not computed with.
        guard size.isWithinLimits else {
            throw CamrollError(.dataError, "\(deviceName) gives \(size) frames; camroll takes sides from 1 to \(Resolution.largestSide)")
        }
        if got != format { adjustments.append("asked for \(format.code), \(deviceName) gives \(got.code)") }
        if size != resolution { adjustments.append("asked for \(resolution), \(deviceName) gives \(size)") }
        format = got
        resolution = size
        bytesPerLine = Int(v4l2Format.fmt.pix.bytesperline)
        fullRange = v4l2Format.fmt.pix.quantization == 1  // V4L2_QUANTIZATION_FULL_RANGE
        if !Self.encodable.contains(format) {
            converter = try FormatConverter(device: device, source: v4l2Format)
        }
        try setFrameRate(request.fps)
    }

    /// Formats the pipeline takes as they come; others go through libv4lconvert.
    static let encodable: Set<PixelFormat> = [.mjpeg, .jpeg, .yuyv, .yuv420, .rgb24]

    /// A rate as V4L2's seconds a frame, to a thousandth of a frame a second; nil for one too
    /// low to say so. The rates a device lists come from its descriptors: a UVC interval of
    /// 100 ns is 10 000 000 frames a second, whose thousandths do not fit in 32 bits (that
    /// trapped), so such a rate goes in whole frames a second.
    static func timePerFrame(framesPerSecond rate: Double) -> v4l2_fract? {
        guard rate.isFinite else { return nil }
        let thousandths = (rate * 1000).rounded()
        if thousandths <= Double(UInt32.max) {
            return thousandths >= 1 ? v4l2_fract(numerator: 1000, denominator: UInt32(thousandths)) : nil
        }
        return v4l2_fract(numerator: 1, denominator: UInt32(min(rate.rounded(), Double(UInt32.max))))
    }

    /// `--fps`, or the highest rate the device offers for this format and size (drivers often
    /// default to a low one: vivid to 5 fps).
    private func setFrameRate(_ requested: Double?) throws {
        guard let wanted = requested ?? device.frameRates(for: format, size: resolution).first,
              let timePerFrame = Self.timePerFrame(framesPerSecond: wanted)
        else { return }
        var parameters = v4l2_streamparm()
        parameters.type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
        guard (try? device.ioctl(CV4L2_VIDIOC_G_PARM, "VIDIOC_G_PARM", &parameters)) != nil,
              parameters.parm.capture.capability & CV4L2_CAP_TIMEPERFRAME != 0
        else { return }
        parameters.parm.capture.timeperframe = timePerFrame
        do {
            try device.ioctl(CV4L2_VIDIOC_S_PARM, "VIDIOC_S_PARM", &parameters)
        } catch let error as V4L2Device.IoctlError {
            if error.errno == EBUSY { throw streamError(error) }
            // Some devices have no settable rate; that only matters when one was asked for.
            if requested != nil { adjustments.append("cannot set the frame rate of \(deviceName): \(error)") }
            return
        }
        let fraction = parameters.parm.capture.timeperframe
        if fraction.numerator > 0 {
            let granted = Double(fraction.denominator) / Double(fraction.numerator)
            framesPerSecond = granted
            if let requested, abs(granted - requested) / requested > 0.01 {
                adjustments.append("asked for \(Format.significant(requested, 3)) fps, " + deviceName
                                   + " gives \(Format.significant(granted, 3)) fps")
            }
        }
    }

    // MARK: Streaming

    private func startStreaming(bufferCount: UInt32) throws {
        var request = v4l2_requestbuffers()
        request.count = bufferCount
        request.type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
        request.memory = CV4L2_MEMORY_MMAP
        try busyAware { try device.ioctl(CV4L2_VIDIOC_REQBUFS, "VIDIOC_REQBUFS", &request) }
        guard request.count >= 2 else {
            throw CamrollError(.unavailable, "\(deviceName) gave \(request.count) buffer(s); at least 2 are needed")
        }
        for index in 0..<request.count {
            var buffer = v4l2_buffer()
            buffer.type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
            buffer.memory = CV4L2_MEMORY_MMAP
            buffer.index = index
            try device.ioctl(CV4L2_VIDIOC_QUERYBUF, "VIDIOC_QUERYBUF", &buffer)
            guard let start = cv4l2_mmap(Int(buffer.length), device.fd, Int64(buffer.m.offset)),
                  start != UnsafeMutableRawPointer(bitPattern: -1)
            else { throw CamrollError(.ioError, "cannot map \(deviceName)'s buffers: \(SystemError("mmap").reason)") }
            buffers.append((start, Int(buffer.length)))
        }
        for index in 0..<request.count { try queue(index) }
        var type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
        try busyAware { try device.ioctl(CV4L2_VIDIOC_STREAMON, "VIDIOC_STREAMON", &type) }
        streaming = true
    }

    private func queue(_ index: UInt32) throws {
        var buffer = v4l2_buffer()
        buffer.type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
        buffer.memory = CV4L2_MEMORY_MMAP
        buffer.index = index
        do {
            try device.ioctl(CV4L2_VIDIOC_QBUF, "VIDIOC_QBUF", &buffer)
        } catch let error as V4L2Device.IoctlError {
            throw streamError(error)
        }
    }

    /// Waits for the next buffer and hands it back to the driver. Returns nil for a dropped
    /// frame (flagged ERROR, empty, or a broken MJPEG frame), or when `keep` is false.
    private func dequeue(keep: Bool) throws -> Frame? {
        try dequeue { bytes, sequence, capturedAt in
            guard keep, let frame = try makeFrame(bytes, sequence: sequence, capturedAt: capturedAt) else { return nil }
            return try isWhole(frame) ? frame : nil
        }
    }

    /// Waits for the next buffer, lends its bytes to `use` (with the frame's sequence number and
    /// time), then hands the buffer back to the driver. nil for a frame the driver flagged as
    /// broken or empty (counted as dropped), else what `use` returns.
    private func dequeue<Result>(
        _ use: (_ bytes: UnsafeRawBufferPointer, _ sequence: Int, _ capturedAt: Date) throws -> Result?
    ) throws -> Result? {
        try waitForFrame()
        var buffer = v4l2_buffer()
        buffer.type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
        buffer.memory = CV4L2_MEMORY_MMAP
        do {
            try device.ioctl(CV4L2_VIDIOC_DQBUF, "VIDIOC_DQBUF", &buffer)
        } catch let error as V4L2Device.IoctlError where error.errno == EAGAIN {
            return nil
        } catch let error as V4L2Device.IoctlError {
            throw streamError(error)
        }
        let monotonicNow = monotonicMicroseconds()
        let capturedAt = FrameClock.wallTime(
            timestampMicroseconds: Int(buffer.timestamp.tv_sec) * 1_000_000 + Int(buffer.timestamp.tv_usec),
            monotonic: buffer.flags & CV4L2_BUF_FLAG_TIMESTAMP_MASK == CV4L2_BUF_FLAG_TIMESTAMP_MONOTONIC,
            monotonicNow: monotonicNow, wallNow: Date())
        lastDequeue = monotonicNow
        defer { requeue(buffer.index) }
        let used = Int(buffer.bytesused)
        guard buffer.flags & CV4L2_BUF_FLAG_ERROR == 0, used > 0, Int(buffer.index) < buffers.count else {
            try countDrop("the driver flagged a frame as broken")
            return nil
        }
        let mapped = buffers[Int(buffer.index)]
        return try use(UnsafeRawBufferPointer(start: mapped.start, count: min(used, mapped.length)), Int(buffer.sequence), capturedAt)
    }

    /// The frame in a buffer's bytes, copied out of it: an MJPEG frame made a whole JPEG, another
    /// format the pipeline does not take converted. nil for a broken MJPEG frame (dropped).
    private func makeFrame(_ bytes: UnsafeRawBufferPointer, sequence: Int, capturedAt: Date) throws -> Frame? {
        guard let start = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        let data = try ImageMemory.copy(start, count: bytes.count, width: resolution.width, height: resolution.height)
        var frame = Frame(
            format: format, width: resolution.width, height: resolution.height, bytesPerLine: bytesPerLine,
            bytes: data, sequence: sequence, capturedAt: capturedAt, fullRange: fullRange)
        if format == .mjpeg || format == .jpeg {
            do {
                frame.bytes = try MJPEGFrame.jpeg(from: data)
                frame.format = .mjpeg
            } catch let problem as MJPEGFrame.Problem {
                try countDrop("broken MJPEG frame: \(problem)")
                return nil
            }
        } else if let converter {
            frame = try converter.convert(frame)
        }
        return frame
    }

    /// An MJPEG frame is decoded once, so that a frame with damaged image data is dropped rather
    /// than saved N times; false (counted as dropped) for one that does not decode.
    private func isWhole(_ frame: Frame) throws -> Bool {
        if frame.format == .mjpeg && checksEveryFrame {
            do {
                _ = try decoder?.decodeRGB(frame.bytes)
            } catch let error as CamrollError {
                try countDrop("broken MJPEG frame: \(error.message)")
                return false
            }
        }
        consecutiveBadFrames = 0
        return true
    }

    /// The default warm-up: frames until their brightness holds steady (`ExposureSettling`), or
    /// its limits; the frame it ends on is the first photo.
    private func warmUpUntilSettled() throws {
        var settling = ExposureSettling()
        let start = monotonicMicroseconds()
        let deadline = start + ExposureSettling.maximumMicroseconds
        var measured = 0
        while true {
            let photo: Frame? = try dequeue { bytes, sequence, capturedAt in
                guard let measurement = try measure(bytes, sequence: sequence, capturedAt: capturedAt) else { return nil }
                measured += 1
                consecutiveBadFrames = 0
                let level = measurement.level
                let settled = level.map { settling.settled(afterFrameAt: $0) } ?? (measured > Self.blindWarmUp)
                guard settled || measured >= ExposureSettling.maximumFrames || monotonicMicroseconds() >= deadline else {
                    return nil
                }
                warmUpSettled = level == nil ? nil : settled
                guard let kept = try measurement.frame ?? makeFrame(bytes, sequence: sequence, capturedAt: capturedAt) else {
                    return nil
                }
                // An MJPEG frame whose brightness was read has been decoded (at 1/8, which reads
                // every coefficient of its scan, as the full check would: ScaledDecodeCheckTests):
                // the full decode would add time to the first photo and nothing else.
                if kept.format == .mjpeg && level != nil { return kept }
                return try isWhole(kept) ? kept : nil
            }
            if let photo {
                settledFrame = photo
                warmUpFrames = measured - 1
                warmUpMicroseconds = monotonicMicroseconds() - start
                Trace.mark("warm-up: \(warmUpFrames) frames, \(warmUpSettled.map { $0 ? "settled" : "limit reached" } ?? "not measured")")
                return
            }
        }
    }

    /// A warm-up frame's brightness (nil where it cannot be read), and the frame itself where
    /// reading it meant making it; nil for a broken frame (dropped). Read where the driver put
    /// it (YUYV, RGB: nothing copied), from libv4lconvert's output, or from an MJPEG frame decoded
    /// at 1/8 scale.
    private func measure(
        _ bytes: UnsafeRawBufferPointer, sequence: Int, capturedAt: Date
    ) throws -> (level: Double?, frame: Frame?)? {
        guard format == .mjpeg || format == .jpeg || converter != nil else {
            let level = FrameBrightness.level(
                format: format, bytes: bytes, width: resolution.width, height: resolution.height, rowBytes: bytesPerLine)
            return (level, nil)
        }
        guard let frame = try makeFrame(bytes, sequence: sequence, capturedAt: capturedAt) else { return nil }
        guard frame.format == .mjpeg else {
            let level = frame.bytes.withUnsafeBytes {
                FrameBrightness.level(format: frame.format, bytes: $0, width: frame.width, height: frame.height, rowBytes: frame.bytesPerLine)
            }
            return (level, frame)
        }
        guard let decoder else { return (nil, frame) }
        guard let level = FrameBrightness.level(ofJPEG: frame.bytes, decoder: decoder) else {
            try countDrop("broken MJPEG frame: it does not decode")
            return nil
        }
        return (level, frame)
    }

    private var consecutiveBadFrames = 0
    /// Buffers the driver would not take back (a failed QBUF): streaming goes on with fewer.
    public private(set) var lostBuffers = 0

    private func requeue(_ index: UInt32) {
        do {
            try queue(index)
        } catch {
            lostBuffers += 1
        }
    }

    func countDrop(_ reason: String) throws {
        droppedFrames += 1
        consecutiveBadFrames += 1
        if consecutiveBadFrames >= Self.maxConsecutiveBadFrames {
            throw CamrollError(.dataError, "\(deviceName) sent \(consecutiveBadFrames) bad frames in a row (\(reason))")
        }
    }

    /// poll(2) in slices, so Ctrl-C is noticed while waiting; the whole wait is `--timeout`.
    private func waitForFrame() throws {
        guard lostBuffers < buffers.count else {
            throw CamrollError(.ioError, "\(deviceName) took none of its buffers back (VIDIOC_QBUF failed \(lostBuffers) times)")
        }
        let deadline = monotonicMicroseconds() + timeoutMicroseconds
        while true {
            if cancellation?.isCancelled == true { throw CancelledWhileWaiting() }
            let left = deadline - monotonicMicroseconds()
            if left <= 0 {
                throw CamrollError(
                    .frameTimeout,
                    "no frame from \(deviceName) within \(Units.duration(microseconds: timeoutMicroseconds))"
                        + " (\(format.code) \(resolution)\(framesPerSecond.map { " at \(Format.significant($0, 3)) fps" } ?? ""))",
                    hint: "The camera may be stalled, or too slow for this format and size: try a smaller -r, "
                        + "-f mjpeg, or a longer --timeout.")
            }
            var descriptor = pollfd(fd: device.fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(min(left, 100_000) / 1000 + 1))
            if ready < 0 {
                if errno == EINTR { continue }
                throw CamrollError(.ioError, "poll(\(deviceName)): \(SystemError("poll").reason)")
            }
            if ready > 0 { return }  // readable, or an error DQBUF will report
        }
    }

    private func streamError(_ error: V4L2Device.IoctlError) -> CamrollError {
        switch error.errno {
        case ENODEV, ENXIO:
            return CamrollError(.ioError, "\(deviceName) was disconnected",
                                hint: "Frames saved before it went away are kept and recorded.", systemErrno: ENODEV)
        case EBUSY:
            return AccessCheck.busy(deviceName)
        case EIO where error.request == "VIDIOC_DQBUF" || error.request == "VIDIOC_QBUF":
            return CamrollError(.ioError, "\(deviceName) stopped delivering frames (\(error))",
                                hint: "Frames saved before it failed are kept and recorded.")
        default:
            return CamrollError(.ioError, "\(deviceName): \(error)")
        }
    }

    private func busyAware(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as V4L2Device.IoctlError {
            throw streamError(error)
        }
    }
}

/// Thrown out of a frame wait by Ctrl-C; the batch records the run as cancelled.
struct CancelledWhileWaiting: Error {}

/// When a frame was taken, on the wall clock. The driver stamps each buffer on the monotonic
/// clock (`V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC`, as UVC and vivid do) when its first or last byte
/// came in; dequeued later — a frame that waited in the queue while the previous one was saved
/// — its time is that stamp, moved onto the wall clock by how long ago it was. A driver whose
/// stamps are not monotonic (or are missing, or from the future, or absurdly old) gets the
/// moment of dequeuing.
enum FrameClock {
    /// A stamp older than this is not believed (a driver's clock gone astray).
    static let oldestMicroseconds = 60_000_000

    static func wallTime(timestampMicroseconds stamp: Int, monotonic: Bool, monotonicNow: Int, wallNow: Date) -> Date {
        let age = monotonicNow - stamp
        guard monotonic, stamp > 0, age >= 0, age <= oldestMicroseconds else { return wallNow }
        return wallNow.addingTimeInterval(-Double(age) / 1e6)
    }
}
