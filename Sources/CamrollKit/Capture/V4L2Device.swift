import CV4L2
import FoundationEssentials
import Glibc

/// An open V4L2 device node, through libv4l2 (which also handles devices that need a plugin) or
/// not. Every ioctl goes through `ioctl(_:_:_:)`: EINTR is retried, and a failure names the call.
public final class V4L2Device {
    public let path: String
    /// -1 once closed: a call on it then fails (EBADF), never reaches a descriptor reused since.
    private(set) var fd: Int32
    /// Whether libv4l2 has taken the descriptor on: its format conversions (emulated formats),
    /// plugins (multi-planar-only drivers) and software controls. Until then its calls pass
    /// straight to the kernel.
    private(set) var throughLibv4l2 = false

    /// A failed ioctl: which one, and errno.
    public struct IoctlError: Error, CustomStringConvertible {
        public let request: String
        public let errno: Int32
        public var description: String { "ioctl(\(request)): \(String(cString: strerror(errno)))" }
    }

    public struct Capabilities: Sendable {
        public var driver: String
        public var card: String
        public var bus: String
        public var deviceCaps: UInt32

        public var canCapture: Bool { deviceCaps & CV4L2_CAP_VIDEO_CAPTURE != 0 }
        public var canStream: Bool { deviceCaps & CV4L2_CAP_STREAMING != 0 }
    }

    /// Opens `path` read-write, non-blocking (frames are waited for with poll and a timeout),
    /// through libv4l2 unless `throughLibv4l2` is false (see `useLibv4l2`). Errors are the
    /// user-facing ones: missing node, permission, busy, not a camera.
    public init(path: String, throughLibv4l2: Bool = true) throws {
        self.path = path
        let raw = retryingOnInterrupt { open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC) }
        guard raw >= 0 else { throw AccessCheck.openError(path: path, errno: errno) }
        var caps = v4l2_capability()
        if retryingOnInterrupt({ cv4l2_raw_ioctl(raw, CV4L2_VIDIOC_QUERYCAP, &caps) }) != 0 {
            Glibc.close(raw)
            throw AccessCheck.notACamera(path)
        }
        fd = raw
        if throughLibv4l2 { useLibv4l2() }
    }

    /// Hands the descriptor to libv4l2 (once; before streaming). Opening through it costs what a
    /// camera that offers YUYV or MJPEG itself never needs: libv4lconvert asks the driver for
    /// every format and size, and the plugins are loaded (under TCG, `make vm-bench`'s raw grab
    /// with and without it shows the difference).
    func useLibv4l2() {
        guard !throughLibv4l2 else { return }
        // libv4l2 keeps the descriptor's number; on failure (not installed, or refused) the
        // device is used without it, and what needed it says so (FormatConverter).
        var why = [CChar](repeating: 0, count: 256)
        throughLibv4l2 = cv4l2_fd_open(fd, &why, why.count) >= 0
    }

    /// Closes the node now, not when the last reference goes (a camera unplugged: its driver is
    /// freed only once no one holds it open). Every later call on it fails with EBADF.
    func close() {
        guard fd >= 0 else { return }
        cv4l2_close(fd)
        fd = -1
    }

    deinit { close() }

    @discardableResult
    func ioctl<T>(_ request: UInt, _ name: String, _ argument: inout T) throws -> Int32 {
        while true {
            let result = withUnsafeMutablePointer(to: &argument) { cv4l2_ioctl(fd, request, $0) }
            if result == -1 && errno == EINTR { continue }
            if result == -1 { throw IoctlError(request: name, errno: errno) }
            return result
        }
    }

    public func capabilities() throws -> Capabilities {
        var caps = v4l2_capability()
        try ioctl(CV4L2_VIDIOC_QUERYCAP, "VIDIOC_QUERYCAP", &caps)
        let deviceCaps = caps.capabilities & CV4L2_CAP_DEVICE_CAPS != 0 ? caps.device_caps : caps.capabilities
        return Capabilities(
            driver: Self.string(caps.driver), card: Self.string(caps.card), bus: Self.string(caps.bus_info),
            deviceCaps: deviceCaps)
    }

    // MARK: Formats

    public struct FormatDescription: Sendable {
        public var format: PixelFormat
        public var description: String
        public var compressed: Bool
        public var emulated: Bool
    }

    /// The formats the device offers (libv4l2's emulated ones flagged as such).
    public func formats() -> [FormatDescription] {
        var result: [FormatDescription] = []
        for index in 0..<256 {
            var description = v4l2_fmtdesc()
            description.index = UInt32(index)
            description.type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
            guard (try? ioctl(CV4L2_VIDIOC_ENUM_FMT, "VIDIOC_ENUM_FMT", &description)) != nil else { break }
            result.append(FormatDescription(
                format: PixelFormat(fourcc: description.pixelformat), description: Self.string(description.description),
                compressed: description.flags & CV4L2_FMT_FLAG_COMPRESSED != 0,
                emulated: description.flags & CV4L2_FMT_FLAG_EMULATED != 0))
        }
        return result
    }

    /// Discrete sizes, or the corners of a stepwise/continuous range.
    public func sizes(for format: PixelFormat) -> [Resolution] {
        var result: [Resolution] = []
        for index in 0..<256 {
            var size = v4l2_frmsizeenum()
            size.index = UInt32(index)
            size.pixel_format = format.fourcc
            guard (try? ioctl(CV4L2_VIDIOC_ENUM_FRAMESIZES, "VIDIOC_ENUM_FRAMESIZES", &size)) != nil else { break }
            if size.type == CV4L2_FRMSIZE_TYPE_DISCRETE {
                result.append(Resolution(width: Int(size.discrete.width), height: Int(size.discrete.height)))
            } else {
                result.append(Resolution(width: Int(size.stepwise.min_width), height: Int(size.stepwise.min_height)))
                result.append(Resolution(width: Int(size.stepwise.max_width), height: Int(size.stepwise.max_height)))
                break
            }
        }
        return result
    }

    /// Frame rates (frames per second) the device offers for a format and size, highest first.
    public func frameRates(for format: PixelFormat, size: Resolution) -> [Double] {
        var result: [Double] = []
        for index in 0..<64 {
            var interval = v4l2_frmivalenum()
            interval.index = UInt32(index)
            interval.pixel_format = format.fourcc
            interval.width = UInt32(size.width)
            interval.height = UInt32(size.height)
            guard (try? ioctl(CV4L2_VIDIOC_ENUM_FRAMEINTERVALS, "VIDIOC_ENUM_FRAMEINTERVALS", &interval)) != nil else { break }
            let fraction = interval.type == CV4L2_FRMIVAL_TYPE_DISCRETE ? interval.discrete : interval.stepwise.min
            if fraction.numerator > 0 { result.append(Double(fraction.denominator) / Double(fraction.numerator)) }
            if interval.type != CV4L2_FRMIVAL_TYPE_DISCRETE { break }
        }
        return result.sorted(by: >)
    }

    /// A NUL-terminated text field of a V4L2 structure, as it may be printed: the driver fills
    /// these from what the device says of itself (`String.printable`).
    static func string<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self).printable
        }
    }
}
