/// MJPEG frames as cameras send them, made into JPEG files without re-encoding.
///
/// UVC cameras usually omit the Huffman tables (DHT) and rely on the standard ones of the JPEG
/// specification (Annex K.3); a JPEG file must carry them. The standard tables are exactly what
/// libjpeg-turbo writes when it does not optimise, so they are taken from a JPEG it encodes
/// rather than typed in by hand.
public enum MJPEGFrame {
    public enum Problem: Error, Equatable, CustomStringConvertible {
        case noStartOfImage
        case noEndOfImage
        case malformedSegment(offset: Int)
        case noScan

        public var description: String {
            switch self {
            case .noStartOfImage: "no JPEG start-of-image marker"
            case .noEndOfImage: "truncated: no end-of-image marker"
            case .malformedSegment(let offset): "malformed segment at byte \(offset)"
            case .noScan: "no image data (start-of-scan marker)"
            }
        }
    }

    /// The frame, trimmed after its EOI (drivers pad buffers), with the standard Huffman
    /// tables inserted before the scan if it has none. Throws `Problem` for a broken frame.
    public static func jpeg(from frame: [UInt8]) throws -> [UInt8] {
        guard frame.count >= 4, frame[0] == 0xFF, frame[1] == 0xD8 else { throw Problem.noStartOfImage }
        guard let end = lastEndOfImage(in: frame) else { throw Problem.noEndOfImage }
        let segments = try headerSegments(frame, upTo: end)
        guard let scan = segments.first(where: { $0.marker == 0xDA }) else { throw Problem.noScan }
        let trimmed = Array(frame[0..<end])
        if segments.contains(where: { $0.marker == 0xC4 }) { return trimmed }
        return Array(trimmed[0..<scan.offset]) + standardHuffmanTables + Array(trimmed[scan.offset...])
    }

    struct Segment {
        var marker: UInt8
        var offset: Int
        var length: Int
    }

    /// The marker segments from SOI up to and including SOS.
    static func headerSegments(_ bytes: [UInt8], upTo end: Int) throws -> [Segment] {
        var segments: [Segment] = []
        var offset = 2
        while offset + 4 <= end {
            guard bytes[offset] == 0xFF else { throw Problem.malformedSegment(offset: offset) }
            let marker = bytes[offset + 1]
            if marker == 0xFF {  // fill byte
                offset += 1
                continue
            }
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            guard length >= 2, offset + 2 + length <= end else { throw Problem.malformedSegment(offset: offset) }
            segments.append(Segment(marker: marker, offset: offset, length: length))
            if marker == 0xDA { return segments }
            offset += 2 + length
        }
        return segments
    }

    /// Index just past the last FF D9.
    static func lastEndOfImage(in bytes: [UInt8]) -> Int? {
        var index = bytes.count - 2
        while index >= 2 {
            if bytes[index] == 0xFF && bytes[index + 1] == 0xD9 { return index + 2 }
            index -= 1
        }
        return nil
    }

    /// The DHT segments libjpeg-turbo writes for a baseline 4:2:2 JPEG: the Annex K tables.
    public static let standardHuffmanTables: [UInt8] = {
        let tiny = Frame(
            format: .yuyv, width: 16, height: 8, bytesPerLine: 32, bytes: [UInt8](repeating: 128, count: 256),
            sequence: 0, capturedAt: .init(timeIntervalSince1970: 0))
        guard let encoder = try? JPEGEncoder(), let jpeg = try? encoder.encode(tiny, quality: 75).bytes,
              let end = lastEndOfImage(in: jpeg), let segments = try? headerSegments(jpeg, upTo: end)
        else { return [] }
        return segments.filter { $0.marker == 0xC4 }.flatMap { jpeg[$0.offset..<($0.offset + 2 + $0.length)] }
    }()
}
