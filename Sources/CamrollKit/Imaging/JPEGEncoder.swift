import CPixels
import CTurboJPEG

/// A JPEG ready to save, and what it shows.
public struct EncodedImage: Sendable {
    public var bytes: [UInt8]
    public var width: Int
    public var height: Int
    /// The quality it was encoded at; nil when the bytes came from the source as they are.
    public var quality: Int?
    /// The capture's thumbnail, when the encoder could make it on the way from the frame's own
    /// planes (see `JPEGEncoder.encode`); nil: `ImagePipeline.thumbnail` decodes the JPEG for it.
    public var thumbnail: [UInt8]? = nil
}

/// Encodes raw frames to JPEG with libturbojpeg (YUV frames through libjpeg itself, a strip of rows
/// at a time: see cpixels.h). Reuses its buffers from frame to frame.
public final class JPEGEncoder {
    private let handle: tjhandle
    /// YUV frames' encoder, through libjpeg a strip of rows at a time (cpixels.h).
    private let yuvEncoder: OpaquePointer
    private var output: UnsafeMutablePointer<UInt8>?
    private var outputCapacity = 0

    public init() throws {
        guard let handle = tjInitCompress() else {
            throw CamrollError(.failure, "cannot initialise the JPEG encoder: \(Self.globalError())")
        }
        guard let yuvEncoder = cpixels_jpeg_encoder_create() else {
            tjDestroy(handle)
            throw CamrollError(.failure, "cannot initialise the JPEG encoder: out of memory")
        }
        self.handle = handle
        self.yuvEncoder = yuvEncoder
    }

    deinit {
        tjFree(output)
        tjDestroy(handle)
        cpixels_jpeg_encoder_destroy(yuvEncoder)
    }

    /// Encodes YUYV (straight to 4:2:2, never through RGB), planar YUV 4:2:0 or RGB24. With
    /// `thumbnailBox`, a YUYV frame's thumbnail is made too, from the frame itself: no JPEG
    /// decoding, and none of the decoder's code run for it (see Thumbnail).
    public func encode(_ frame: Frame, quality: Int, thumbnailBox: Resolution? = nil) throws -> EncodedImage {
        guard frame.width > 0, frame.height > 0, !frame.bytes.isEmpty else {
            throw CamrollError(.dataError, "empty \(frame.width)x\(frame.height) frame: nothing to encode")
        }
        var thumbnail: [UInt8]?
        let bytes: [UInt8]
        switch frame.format {
        case .yuyv:
            bytes = try encodeYUYV(frame, quality: quality)
            if let thumbnailBox { thumbnail = try thumbnailOfYUYV(frame, fitting: thumbnailBox) }
        case .yuv420: bytes = try encodeYUV420(frame, quality: quality)
        case .rgb24: bytes = try encodeRGB24(frame, quality: quality)
        default:
            throw CamrollError(.dataError, "cannot encode pixel format \(frame.format) to JPEG")
        }
        return EncodedImage(bytes: bytes, width: frame.width, height: frame.height, quality: quality, thumbnail: thumbnail)
    }

