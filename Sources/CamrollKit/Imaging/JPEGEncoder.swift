import CTurboJPEG

/// A JPEG ready to save, and what it shows.
public struct EncodedImage: Sendable {
    public var bytes: [UInt8]
    public var width: Int
    public var height: Int
    /// The quality it was encoded at; nil when the bytes came from the source as they are.
    public var quality: Int?
}

/// Encodes raw frames to JPEG with libturbojpeg. Reuses its buffers from frame to frame.
public final class JPEGEncoder {
    private let handle: tjhandle
    // Separate properties, not an array of planes: each is borrowed mutably at the same time.
    private var lumaPlane: [UInt8] = []
    private var cbPlane: [UInt8] = []
    private var crPlane: [UInt8] = []
    private var output: UnsafeMutablePointer<UInt8>?
    private var outputCapacity = 0

    public init() throws {
        guard let handle = tjInitCompress() else {
            throw CamrollError(.failure, "cannot initialise the JPEG encoder: \(Self.globalError())")
        }
        self.handle = handle
    }

    deinit {
        tjFree(output)
        tjDestroy(handle)
    }

    /// Encodes YUYV (straight to planar 4:2:2, never through RGB), planar YUV 4:2:0 or RGB24.
    public func encode(_ frame: Frame, quality: Int) throws -> EncodedImage {
        guard frame.width > 0, frame.height > 0, !frame.bytes.isEmpty else {
            throw CamrollError(.dataError, "empty \(frame.width)x\(frame.height) frame: nothing to encode")
        }
        let bytes: [UInt8]
        switch frame.format {
        case .yuyv: bytes = try encodeYUYV(frame, quality: quality)
        case .yuv420: bytes = try encodeYUV420(frame, quality: quality)
        case .rgb24: bytes = try encodeRGB24(frame, quality: quality)
        default:
            throw CamrollError(.dataError, "cannot encode pixel format \(frame.format) to JPEG")
        }
        return EncodedImage(bytes: bytes, width: frame.width, height: frame.height, quality: quality)
    }

    private func encodeYUYV(_ frame: Frame, quality: Int) throws -> [UInt8] {
        let width = frame.width, height = frame.height
        guard width % 2 == 0, frame.bytesPerLine >= width * 2,
            frame.bytes.count >= frame.bytesPerLine * (height - 1) + width * 2
        else { throw CamrollError(.dataError, "YUYV frame of \(frame.bytes.count) bytes is too short for \(width)x\(height)") }
        let chromaWidth = width / 2
        resizePlanes([width * height, chromaWidth * height, chromaWidth * height])
        let (lumaMap, chromaMap) = frame.fullRange ? (Self.identity, Self.identity) : (Self.expandLuma, Self.expandChroma)
        frame.bytes.withUnsafeBufferPointer { source in
            lumaPlane.withUnsafeMutableBufferPointer { luma in
                cbPlane.withUnsafeMutableBufferPointer { cb in
                    crPlane.withUnsafeMutableBufferPointer { cr in
                        for y in 0..<height {
                            let row = source.baseAddress! + y * frame.bytesPerLine
                            let lumaRow = luma.baseAddress! + y * width
                            let cbRow = cb.baseAddress! + y * chromaWidth
                            let crRow = cr.baseAddress! + y * chromaWidth
                            for pair in 0..<chromaWidth {
                                lumaRow[2 * pair] = lumaMap[Int(row[4 * pair])]
                                cbRow[pair] = chromaMap[Int(row[4 * pair + 1])]
                                lumaRow[2 * pair + 1] = lumaMap[Int(row[4 * pair + 2])]
                                crRow[pair] = chromaMap[Int(row[4 * pair + 3])]
                            }
                        }
                    }
                }
            }
        }
        return try compressPlanes(
            width: width, height: height, strides: [width, chromaWidth, chromaWidth],
            subsampling: TJSAMP_422, quality: quality)
    }

    private func encodeYUV420(_ frame: Frame, quality: Int) throws -> [UInt8] {
        let width = frame.width, height = frame.height
        let chromaWidth = (width + 1) / 2, chromaHeight = (height + 1) / 2
        let lumaSize = width * height, chromaSize = chromaWidth * chromaHeight
        guard frame.bytes.count >= lumaSize + 2 * chromaSize else {
            throw CamrollError(.dataError, "YUV 4:2:0 frame of \(frame.bytes.count) bytes is too short for \(width)x\(height)")
        }
        let (lumaMap, chromaMap) = frame.fullRange ? (Self.identity, Self.identity) : (Self.expandLuma, Self.expandChroma)
        lumaPlane = frame.bytes[0..<lumaSize].map { lumaMap[Int($0)] }
        cbPlane = frame.bytes[lumaSize..<(lumaSize + chromaSize)].map { chromaMap[Int($0)] }
        crPlane = frame.bytes[(lumaSize + chromaSize)..<(lumaSize + 2 * chromaSize)].map { chromaMap[Int($0)] }
        return try compressPlanes(
            width: width, height: height, strides: [width, chromaWidth, chromaWidth],
            subsampling: TJSAMP_420, quality: quality)
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
        width: Int, height: Int, strides: [Int], subsampling: TJSAMP, quality: Int
    ) throws -> [UInt8] {
        let capacity = try ensureOutput(width: width, height: height, subsampling: subsampling)
        var size = UInt(capacity)
        let strides32 = strides.map { Int32($0) }
        let status = lumaPlane.withUnsafeBufferPointer { y in
            cbPlane.withUnsafeBufferPointer { u in
                crPlane.withUnsafeBufferPointer { v in
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

    /// A buffer large enough for the worst case, so turbojpeg never reallocates it. turbojpeg
    /// sizes buffers with C ints: a picture whose worst case exceeds 2 GB cannot be encoded.
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

    private func resizePlanes(_ sizes: [Int]) {
        if lumaPlane.count != sizes[0] { lumaPlane = [UInt8](repeating: 0, count: sizes[0]) }
        if cbPlane.count != sizes[1] { cbPlane = [UInt8](repeating: 0, count: sizes[1]) }
        if crPlane.count != sizes[2] { crPlane = [UInt8](repeating: 0, count: sizes[2]) }
    }

    // JPEG (JFIF) stores full-range YCbCr; cameras send limited range. Stretching through
    // these tables keeps black black and white white, at no cost beyond the copy.
    static let identity: [UInt8] = (0...255).map { UInt8($0) }
    static let expandLuma: [UInt8] = (0...255).map { stretch($0, low: 16, span: 219, centre: nil) }
    static let expandChroma: [UInt8] = (0...255).map { stretch($0, low: 16, span: 224, centre: 128) }

    private static func stretch(_ value: Int, low: Int, span: Int, centre: Int?) -> UInt8 {
        let scaled: Double
        if let centre {
            scaled = Double(centre) + Double(value - centre) * 255 / Double(span)
        } else {
            scaled = Double(value - low) * 255 / Double(span)
        }
        return UInt8(max(0, min(255, scaled.rounded())))
    }

    static func globalError() -> String { String(cString: tjGetErrorStr2(nil)) }
}

extension PixelFormat {
    public static let yuv420 = PixelFormat(code: "YU12")!
    public static let rgb24 = PixelFormat(code: "RGB3")!
}
