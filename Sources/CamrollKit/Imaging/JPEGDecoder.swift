import CTurboJPEG

/// Reads JPEGs back with libturbojpeg: to validate input, check output and make thumbnails.
public final class JPEGDecoder {
    private let handle: tjhandle

    public struct Header: Sendable, Equatable {
        public var width: Int
        public var height: Int
    }

    public init() throws {
        guard let handle = tjInitDecompress() else {
            throw CamrollError(.failure, "cannot initialise the JPEG decoder: \(JPEGEncoder.globalError())")
        }
        self.handle = handle
    }

    deinit { tjDestroy(handle) }

    /// The image size from the JPEG's frame header; throws `.dataError` when it has none.
    public func header(of jpeg: [UInt8]) throws -> Header {
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        let status = jpeg.withUnsafeBufferPointer {
            tjDecompressHeader3(handle, $0.baseAddress, UInt(jpeg.count), &width, &height, &subsampling, &colorspace)
        }
        guard status == 0, width > 0, height > 0 else { throw decodingError("not a readable JPEG") }
        return Header(width: Int(width), height: Int(height))
    }

    /// Decodes the whole image to RGB. Warnings (truncated data, corrupt entropy) are errors:
    /// a photo that only decodes with grey blocks in it is not a good photo.
    public func decodeRGB(_ jpeg: [UInt8]) throws -> (Header, [UInt8]) {
        try decodeRGB(jpeg, scaledTo: header(of: jpeg))
    }

    /// Decodes at the smallest of turbojpeg's DCT scaling factors (1/8 … 2) that still gives at
    /// least `minimumWidth` pixels across: scaling in the DCT domain costs less than decoding
    /// everything and shrinking afterwards.
    public func decodeRGB(_ jpeg: [UInt8], minimumWidth: Int) throws -> (Header, [UInt8]) {
        let full = try header(of: jpeg)
        var count: Int32 = 0
        var best = full
        if let factors = tjGetScalingFactors(&count) {
            for factor in UnsafeBufferPointer(start: factors, count: Int(count)) {
                func scaled(_ dimension: Int) -> Int {
                    (dimension * Int(factor.num) + Int(factor.denom) - 1) / Int(factor.denom)
                }
                let candidate = Header(width: scaled(full.width), height: scaled(full.height))
                if candidate.width >= minimumWidth && candidate.width < best.width { best = candidate }
            }
        }
        return try decodeRGB(jpeg, scaledTo: best)
    }

    private func decodeRGB(_ jpeg: [UInt8], scaledTo size: Header) throws -> (Header, [UInt8]) {
        var pixels = [UInt8](repeating: 0, count: size.width * size.height * 3)
        let status = jpeg.withUnsafeBufferPointer { source in
            pixels.withUnsafeMutableBufferPointer { destination in
                tjDecompress2(
                    handle, source.baseAddress, UInt(jpeg.count), destination.baseAddress,
                    Int32(size.width), 0, Int32(size.height), Int32(TJPF_RGB.rawValue),
                    TJFLAG_STOPONWARNING | TJFLAG_ACCURATEDCT)
            }
        }
        guard status == 0 else { throw decodingError("corrupt JPEG data") }
        return (size, pixels)
    }

    private func decodingError(_ what: String) -> CamrollError {
        CamrollError(.dataError, "\(what): \(String(cString: tjGetErrorStr2(handle)))")
    }
}
