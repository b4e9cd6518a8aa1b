/// Which frames after STREAMON a camera drops before the first photo, while its automatic
/// exposure and white balance find the scene.
public enum WarmUp: Sendable, Equatable {
    /// `--skip N`: exactly N frames, whatever they show.
    case frames(Int)
    /// The default (`--skip auto`): frames until the picture's brightness holds steady
    /// (`ExposureSettling`). A scene that is steady from the first frame costs two frames, not
    /// a fixed five; one that takes a webcam a second to expose is not photographed half-dark.
    case untilSettled
}

/// Decides when a camera's auto-exposure has settled, from the brightness of each frame since
/// streaming began: when the last `window` frames agree to within `tolerance` — the way
/// a phone's camera waits for its exposure to converge, from the pictures themselves, since
/// most webcams do not report what their auto-exposure is doing.
///
/// Exposure moves by visible steps while it converges (a UVC webcam brightens over 5-30 frames,
/// more in a dark room), always the same way, so three frames in a row within 2% is the end of
/// it; sensor noise moves the mean of a few thousand samples by far less. A picture that goes up
/// and down and up again by a few percent (flicker under mains lighting, someone moving) is not
/// exposure still moving either: four such frames within 10% count as settled too. A near-black
/// picture is trusted only after longer (`darkWindow`): many sensors send black frames while
/// they start. A scene that never holds still ends the warm-up at `maximumFrames` or
/// `maximumMicroseconds`, and the photo is taken then.
struct ExposureSettling {
    static let window = 3
    static let darkWindow = 8
    /// Mean levels (0-255) below this are "near black".
    static let darkLevel = 16.0
    static let maximumFrames = 60
    static let maximumMicroseconds = 2_000_000

    private var levels: [Double] = []

    /// How far apart the frames of a window may be at `level`: 2% of it, at least 2 levels.
    static func tolerance(at level: Double) -> Double { max(2, level * 0.02) }

    /// Records the next frame's brightness; true once the frames so far count as settled.
    mutating func settled(afterFrameAt level: Double) -> Bool {
        levels.append(level)
        if level < Self.darkLevel {
            return levels.count >= Self.darkWindow && Self.spread(levels.suffix(Self.darkWindow)) <= Self.tolerance(at: level)
        }
        return levels.count >= Self.window && Self.spread(levels.suffix(Self.window)) <= Self.tolerance(at: level)
            || levels.count >= 4 && Self.jitters(levels.suffix(4))
    }

    private static func spread(_ levels: ArraySlice<Double>) -> Double { levels.max()! - levels.min()! }

    /// Four levels that turn back at every step, all within 10% of their mean.
    private static func jitters(_ levels: ArraySlice<Double>) -> Bool {
        let steps = zip(levels, levels.dropFirst()).map { $1 - $0 }
        let turnsEachTime = zip(steps, steps.dropFirst()).allSatisfy { $0 * $1 < 0 }
        return turnsEachTime && spread(levels) <= 0.1 * levels.reduce(0, +) / Double(levels.count)
    }
}

/// The mean brightness (luma, 0-255) of a frame, from a grid of samples (a few thousand whatever
/// the size): enough to see exposure move, at a small cost per warm-up frame, read where the
/// driver put the frame. nil where the bytes cannot be read that way.
enum FrameBrightness {
    /// YUYV, planar YUV (its luma plane first) or RGB24 bytes, rows `rowBytes` apart (0: packed).
    static func level(format: PixelFormat, bytes: UnsafeRawBufferPointer, width: Int, height: Int, rowBytes: Int) -> Double? {
        switch format {
        case .yuyv: return mean(bytes, width: width, height: height, rowBytes: rowBytes, pixelBytes: 2) { Int($0[$0.startIndex]) }
        case .yuv420: return mean(bytes, width: width, height: height, rowBytes: rowBytes, pixelBytes: 1) { Int($0[$0.startIndex]) }
        case .rgb24: return mean(bytes, width: width, height: height, rowBytes: rowBytes, pixelBytes: 3, luma: rgbLuma)
        default: return nil
        }
    }

    /// A JPEG decoded at 1/8 of its size in the DCT domain (each block's average only); nil when
    /// it does not decode.
    static func level(ofJPEG jpeg: [UInt8], decoder: JPEGDecoder) -> Double? {
        guard let (size, rgb) = try? decoder.decodeRGB(jpeg, minimumWidth: 1, fast: true) else { return nil }
        return rgb.withUnsafeBytes { level(format: .rgb24, bytes: $0, width: size.width, height: size.height, rowBytes: 0) }
    }

    /// ITU-R BT.601 luma of an RGB pixel, in 1/256ths.
    private static func rgbLuma(_ pixel: UnsafeRawBufferPointer.SubSequence) -> Int {
        let at = pixel.startIndex
        return (77 * Int(pixel[at]) + 150 * Int(pixel[at + 1]) + 29 * Int(pixel[at + 2]) + 128) >> 8
    }

    /// The mean of `luma` over about 64 x 48 pixels spread evenly over the picture.
    private static func mean(
        _ bytes: UnsafeRawBufferPointer, width: Int, height: Int, rowBytes: Int, pixelBytes: Int,
        luma: (UnsafeRawBufferPointer.SubSequence) -> Int
    ) -> Double? {
        let rowBytes = rowBytes > 0 ? rowBytes : width * pixelBytes
        guard width > 0, height > 0, rowBytes >= width * pixelBytes,
              bytes.count >= (height - 1) * rowBytes + width * pixelBytes
        else { return nil }
        let stepX = max(1, width / 64), stepY = max(1, height / 48)
        var sum = 0
        var count = 0
        for y in stride(from: stepY / 2, to: height, by: stepY) {
            for x in stride(from: stepX / 2, to: width, by: stepX) {
                let at = y * rowBytes + x * pixelBytes
                sum += luma(bytes[at..<(at + pixelBytes)])
                count += 1
            }
        }
        return Double(sum) / Double(count)
    }
}
