/// The small picture stored with each capture (`captures.thumbnail`), as a phone's photo picker
/// keeps one beside the full image: the largest size that fits inside the box with the picture's
/// aspect ratio (never larger than the picture), decoded at a DCT scaling factor, reduced to
/// that exact size by averaging, encoded at quality 70. (A YUYV frame's comes from the planes the
/// encoder split it into, averaged the same way: `JPEGEncoder.encode(_:quality:thumbnailBox:)`.)
public enum Thumbnail {
    public static let defaultBox = Resolution(width: 160, height: 120)
    public static let quality = 70

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
        let upright = RGBImage(width: size.width, height: size.height, pixels: rgb).upright(orientation)
        let pixels = averaged(upright.pixels, width: upright.width, height: upright.height, to: target)
        let frame = Frame(format: .rgb24, width: target.width, height: target.height, bytesPerLine: target.width * 3,
                          bytes: pixels, sequence: 0, capturedAt: .init(timeIntervalSince1970: 0))
        return try encoder.encode(frame, quality: quality).bytes
    }

    /// `width` x `height` scaled to fit inside `box`, aspect kept, at least 1x1, not enlarged.
    static func fittedSize(_ width: Int, _ height: Int, inside box: Resolution) -> Resolution {
        let scale = min(1, Double(box.width) / Double(width), Double(box.height) / Double(height))
        return Resolution(
            width: min(box.width, max(1, Int((Double(width) * scale).rounded()))),
            height: min(box.height, max(1, Int((Double(height) * scale).rounded()))))
    }

    /// Each output pixel is the mean of the block of source pixels it covers. Blocks tile the
    /// source (every pixel counts once) and stay inside it for any sizes, however thin.
    static func averaged(_ rgb: [UInt8], width: Int, height: Int, to target: Resolution) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: target.width * target.height * 3)
        for y in 0..<target.height {
            let y0 = y * height / target.height
            let y1 = max(y0 + 1, (y + 1) * height / target.height)
            for x in 0..<target.width {
                let x0 = x * width / target.width
                let x1 = max(x0 + 1, (x + 1) * width / target.width)
                var sums = (0, 0, 0)
                for sy in y0..<y1 {
                    var index = (sy * width + x0) * 3
                    for _ in x0..<x1 {
                        sums.0 += Int(rgb[index])
                        sums.1 += Int(rgb[index + 1])
                        sums.2 += Int(rgb[index + 2])
                        index += 3
                    }
                }
                let count = (y1 - y0) * (x1 - x0)
                let offset = (y * target.width + x) * 3
                out[offset] = UInt8(sums.0 / count)
                out[offset + 1] = UInt8(sums.1 / count)
                out[offset + 2] = UInt8(sums.2 / count)
            }
        }
        return out
    }
}
