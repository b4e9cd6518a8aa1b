import FoundationEssentials
import Glibc

/// A V4L2 pixel format, identified by its four-character code.
public struct PixelFormat: Hashable, Sendable, CustomStringConvertible {
    public let fourcc: UInt32

    public init(fourcc: UInt32) { self.fourcc = fourcc }

    /// `"YUYV"` → the code V4L2 uses for it; nil unless exactly four ASCII characters.
    public init?(code: String) {
        let bytes = Array(code.utf8)
        guard bytes.count == 4, bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) else { return nil }
        fourcc = bytes.enumerated().reduce(0) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
    }

    /// The four characters, trailing blanks trimmed (`"MJPG"`, `"YUYV"`, `"Y16"`).
    public var code: String {
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: fourcc >> (8 * UInt32($0))) }
        let printable = bytes.map { $0 >= 0x20 && $0 < 0x7f ? $0 : UInt8(ascii: "?") }
        return String(decoding: printable, as: UTF8.self).trimmed()
    }

    public var description: String { code }

    public static let yuyv = PixelFormat(code: "YUYV")!
    public static let mjpeg = PixelFormat(code: "MJPG")!
    public static let jpeg = PixelFormat(code: "JPEG")!
}

/// One picture as a source delivered it, before encoding.
public struct Frame: Sendable {
    public var format: PixelFormat
    public var width: Int
    public var height: Int
    /// Bytes from the start of one row to the next (V4L2's bytesperline); 0 for compressed data.
    public var bytesPerLine: Int
    public var bytes: [UInt8]
    /// The source's frame counter (V4L2 buffer sequence; the pattern's frame number).
    public var sequence: Int
    /// Wall-clock time the frame was taken (a camera's: the driver's buffer timestamp), or, for
    /// a picture read from a file or URL, when camroll read it: see `isShotTime`.
    public var capturedAt: Date
    /// `capturedAt` is when the picture was taken (a camera, the pattern). False for a file or a
    /// URL: the time is camroll's, and the picture's own EXIF alone says when it was taken, so
    /// none is written for it.
    public var isShotTime: Bool
    /// YUV samples use the whole 0–255 range. V4L2's default for YUV, and the test pattern's,
    /// is limited range (Y 16–235, Cb/Cr 16–240); JPEG's is full range.
    public var fullRange: Bool
    /// The EXIF block ("Exif\0\0" and its TIFF structure) of a picture file decoded to pixels
    /// (a PNG's eXIf chunk), the base of the one written, as a JPEG's own APP1 is. Nil for
    /// everything else: a JPEG's stays in its bytes.
    public var sourceExif: [UInt8]?

    public init(
        format: PixelFormat, width: Int, height: Int, bytesPerLine: Int, bytes: [UInt8],
        sequence: Int, capturedAt: Date, fullRange: Bool = false, isShotTime: Bool = true
    ) {
        self.format = format
        self.width = width
        self.height = height
        self.bytesPerLine = bytesPerLine
        self.bytes = bytes
        self.sequence = sequence
        self.capturedAt = capturedAt
        self.fullRange = fullRange
        self.isShotTime = isShotTime
    }
}

/// Anything that produces frames: a camera, the built-in test pattern, an image file.
public protocol FrameSource: AnyObject {
    /// How the catalog names this source (`pattern`, `file:/abs/path`, `/dev/video0`).
    var deviceName: String { get }
    /// Who takes the pictures, for their EXIF.
    var origin: PhotoOrigin { get }
    /// The next frame. Throws `CamrollError` (timeout, corrupt data, device gone).
    func nextFrame() throws -> Frame
    /// The most recent frame, skipping any that waited while the caller was busy (a live
    /// preview). The same as `nextFrame()` where frames do not queue up.
    func newestFrame() throws -> Frame
    /// Lets the source go now, not when the last reference to it does (a camera: streaming
    /// stopped, the device closed, so that it can be opened again at once); nothing is asked of
    /// it afterwards. A source that holds nothing does nothing.
    func close()
}

extension FrameSource {
    public func newestFrame() throws -> Frame { try nextFrame() }
    public func close() {}
}

/// A frame already taken (pick's shutter), offered to the saver as a source of its own: every
/// save of it is that same frame.
public final class HeldFrame: FrameSource {
    public let deviceName: String
    public let origin: PhotoOrigin
    private let frame: Frame

    public init(_ frame: Frame, from source: FrameSource) {
        self.frame = frame
        deviceName = source.deviceName
        origin = source.origin
    }

    public func nextFrame() throws -> Frame { frame }
}

/// Width × height, as given to `--resolution` (`1280x720`).
public struct Resolution: Hashable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    public init?(parsing text: String) {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0
        else { return nil }
        self.init(width: w, height: h)
    }

    public var description: String { "\(width)x\(height)" }

    /// The widest or tallest frame camroll works with: what `-r` takes, and what a driver may
    /// grant (every size computed from a frame's stays in range below it).
    public static let largestSide = 16384

    /// Both sides from 1 to `largestSide`.
    public var isWithinLimits: Bool {
        (1...Self.largestSide).contains(width) && (1...Self.largestSide).contains(height)
    }
}
