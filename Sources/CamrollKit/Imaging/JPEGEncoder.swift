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

/// How a JPEG stores its colour: one Cb and one Cr sample for every pixel (4:4:4), for each pair
/// of pixels side by side (4:2:2), or for each 2x2 block (4:2:0); `--subsampling`. A photo file
/// re-encoded keeps its own, whichever turbojpeg names (4:4:0 and 4:1:1 too; grey).
public struct ChromaSubsampling: Sendable, Equatable, CustomStringConvertible {
    /// turbojpeg's TJSAMP value.
    public let rawValue: Int32

    public init(_ samp: TJSAMP) { rawValue = Int32(samp.rawValue) }

    public static let s444 = ChromaSubsampling(TJSAMP_444)
    public static let s422 = ChromaSubsampling(TJSAMP_422)
    public static let s420 = ChromaSubsampling(TJSAMP_420)
    public static let grey = ChromaSubsampling(TJSAMP_GRAY)

    /// `444`, `422` or `420` (`4:2:0` too), what `--subsampling` takes.
    public init?(parsing text: String) {
        switch text.replacing(":", with: "") {
        case "444": self = .s444
        case "422": self = .s422
        case "420": self = .s420
        default: return nil
        }
    }

    /// As `--subsampling` names it: `444`.
    public var option: String { description.replacing(":", with: "") }

    /// turbojpeg's answer for a JPEG's header, nil for one it cannot name.
    init?(header value: Int32) {
        guard value >= 0, value < Int32(TJ_NUMSAMP) else { return nil }
        rawValue = value
    }

    var samp: TJSAMP { TJSAMP(UInt32(rawValue)) }

    /// One component: no chroma at all.
    var isGrey: Bool { samp == TJSAMP_GRAY }

    public var description: String {
        switch samp {
        case TJSAMP_444: "4:4:4"
        case TJSAMP_422: "4:2:2"
        case TJSAMP_420: "4:2:0"
        case TJSAMP_GRAY: "grey"
        case TJSAMP_440: "4:4:0"
        case TJSAMP_411: "4:1:1"
        default: "TJSAMP \(rawValue)"
        }
    }
}

/// Encodes raw frames to JPEG: YUV frames (and their thumbnails) through libjpeg itself, a strip
/// of rows at a time (see cpixels.h); RGB frames with libturbojpeg. Reuses its buffers from frame
/// to frame.
public final class JPEGEncoder {
    /// YUV frames' encoder, through libjpeg a strip of rows at a time (cpixels.h).
    private let yuvEncoder: OpaquePointer
    /// turbojpeg's, for RGB frames only: made for the first (a camera's frames are YUV, and
    /// a one-photo process need not run turbojpeg's set-up).
    private var rgbHandle: tjhandle?
    private var output: UnsafeMutablePointer<UInt8>?
    private var outputCapacity = 0

    public init() throws {
        guard let yuvEncoder = cpixels_jpeg_encoder_create() else {
            throw CamrollError(.failure, "cannot initialise the JPEG encoder: out of memory")
        }
        self.yuvEncoder = yuvEncoder
    }

    deinit {
        tjFree(output)
        if let rgbHandle { tjDestroy(rgbHandle) }
        cpixels_jpeg_encoder_destroy(yuvEncoder)
    }

    /// Encodes YUYV (straight to 4:2:2, never through RGB), planar YUV 4:2:0 or RGB24. With
    /// `thumbnailBox`, a YUYV frame's thumbnail is made too, from the frame itself: no JPEG
    /// decoding, and none of the decoder's code run for it (see Thumbnail).
    ///
    /// `subsampling` nil keeps the frame's own: 4:2:2 for YUYV, 4:2:0 for YUV 4:2:0, 4:4:4 for
    /// RGB (its colour is whole). A YUV frame asked for another goes through RGB (BT.601) to
    /// turbojpeg, which subsamples the chroma it is given; the raw path can only keep the
    /// frame's own.
    public func encode(
        _ frame: Frame, quality: Int, subsampling: ChromaSubsampling? = nil, thumbnailBox: Resolution? = nil
    ) throws -> EncodedImage {
        guard frame.width > 0, frame.height > 0, !frame.bytes.isEmpty else {
            throw CamrollError(.dataError, "empty \(frame.width)x\(frame.height) frame: nothing to encode")
        }
        var thumbnail: [UInt8]?
        let bytes: [UInt8]
        switch frame.format {
        case .yuyv where subsampling == nil || subsampling == .s422:
            bytes = try encodeYUYV(frame, quality: quality)
            if let thumbnailBox { thumbnail = try thumbnailOfYUYV(frame, fitting: thumbnailBox) }
        case .yuv420 where subsampling == nil || subsampling == .s420: bytes = try encodeYUV420(frame, quality: quality)
        case .yuyv, .yuv420:
            let rgb = try PreviewScaler().picture(of: frame, width: frame.width, height: frame.height)
            bytes = try encodeRGB24(rgb.frame, quality: quality, subsampling: subsampling ?? .s444)
            if frame.format == .yuyv, let thumbnailBox { thumbnail = try thumbnailOfYUYV(frame, fitting: thumbnailBox) }
        case .rgb24: bytes = try encodeRGB24(frame, quality: quality, subsampling: subsampling ?? .s444)
        default:
            throw CamrollError(.dataError, "cannot encode pixel format \(frame.format) to JPEG")
        }
        return EncodedImage(bytes: bytes, width: frame.width, height: frame.height, quality: quality, thumbnail: thumbnail)
    }