    /// The thumbnail of a YUYV frame `encodeYUYV` has checked: the frame averaged down to the
    /// thumbnail's size as pairs of pixels (Y0 Cb Y1 Cr, four samples), which gives each
    /// thumbnail pixel's Cb and Cr, and its luma as the mean of Y0 and Y1 — all of the pixels it
    /// covers, where it covers two or more columns; a thumbnail wider than half the frame takes
    /// its luma from the frame averaged as single pixels (Y and a chroma) instead. Then limited
    /// range expanded, and encoded 4:4:4 at Thumbnail.quality. Nil if memory ran out (the
    /// pipeline then decodes the JPEG for it).
    private func thumbnailOfYUYV(_ frame: Frame, fitting box: Resolution) throws -> [UInt8]? {
        let size = Thumbnail.fittedSize(frame.width, frame.height, inside: box)
        let count = size.width * size.height
        guard let pairs = Thumbnail.averaged(
            frame.bytes, width: frame.width / 2, height: frame.height, channels: 4, stride: frame.bytesPerLine, to: size)
        else { return nil }
        let cb = (0..<count).map { pairs[4 * $0 + 1] }, cr = (0..<count).map { pairs[4 * $0 + 3] }
        let luma: [UInt8]
        if size.width * 2 <= frame.width {
            luma = (0..<count).map { (i: Int) -> UInt8 in
                let sum = Int(pairs[4 * i]) + Int(pairs[4 * i + 2])
                return UInt8((sum + 1) / 2)
            }
        } else {
            guard let pixels = Thumbnail.averaged(
                frame.bytes, width: frame.width, height: frame.height, channels: 2, stride: frame.bytesPerLine, to: size)
            else { return nil }
            luma = (0..<count).map { pixels[2 * $0] }
        }
        func inFullRange(_ plane: [UInt8], chroma: Bool) -> [UInt8] {
            frame.fullRange ? plane : Self.expanded(plane, chroma: chroma)
        }
        return try compressPlanes(
            inFullRange(luma, chroma: false), inFullRange(cb, chroma: true), inFullRange(cr, chroma: true),
            width: size.width, height: size.height, strides: [size.width, size.width, size.width],
            subsampling: TJSAMP_444, quality: Thumbnail.quality)
    }

    private static func expanded(_ plane: [UInt8], chroma: Bool) -> [UInt8] {
        var out = plane
        plane.withUnsafeBufferPointer { from in
            out.withUnsafeMutableBufferPointer { to in cpixels_expand_plane(from.baseAddress, to.baseAddress, from.count, chroma ? 1 : 0) }
        }
        return out
    }

    private func encodeYUYV(_ frame: Frame, quality: Int) throws -> [UInt8] {
        let width = frame.width, height = frame.height
        guard width % 2 == 0, frame.bytesPerLine >= width * 2,
            frame.bytes.count >= frame.bytesPerLine * (height - 1) + width * 2
        else { throw CamrollError(.dataError, "YUYV frame of \(frame.bytes.count) bytes is too short for \(width)x\(height)") }
        return try encodeYUV(width: width, height: height, subsampling: TJSAMP_422) { output, capacity, size in
            frame.bytes.withUnsafeBufferPointer { source in
                cpixels_jpeg_encode_yuyv(
                    yuvEncoder, source.baseAddress, frame.bytesPerLine, Int32(width), Int32(height),
                    frame.fullRange ? 1 : 0, Int32(quality), output, capacity, &size)
            }
        }
    }

    private func encodeYUV420(_ frame: Frame, quality: Int) throws -> [UInt8] {
        let width = frame.width, height = frame.height
        let chromaSize = ((width + 1) / 2) * ((height + 1) / 2)
        guard frame.bytes.count >= width * height + 2 * chromaSize else {
            throw CamrollError(.dataError, "YUV 4:2:0 frame of \(frame.bytes.count) bytes is too short for \(width)x\(height)")
        }
        return try encodeYUV(width: width, height: height, subsampling: TJSAMP_420) { output, capacity, size in
            frame.bytes.withUnsafeBufferPointer { planes in
                cpixels_jpeg_encode_i420(
                    yuvEncoder, planes.baseAddress, Int32(width), Int32(height), frame.fullRange ? 1 : 0,
                    Int32(quality), output, capacity, &size)
            }
        }
    }

    /// The JPEG `encode` writes into the output buffer (given its capacity; it sets the size),
    /// copied out of it.
    private func encodeYUV(
        width: Int, height: Int, subsampling: TJSAMP,
        _ encode: (UnsafeMutablePointer<UInt8>?, Int, inout Int) -> Int32
    ) throws -> [UInt8] {
        let capacity = try ensureOutput(width: width, height: height, subsampling: subsampling)
        var size = 0
        guard encode(output, capacity, &size) == 0, let output else {
            throw CamrollError(.dataError, "JPEG encoding failed: \(String(cString: cpixels_jpeg_encoder_error(yuvEncoder)))")
        }
        return Array(UnsafeBufferPointer(start: output, count: size))
    }

