import CPixels

/// The small picture stored with each capture (the catalog's `thumbnails` table), as a phone's photo picker
/// keeps one beside the full image: the largest size that fits inside the box with the picture's
/// aspect ratio (never larger than the picture), decoded at a DCT scaling factor, reduced to
/// that exact size by averaging, encoded at quality 70. (A YUYV frame's comes from the frame itself,
/// averaged the same way: `JPEGEncoder.encode(_:quality:thumbnailBox:)`.)
public enum Thumbnail {
    public static let defaultBox = Resolution(width: 160, height: 120)
    public static let quality = 70
    /// Thumbnails of RGB pictures are 4:2:0, the smallest (a YUYV frame's are made 4:4:4 from its own planes).
    static let subsampling = ChromaSubsampling.s420

    public static func make(from jpeg: [UInt8], fitting box: Resolution, encoder: JPEGEncoder) throws -> [UInt8] {
        let decoder = try JPEGDecoder()
        let full = try decoder.header(of: jpeg)
        // Shown as the photo's EXIF Orientation says: a portrait photo gets a portrait thumbnail.
        let orientation = Exif.orientation(of: jpeg)
        let transposed = orientation >= 5
        let target = fittedSize(transposed ? full.height : full.width, transposed ? full.width : full.height, inside: box)
        let (size, rgb) = try decoder.decodeRGB(
            jpeg, minimumWidth: transposed ? target.height : target.width,
            minimumHeight: transposed ? target.width : target.height)
        let upright = try RGBImage(width: size.width, height: size.height, pixels: rgb).upright(orientation)
        guard let pixels = averaged(upright.pixels, width: upright.width, height: upright.height, to: target) else {
            throw ImageMemory.tooLarge(width: target.width, height: target.height, bytes: nil)
        }
        let frame = Frame(format: .rgb24, width: target.width, height: target.height, bytesPerLine: target.width * 3,
                          bytes: pixels, sequence: 0, capturedAt: .init(timeIntervalSince1970: 0))
        return try encoder.encode(frame, quality: quality, subsampling: subsampling).bytes
    }

    /// `width` x `height` scaled to fit inside `box`, aspect kept, at least 1x1, not enlarged.
    static func fittedSize(_ width: Int, _ height: Int, inside box: Resolution) -> Resolution {
        let scale = min(1, Double(box.width) / Double(width), Double(box.height) / Double(height))
        return Resolution(
            width: min(box.width, max(1, Int((Double(width) * scale).rounded()))),
            height: min(box.height, max(1, Int((Double(height) * scale).rounded()))))
    }

    /// Each output pixel is the mean of the block of source pixels it covers (`channels`
    /// interleaved samples a pixel: 3 for RGB, 1 for a plane; rows `stride` bytes apart, packed
    /// when nil). Blocks tile the source (every pixel counts once) and stay inside it for any
    /// sizes, however thin. Nil when out of memory.
    static func averaged(
        _ samples: [UInt8], width: Int, height: Int, channels: Int = 3, stride: Int? = nil, to target: Resolution
    ) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: target.width * target.height * channels)
        let status = samples.withUnsafeBufferPointer { from in
            out.withUnsafeMutableBufferPointer { to in
                cpixels_box_average(
                    from.baseAddress, stride ?? width * channels, Int32(width), Int32(height), Int32(channels), to.baseAddress,
                    Int32(target.width), Int32(target.height))
            }
        }
        return status == 0 ? out : nil
    }
}
