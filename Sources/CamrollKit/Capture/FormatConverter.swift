import CV4L2

/// Turns frames of formats the encoder does not take (NV12, Bayer, RGB565, …) into planar
/// YUV 4:2:0 with libv4lconvert.
final class FormatConverter {
    private let data: UnsafeMutableRawPointer
    private var source: v4l2_format
    private var destination: v4l2_format
    private var output: [UInt8]

    init(device: V4L2Device, source: v4l2_format) throws {
        var why = [CChar](repeating: 0, count: 256)
        var converter: UnsafeMutableRawPointer?
        let status = cv4l2_converter_create(device.fd, &converter, &why, why.count)
        guard status == 1, let converter else {
            let format = PixelFormat(fourcc: source.fmt.pix.pixelformat).code
            throw CamrollError(
                status == -1 ? .unavailable : .failure, "cannot convert \(device.path)'s \(format) frames: \(String(nulTerminated: why))",
                hint: status == -1 ? "Install libv4lconvert (Debian: apt install libv4l-0)." : nil)
        }
        self.data = converter
        self.source = source
        var destination = source
        let width = Int(source.fmt.pix.width), height = Int(source.fmt.pix.height)
        destination.fmt.pix.pixelformat = PixelFormat.yuv420.fourcc
        destination.fmt.pix.bytesperline = UInt32(width)
        let size = width * height + 2 * ((width + 1) / 2) * ((height + 1) / 2)
        destination.fmt.pix.sizeimage = UInt32(size)
        self.destination = destination
        self.output = [UInt8](repeating: 0, count: size)
    }

    deinit { cv4l2_converter_destroy(data) }

    func convert(_ frame: Frame) throws -> Frame {
        let produced = frame.bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                cv4l2_convert(data, &source, &destination, input.baseAddress, Int32(input.count), out.baseAddress, Int32(out.count))
            }
        }
        guard produced > 0 else {
            throw CamrollError(.dataError, "cannot convert a \(frame.format.code) frame: \(String(cString: cv4l2_converter_error(data)))")
        }
        var converted = frame
        converted.format = .yuv420
        converted.bytesPerLine = frame.width
        converted.bytes = Array(output.prefix(Int(produced)))
        return converted
    }
}