    /// The thumbnail of a YUYV frame `encodeYUYV` has checked: the frame averaged down to the
    /// thumbnail's size as pairs of pixels (Y0 Cb Y1 Cr, four samples), which gives each
    /// thumbnail pixel's Cb and Cr, and its luma as the mean of Y0 and Y1 — all of the pixels it
    /// covers, where it covers two or more columns; a thumbnail wider than half the frame takes
    /// its luma from the frame averaged as single pixels (Y and a chroma) instead. Then encoded
    /// 4:4:4 at Thumbnail.quality, limited range expanded on the way, by the libjpeg code the
    /// frame's own encoding has just run (through turbojpeg, a one-photo process ran ~670 more
    /// blocks of the same library's code under qemu: make bench-startup). Nil if memory ran out
    /// (the pipeline then decodes the JPEG for it).
    private func thumbnailOfYUYV(_ frame: Frame, fitting box: Resolution) throws -> [UInt8]? {
        let size = Thumbnail.fittedSize(frame.width, frame.height, inside: box)
        let count = size.width * size.height
        guard let pairs = Thumbnail.averaged(
            frame.bytes, width: frame.width / 2, height: frame.height, channels: 4, stride: frame.bytesPerLine, to: size)
        else { return nil }
        // The three planes one after another: luma, Cb, Cr.
        var planes = [UInt8](repeating: 0, count: 3 * count)
        if size.width * 2 <= frame.width {
            for i in 0..<count { planes[i] = UInt8((Int(pairs[4 * i]) + Int(pairs[4 * i + 2]) + 1) / 2) }
        } else {
            guard let pixels = Thumbnail.averaged(
                frame.bytes, width: frame.width, height: frame.height, channels: 2, stride: frame.bytesPerLine, to: size)
            else { return nil }
            for i in 0..<count { planes[i] = pixels[2 * i] }
        }
        for i in 0..<count {
            planes[count + i] = pairs[4 * i + 1]
            planes[2 * count + i] = pairs[4 * i + 3]
        }
        return try encodeYUV(width: size.width, height: size.height, subsampling: TJSAMP_444) { output, capacity, length in
            planes.withUnsafeBufferPointer { planes in
                cpixels_jpeg_encode_yuv444(
                    yuvEncoder, planes.baseAddress, Int32(size.width), Int32(size.height), frame.fullRange ? 1 : 0,
                    Int32(Thumbnail.quality), output, capacity, &length)
            }
        }
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
        return try ImageMemory.copy(output, count: size, width: width, height: height)
    }

    private func encodeRGB24(_ frame: Frame, quality: Int, subsampling: ChromaSubsampling) throws -> [UInt8] {
        let width = frame.width, height = frame.height
        let pitch = frame.bytesPerLine > 0 ? frame.bytesPerLine : width * 3
        guard frame.bytes.count >= pitch * (height - 1) + width * 3 else {
            throw CamrollError(.dataError, "RGB frame of \(frame.bytes.count) bytes is too short for \(width)x\(height)")
        }
        if rgbHandle == nil {
            guard let handle = tjInitCompress() else {
                throw CamrollError(.failure, "cannot initialise the JPEG encoder: \(Self.globalError())")
            }
            rgbHandle = handle
        }
        let capacity = try ensureOutput(width: width, height: height, subsampling: subsampling.samp)
        var size = UInt(capacity)
        // The accurate DCT, not turbojpeg's default fast one: RGB frames are photo files and PNGs
        // decoded and resized, kept for their quality; at -q 95 the fast DCT's error (RMS 1.59
        // codes from the pixels, against 1.52) cost a resized photo more SSIM than the
        // resampling filter did (make bench-resize). Camera frames take the YUV path.
        let status = frame.bytes.withUnsafeBufferPointer { source in
            tjCompress2(
                rgbHandle, source.baseAddress, Int32(width), Int32(pitch), Int32(height),
                Int32(TJPF_RGB.rawValue), &output, &size, subsampling.rawValue, Int32(quality),
                TJFLAG_NOREALLOC | TJFLAG_ACCURATEDCT)
        }
        guard status == 0, let output else {
            throw CamrollError(.dataError, "JPEG encoding failed: \(String(cString: tjGetErrorStr2(rgbHandle)))")
        }
        return try ImageMemory.copy(output, count: Int(size), width: width, height: height)
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
            guard output != nil else { throw ImageMemory.tooLarge(width: width, height: height, bytes: Int(needed)) }
        }
        return outputCapacity
    }

    static func globalError() -> String { String(cString: tjGetErrorStr2(nil)) }
}

extension PixelFormat {
    public static let yuv420 = PixelFormat(code: "YU12")!
    public static let rgb24 = PixelFormat(code: "RGB3")!
}
