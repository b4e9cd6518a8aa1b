/// Frame → JPEG: encodes raw pixel formats, passes compressed ones through untouched.
public final class ImagePipeline {
    public let quality: Int
    private let encoder: JPEGEncoder

    public init(quality: Int) throws {
        self.quality = quality
        self.encoder = try JPEGEncoder()
    }

    public func jpeg(from frame: Frame) throws -> EncodedImage {
        switch frame.format {
        case .jpeg, .mjpeg:
            // Already checked by its source (an image file, a camera's MJPEG frame): saved as it is.
            return EncodedImage(bytes: frame.bytes, width: frame.width, height: frame.height, quality: nil)
        default:
            return try encoder.encode(frame, quality: quality)
        }
    }
}