    private func encodeRGB24(_ frame: Frame, quality: Int) throws -> [UInt8] {
        let width = frame.width, height = frame.height
        let pitch = frame.bytesPerLine > 0 ? frame.bytesPerLine : width * 3
        guard frame.bytes.count >= pitch * (height - 1) + width * 3 else {
            throw CamrollError(.dataError, "RGB frame of \(frame.bytes.count) bytes is too short for \(width)x\(height)")
        }
        let capacity = try ensureOutput(width: width, height: height, subsampling: TJSAMP_420)
        var size = UInt(capacity)
        let status = frame.bytes.withUnsafeBufferPointer { source in
            tjCompress2(
                handle, source.baseAddress, Int32(width), Int32(pitch), Int32(height),
                Int32(TJPF_RGB.rawValue), &output, &size, Int32(TJSAMP_420.rawValue), Int32(quality),
                TJFLAG_NOREALLOC)
        }
        return try collect(status: status, size: size)
    }

    private func compressPlanes(
        _ luma: [UInt8], _ cb: [UInt8], _ cr: [UInt8], width: Int, height: Int, strides: [Int], subsampling: TJSAMP,
        quality: Int
    ) throws -> [UInt8] {
        let capacity = try ensureOutput(width: width, height: height, subsampling: subsampling)
        var size = UInt(capacity)
        let strides32 = strides.map { Int32($0) }
        let status = luma.withUnsafeBufferPointer { y in
            cb.withUnsafeBufferPointer { u in
                cr.withUnsafeBufferPointer { v in
                    var pointers: [UnsafePointer<UInt8>?] = [y.baseAddress, u.baseAddress, v.baseAddress]
                    return pointers.withUnsafeMutableBufferPointer { planePointers in
                        strides32.withUnsafeBufferPointer { strideBuffer in
                            tjCompressFromYUVPlanes(
                                handle, planePointers.baseAddress, Int32(width), strideBuffer.baseAddress,
                                Int32(height), Int32(subsampling.rawValue), &output, &size, Int32(quality),
                                TJFLAG_NOREALLOC)
                        }
                    }
                }
            }
        }
        return try collect(status: status, size: size)
    }

    private func collect(status: Int32, size: UInt) throws -> [UInt8] {
        guard status == 0, let output else {
            throw CamrollError(.dataError, "JPEG encoding failed: \(String(cString: tjGetErrorStr2(handle)))")
        }
        return Array(UnsafeBufferPointer(start: output, count: Int(size)))
    }

    /// A buffer large enough for the worst case, so turbojpeg never reallocates it and the YUV
    /// encoder never runs out of it. turbojpeg sizes buffers with C ints: a picture whose worst
    /// case exceeds 2 GB cannot be encoded.
    func ensureOutput(width: Int, height: Int, subsampling: TJSAMP) throws -> Int {
        let worstCase = tjBufSize(Int32(clamping: width), Int32(clamping: height), Int32(subsampling.rawValue))
        // (tjBufSize's error value, (unsigned long)-1, fails this too.)
        guard let needed = Int32(exactly: worstCase) else {
            throw CamrollError(
                .dataError, "a \(width)x\(height) picture is too large to encode as JPEG here",
                hint: "Without --max-bytes a JPEG file is saved as it is, with no re-encoding.")
        }
        if Int(needed) > outputCapacity {
            tjFree(output)
            output = tjAlloc(needed)
            outputCapacity = output == nil ? 0 : Int(needed)
            guard output != nil else {
                throw CamrollError(.failure, "out of memory for a \(width)x\(height) JPEG")
            }
        }
        return outputCapacity
    }

    static func globalError() -> String { String(cString: tjGetErrorStr2(nil)) }
}

extension PixelFormat {
    public static let yuv420 = PixelFormat(code: "YU12")!
    public static let rgb24 = PixelFormat(code: "RGB3")!
}
