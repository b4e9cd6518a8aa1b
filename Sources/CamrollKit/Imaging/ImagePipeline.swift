/// Frame → JPEG: encodes raw pixel formats, passes compressed ones through untouched; fits a
/// size limit (`--max-bytes`) and makes the capture's thumbnail.
public final class ImagePipeline {
    public let quality: Int
    public let maxBytes: Int?
    public let thumbnailBox: Resolution?
    private let encoder: JPEGEncoder

    public init(quality: Int, maxBytes: Int? = nil, thumbnailBox: Resolution? = nil) throws {
        self.quality = quality
        self.maxBytes = maxBytes
        self.thumbnailBox = thumbnailBox
        self.encoder = try JPEGEncoder()
    }

    public func jpeg(from frame: Frame) throws -> EncodedImage {
        switch frame.format {
        case .jpeg, .mjpeg:
            // Already checked by its source (an image file, a camera's MJPEG frame): saved as it
            // is, unless it is over the size limit.
            let image = EncodedImage(bytes: frame.bytes, width: frame.width, height: frame.height, quality: nil)
            guard let maxBytes, image.bytes.count > maxBytes else { return image }
            let (header, rgb) = try JPEGDecoder().decodeRGB(image.bytes)
            let decoded = Frame(
                format: .rgb24, width: header.width, height: header.height, bytesPerLine: header.width * 3, bytes: rgb,
                sequence: frame.sequence, capturedAt: frame.capturedAt)
            return try fitting(decoded, under: maxBytes)
        default:
            let image = try encoder.encode(frame, quality: quality)
            guard let maxBytes, image.bytes.count > maxBytes else { return image }
            return try fitting(frame, under: maxBytes)
        }
    }

    /// The highest quality (up to `-q`) whose JPEG fits in `limit` bytes, by binary search: size
    /// grows with quality, so about seven encodings find it.
    private func fitting(_ frame: Frame, under limit: Int) throws -> EncodedImage {
        var low = 1, high = quality
        var best: EncodedImage?
        while low <= high {
            let middle = (low + high) / 2
            let candidate = try encoder.encode(frame, quality: middle)
            if candidate.bytes.count <= limit {
                best = candidate
                low = middle + 1
            } else {
                high = middle - 1
            }
        }
        guard let best else {
            let smallest = try encoder.encode(frame, quality: 1).bytes.count
            throw CamrollError(
                .dataError, "even at quality 1 the \(frame.width)x\(frame.height) picture takes \(smallest) bytes, over --max-bytes \(limit)",
                hint: "Raise --max-bytes, or take a smaller picture with -r.")
        }
        return best
    }

    /// The capture's thumbnail, or nil when thumbnails are off.
    public func thumbnail(of image: EncodedImage) throws -> [UInt8]? {
        guard let thumbnailBox else { return nil }
        return try Thumbnail.make(from: image.bytes, fitting: thumbnailBox, encoder: encoder)
    }
}
