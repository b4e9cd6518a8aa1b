import CTurboJPEG
import Synchronization

/// Reads JPEGs back with libturbojpeg: to validate input, check output and make thumbnails.
///
/// Every decode reads the frame header first and refuses a picture over `maxPixels` before
/// allocating anything for it: a 460-byte file can claim 60000x60000 pixels (10.8 GB of RGB).
public final class JPEGDecoder {
    private let handle: tjhandle

    /// The largest picture decoded, in pixels: 100 megapixels by default (above any camera
    /// and most photos; 300 MB as RGB). `snap --max-pixels N` raises or lowers it.
    public static let defaultMaxPixels = 100_000_000
    private static let maxPixelsSetting = Atomic<Int>(defaultMaxPixels)
    public static var maxPixels: Int {
        get { maxPixelsSetting.load(ordering: .relaxed) }
        set { maxPixelsSetting.store(newValue, ordering: .relaxed) }
    }

    public struct Header: Sendable, Equatable {
        public var width: Int
        public var height: Int
        /// Stored as CMYK or YCCK (print workflows): decoded through CMYK, not RGB.
        public var isCMYK = false

        public init(width: Int, height: Int, isCMYK: Bool = false) {
            self.width = width
            self.height = height
            self.isCMYK = isCMYK
        }
    }

    public init() throws {
        guard let handle = tjInitDecompress() else {
            throw CamrollError(.failure, "cannot initialise the JPEG decoder: \(JPEGEncoder.globalError())")
        }
        self.handle = handle
    }

    deinit { tjDestroy(handle) }

    /// The image size from the JPEG's frame header; throws `.dataError` when it has none, or
    /// when the picture is larger than `maxPixels`.
    public func header(of jpeg: [UInt8]) throws -> Header {
        let header = try frameHeader(of: jpeg)
        try Self.refuseIfTooLarge(header)
        return header
    }

    /// The frame header as the file states it, whatever the size; `.dataError` when it has none.
    func frameHeader(of jpeg: [UInt8]) throws -> Header {
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        let status = jpeg.withUnsafeBufferPointer {
            tjDecompressHeader3(handle, $0.baseAddress, UInt(jpeg.count), &width, &height, &subsampling, &colorspace)
        }
        guard status == 0, width > 0, height > 0 else { throw decodingError("not a readable JPEG") }
        let cmyk = colorspace == Int32(TJCS_CMYK.rawValue) || colorspace == Int32(TJCS_YCCK.rawValue)
        return Header(width: Int(width), height: Int(height), isCMYK: cmyk)
    }

    /// How the JPEG stores its colour, as its frame header says (tjDecompressHeader3); nil when
    /// the header cannot be read or turbojpeg cannot name its subsampling.
    public func subsampling(of jpeg: [UInt8]) -> ChromaSubsampling? {
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        let status = jpeg.withUnsafeBufferPointer {
            tjDecompressHeader3(handle, $0.baseAddress, UInt(jpeg.count), &width, &height, &subsampling, &colorspace)
        }
        return status == 0 ? ChromaSubsampling(header: subsampling) : nil
    }

    /// Throws `.dataError`, with the size and the option that raises the limit, for a picture
    /// over `maxPixels`. `subject` names it in the message; `bytesPerPixel` is what the picture
    /// costs a pixel on its way through camroll, for the hint.
    static func refuseIfTooLarge(_ header: Header, subject: String = "the JPEG", bytesPerPixel: Int = JPEGDecoder.bytesPerPixel) throws {
        let pixels = header.width * header.height
        guard pixels > maxPixels else { return }
        let (cost, overflow) = pixels.multipliedReportingOverflow(by: bytesPerPixel)
        let needs = overflow ? "more memory than a process has" : "about \(ImageMemory.megabytes(cost))"
        throw CamrollError(
            .dataError,
            "\(subject) is \(header.width)x\(header.height) (\(pixelCount(pixels))), over the limit of \(pixelCount(maxPixels))",
            hint: "If the picture is genuine, raise the limit with --max-pixels \(pixels) (it needs \(needs): "
                + "\(bytesPerPixel) bytes a pixel, decoded and encoded again).")
    }

    /// What a JPEG costs a pixel when it is changed: decoded to RGB (3 bytes), then encoded
    /// (turbojpeg's worst-case buffer for 4:2:0, 3 more). One saved as it is costs far less:
    /// it is only checked, at an eighth of its size (`validate`).
    static let bytesPerPixel = 6

