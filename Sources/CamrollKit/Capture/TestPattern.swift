import FoundationEssentials
import Glibc

/// The built-in camera: 75% colour bars in YUYV (BT.601 limited range, like vivid's default),
/// with the frame number drawn in the lower left so that distinct frames differ. In MJPEG
/// (`-f mjpeg`), as a USB camera's compressed mode delivers them: a loop of `mjpegLoop` frames,
/// each encoded the first time it comes round, then handed out as it is — a camera's encoder is
/// in the camera, so the frames cost camroll what a camera's would (the number drawn is the
/// frame's place in the loop; `Frame.sequence` counts on).
public final class TestPattern: FrameSource {
    public let deviceName = "pattern"
    public let origin = PhotoOrigin.testPattern
    public let resolution: Resolution
    /// `.yuyv` or `.mjpeg`.
    public let format: PixelFormat
    private let barRows: [UInt8]
    private var frameNumber = 0
    static let mjpegLoop = 30
    private var encodedLoop: [[UInt8]] = []
    private var encoder: JPEGEncoder?

    /// Width must be even: YUYV stores two pixels in four bytes.
    /// The sizes a picker's menu offers for the pattern: the common camera sizes.
    static let offeredSizes = [
        Resolution(width: 640, height: 480), Resolution(width: 1280, height: 720), Resolution(width: 1920, height: 1080),
    ]

    public init(resolution: Resolution, format: PixelFormat = .yuyv) {
        self.resolution = resolution
        self.format = format
        self.barRows = Self.colourBarRow(width: resolution.width)
    }

    public func nextFrame() throws -> Frame {
        guard format == .mjpeg else { return try yuyvFrame() }
        let place = frameNumber % Self.mjpegLoop
        if place == encodedLoop.count {
            let raw = try yuyvFrame()
            let encoder = try self.encoder ?? JPEGEncoder()
            self.encoder = encoder
            // Quality 80 at 4:2:2, what USB cameras' MJPEG modes commonly send.
            encodedLoop.append(try encoder.encode(raw, quality: 80).bytes)
        } else {
            frameNumber += 1
        }
        return Frame(
            format: .mjpeg, width: resolution.width, height: resolution.height, bytesPerLine: 0,
            bytes: encodedLoop[place], sequence: frameNumber, capturedAt: Date())
    }

    private func yuyvFrame() throws -> Frame {
        frameNumber += 1
        let width = resolution.width
        let height = resolution.height
        let stride = width * 2
        var bytes = try ImageMemory.pixels(width: width, height: height, bytesPerPixel: 2)
        bytes.withUnsafeMutableBufferPointer { frame in
            barRows.withUnsafeBufferPointer { row in
                for y in 0..<height {
                    frame.baseAddress!.advanced(by: y * stride).update(from: row.baseAddress!, count: stride)
                }
            }
            drawCounter((frameNumber - 1) % (format == .mjpeg ? Self.mjpegLoop : Int.max) + 1, into: frame, width: width, height: height)
        }
        return Frame(
            format: .yuyv, width: width, height: height, bytesPerLine: stride, bytes: bytes,
            sequence: frameNumber, capturedAt: Date())
    }

    /// Eight bars: white, yellow, cyan, green, magenta, red, blue, black at 75% amplitude.
    static func colourBarRow(width: Int) -> [UInt8] {
        let rgb: [(Double, Double, Double)] = [
            (1, 1, 1), (1, 1, 0), (0, 1, 1), (0, 1, 0), (1, 0, 1), (1, 0, 0), (0, 0, 1), (0, 0, 0),
        ]
        let yuv = rgb.map { (r, g, b) in limitedRangeYUV(r: 0.75 * r, g: 0.75 * g, b: 0.75 * b) }
        var row = [UInt8](repeating: 0, count: width * 2)
        for pair in 0..<(width / 2) {
            let bar = min(yuv.count - 1, (pair * 2) * yuv.count / width)
            let (y, u, v) = yuv[bar]
            row[pair * 4] = y
            row[pair * 4 + 1] = u
            row[pair * 4 + 2] = y
            row[pair * 4 + 3] = v
        }
        return row
    }

    static func limitedRangeYUV(r: Double, g: Double, b: Double) -> (UInt8, UInt8, UInt8) {
        let y = 16 + 219 * (0.299 * r + 0.587 * g + 0.114 * b)
        let u = 128 + 224 * (-0.168736 * r - 0.331264 * g + 0.5 * b)
        let v = 128 + 224 * (0.5 * r - 0.418688 * g - 0.081312 * b)
        func clamp(_ x: Double) -> UInt8 { UInt8(max(0, min(255, x.rounded()))) }
        return (clamp(y), clamp(u), clamp(v))
    }

    /// 3×5 bitmaps of the digits 0–9, one row per 3 bits.
    private static let digitGlyphs: [[UInt8]] = [
        [7, 5, 5, 5, 7], [2, 6, 2, 2, 7], [7, 1, 7, 4, 7], [7, 1, 7, 1, 7], [5, 5, 7, 1, 1],
        [7, 4, 7, 1, 7], [7, 4, 7, 5, 7], [7, 1, 1, 1, 1], [7, 5, 7, 5, 7], [7, 5, 7, 1, 7],
    ]

    /// White digits on a black box, scaled with the picture (about 1/12 of its height).
    private func drawCounter(
        _ number: Int, into frame: UnsafeMutableBufferPointer<UInt8>, width: Int, height: Int
    ) {
        let digits = Array(String(number).utf8).map { Int($0 - UInt8(ascii: "0")) }
        let cell = max(1, height / 60)
        let glyphWidth = 4 * cell
        let boxWidth = min(width, digits.count * glyphWidth + cell)
        let boxHeight = min(height, 7 * cell)
        let top = height - boxHeight
        func paint(x: Int, y: Int, luma: UInt8) {
            guard x >= 0, x < width, y >= 0, y < height else { return }
            // Y0 U Y1 V: chroma is shared by a pixel pair; neutral keeps the digits colourless.
            let pair = y * width * 2 + (x & ~1) * 2
            frame[pair + (x & 1) * 2] = luma
            frame[pair + 1] = 128
            frame[pair + 3] = 128
        }
        for y in top..<height {
            for x in 0..<boxWidth { paint(x: x, y: y, luma: 16) }
        }
        for (index, digit) in digits.enumerated() {
            let left = cell + index * glyphWidth
            for (row, bits) in Self.digitGlyphs[digit].enumerated() {
                for column in 0..<3 where bits & (4 >> UInt8(column)) != 0 {
                    for dy in 0..<cell {
                        for dx in 0..<cell {
                            paint(x: left + column * cell + dx, y: top + cell + row * cell + dy, luma: 235)
                        }
                    }
                }
            }
        }
    }
}
