/// The small picture stored with each capture (`captures.thumbnail`), as a phone's photo picker
/// keeps one beside the full image: decoded at a DCT scaling factor, reduced by whole-pixel
/// averaging to fit the box, encoded at quality 70.
public enum Thumbnail {
    public static let defaultBox = Resolution(width: 160, height: 120)
    public static let quality = 70

    public static func make(from jpeg: [UInt8], fitting box: Resolution, encoder: JPEGEncoder) throws -> [UInt8] {
        let decoder = try JPEGDecoder()
        let full = try decoder.header(of: jpeg)
        // The width that fits the box with the picture's aspect ratio.
        let targetWidth = max(1, min(box.width, box.height * full.width / max(1, full.height)))
        let (size, rgb) = try decoder.decodeRGB(jpeg, minimumWidth: targetWidth)
        let factor = max(1, size.width / targetWidth)
        let width = max(1, size.width / factor), height = max(1, size.height / factor)
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                for channel in 0..<3 {
                    var sum = 0
                    for dy in 0..<factor {
                        for dx in 0..<factor {
                            sum += Int(rgb[((y * factor + dy) * size.width + x * factor + dx) * 3 + channel])
                        }
                    }
                    pixels[(y * width + x) * 3 + channel] = UInt8(sum / (factor * factor))
                }
            }
        }
        let frame = Frame(format: .rgb24, width: width, height: height, bytesPerLine: width * 3, bytes: pixels,
                          sequence: 0, capturedAt: .init(timeIntervalSince1970: 0))
        return try encoder.encode(frame, quality: quality).bytes
    }
}
