/// The marker segments at the head of a JPEG (APPn, COM, DQT, DHT, SOF…, up to the first SOS),
/// read without decoding anything: where its EXIF block is, and how to put another in its place.
public enum JPEGSegments {
    public struct Segment: Equatable {
        /// The second marker byte (0xE1 for APP1).
        public var marker: UInt8
        /// From the 0xFF of the marker to the end of the segment.
        public var range: Range<Int>
        /// The segment's contents, after its length field.
        public var payload: Range<Int>
    }

    /// "Exif\0\0": what an APP1 holding EXIF starts with.
    static let exifSignature: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0x00, 0x00]

    /// The segments from after SOI to SOS (exclusive). Stops quietly at anything malformed: the
    /// decoder is what judges a damaged file.
    public static func headerSegments(of jpeg: [UInt8]) -> [Segment] {
        guard jpeg.count >= 4, jpeg[0] == 0xFF, jpeg[1] == 0xD8 else { return [] }
        var segments: [Segment] = []
        var offset = 2
        while offset + 4 <= jpeg.count, jpeg[offset] == 0xFF {
            let marker = jpeg[offset + 1]
            if marker == 0xFF { offset += 1; continue }  // fill byte
            if marker == 0xDA || marker == 0xD9 || marker == 0xD8 || (0xD0...0xD7).contains(marker) { break }
            let length = Int(jpeg[offset + 2]) << 8 | Int(jpeg[offset + 3])
            guard length >= 2, offset + 2 + length <= jpeg.count else { break }
            segments.append(Segment(marker: marker, range: offset..<(offset + 2 + length), payload: (offset + 4)..<(offset + 2 + length)))
            offset += 2 + length
        }
        return segments
    }

    /// The EXIF block ("Exif\0\0" and the TIFF structure after it) of the first APP1 that holds
    /// one, or nil.
    public static func exifPayload(of jpeg: [UInt8]) -> ArraySlice<UInt8>? {
        exifSegments(of: jpeg).first.map { jpeg[$0.payload] }
    }

    static func exifSegments(of jpeg: [UInt8]) -> [Segment] {
        headerSegments(of: jpeg).filter { segment in
            segment.marker == 0xE1 && segment.payload.count >= exifSignature.count
                && jpeg[segment.payload.prefix(exifSignature.count)].elementsEqual(exifSignature)
        }
    }

    /// An APP1 segment holding `exif` ("Exif\0\0…"); nil when it does not fit in one (64 KB).
    public static func app1(exif: [UInt8]) -> [UInt8]? {
        let length = exif.count + 2
        guard length <= 0xFFFF else { return nil }
        return [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + exif
    }

    /// `jpeg` without its EXIF APP1 segments and with `segment` in their place: right after
    /// SOI, or after the APP0 segments (JFIF, JFXX, a camera's AVI1) that lead the file, as JFIF
    /// asks to be first. Everything else — and so the image data — stays byte for byte as it was.
    public static func replacingExif(in jpeg: [UInt8], with segment: [UInt8]) -> [UInt8] {
        let segments = headerSegments(of: jpeg)
        let insertion = segments.prefix(while: { $0.marker == 0xE0 }).last?.range.upperBound ?? 2
        let old = exifSegments(of: jpeg)
        var result = [UInt8]()
        result.reserveCapacity(jpeg.count + segment.count)
        result += jpeg[0..<insertion]
        result += segment
        var offset = insertion
        for old in old where old.range.lowerBound >= insertion {
            result += jpeg[offset..<old.range.lowerBound]
            offset = old.range.upperBound
        }
        result += jpeg[offset...]
        return result
    }

    /// `jpeg` without `segments` (some of its header segments, in order).
    static func removing(_ segments: [Segment], from jpeg: [UInt8]) -> [UInt8] {
        var result = [UInt8]()
        result.reserveCapacity(jpeg.count)
        var offset = 0
        for segment in segments {
            result += jpeg[offset..<segment.range.lowerBound]
            offset = segment.range.upperBound
        }
        result += jpeg[offset...]
        return result
    }

    /// An APP1 holding an XMP packet ("http://ns.adobe.com/xap/1.0/\0").
    static func isXMP(_ jpeg: [UInt8], _ segment: Segment) -> Bool {
        let signature = Array("http://ns.adobe.com/xap/1.0/".utf8)
        return segment.marker == 0xE1 && segment.payload.count > signature.count
            && jpeg[segment.payload.prefix(signature.count)].elementsEqual(signature)
    }

    /// Whether `text`'s bytes occur in `bytes`.
    static func contains(_ bytes: ArraySlice<UInt8>, _ text: String) -> Bool {
        let needle = Array(text.utf8)
        guard let first = needle.first, bytes.count >= needle.count else { return false }
        var index = bytes.startIndex
        while index <= bytes.endIndex - needle.count {
            if bytes[index] == first && bytes[index..<(index + needle.count)].elementsEqual(needle) { return true }
            index += 1
        }
        return false
    }
}