    /// `3600 megapixels`, `2.1 megapixels`; below a tenth of one (a small --max-pixels) the
    /// pixels themselves, not "0.0 megapixels".
    static func pixelCount(_ pixels: Int) -> String {
        guard pixels >= 100_000 else { return "\(pixels) pixels" }
        let value = Double(pixels) / 1e6
        return (value >= 10 ? String(Int(value.rounded())) : String((value * 10).rounded() / 10)) + " megapixels"
    }

    /// Decodes the whole image to RGB. Warnings (truncated data, corrupt entropy) are errors:
    /// a photo that only decodes with grey blocks in it is not a good photo.
    public func decodeRGB(_ jpeg: [UInt8]) throws -> (Header, [UInt8]) {
        let full = try header(of: jpeg)
        return try decodeRGB(jpeg, full: full, scaledTo: full)
    }

    /// Decodes at the smallest of turbojpeg's DCT scaling factors (1/8 … 2) that still gives at
    /// least `minimumWidth` x `minimumHeight` pixels: scaling in the DCT domain costs less than
    /// decoding everything and shrinking afterwards. `fast` trades accuracy for speed (a preview).
    public func decodeRGB(_ jpeg: [UInt8], minimumWidth: Int, minimumHeight: Int = 1, fast: Bool = false) throws -> (Header, [UInt8]) {
        let full = try header(of: jpeg)
        var count: Int32 = 0
        var best = full
        if let factors = tjGetScalingFactors(&count) {
            for factor in UnsafeBufferPointer(start: factors, count: Int(count)) {
                func scaled(_ dimension: Int) -> Int {
                    (dimension * Int(factor.num) + Int(factor.denom) - 1) / Int(factor.denom)
                }
                let candidate = Header(width: scaled(full.width), height: scaled(full.height), isCMYK: full.isCMYK)
                if candidate.width >= min(minimumWidth, full.width) && candidate.height >= min(minimumHeight, full.height)
                    && candidate.width < best.width {
                    best = candidate
                }
            }
        }
        return try decodeRGB(jpeg, full: full, scaledTo: best, fast: fast)
    }

    private func decodeRGB(_ jpeg: [UInt8], full: Header, scaledTo size: Header, fast: Bool = false) throws -> (Header, [UInt8]) {
        // libjpeg-turbo cannot turn CMYK into RGB (that takes a colour profile): such pictures
        // are decoded as CMYK and converted with the usual uncalibrated formula.
        let channels = full.isCMYK ? 4 : 3
        var pixels = try ImageMemory.pixels(width: size.width, height: size.height, bytesPerPixel: channels)
        let format = full.isCMYK ? TJPF_CMYK : TJPF_RGB
        let status = jpeg.withUnsafeBufferPointer { source in
            pixels.withUnsafeMutableBufferPointer { destination in
                tjDecompress2(
                    handle, source.baseAddress, UInt(jpeg.count), destination.baseAddress,
                    Int32(size.width), 0, Int32(size.height), Int32(format.rawValue),
                    TJFLAG_STOPONWARNING | (fast ? TJFLAG_FASTDCT | TJFLAG_FASTUPSAMPLE : TJFLAG_ACCURATEDCT))
            }
        }
        guard status == 0 else { throw decodingError("corrupt JPEG data") }
        return (size, full.isCMYK ? try Self.rgb(fromInvertedCMYK: pixels, width: size.width, height: size.height) : pixels)
    }

    /// Decodes every block of the picture, at the smallest scale turbojpeg has (an eighth each
    /// way), to find corrupt or truncated data: the entropy decoding, which is where such data
    /// shows, runs over the whole picture all the same, in 1/64 of the memory of a full decode.
    public func validate(_ jpeg: [UInt8]) throws {
        _ = try decodeRGB(jpeg, minimumWidth: 1, minimumHeight: 1, fast: true)
    }

    /// Adobe's CMYK JPEGs (nearly all of them, and what libjpeg writes) store ink inverted:
    /// 255 is no ink. Red is then C·K/255, and so on.
    static func rgb(fromInvertedCMYK cmyk: [UInt8], width: Int, height: Int) throws -> [UInt8] {
        var rgb = try ImageMemory.uninitialized(count: cmyk.count / 4 * 3, width: width, height: height)
        for pixel in 0..<(cmyk.count / 4) {
            let k = Int(cmyk[pixel * 4 + 3])
            for channel in 0..<3 {
                rgb[pixel * 3 + channel] = UInt8(Int(cmyk[pixel * 4 + channel]) * k / 255)
            }
        }
        return rgb
    }

    private func decodingError(_ what: String) -> CamrollError {
        CamrollError(.dataError, "\(what): \(String(cString: tjGetErrorStr2(handle)))")
    }
}
