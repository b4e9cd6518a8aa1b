// libFuzzer targets over camroll's parsers, compiled together with CamrollKit's sources into one
// instrumented binary (see Fuzz/build). CAMROLL_FUZZ_TARGET picks the target:
//   mjpeg      MJPEG marker parsing and Huffman-table insertion, then a decode of the result
//   jpeg       `file:` validation: header, decode limit, full decode, thumbnail
//   template   the -o template: parse, render, the repair pattern
//   arguments  the argument parsers of snap and the catalog and device commands (NUL-separated)
//   values     duration, size, integer, resolution, crop and device parsing
//   exif       a photo's EXIF block through libexif: Orientation, and rebuilt with camroll's tags
//   png        `file:` PNG decoding with libspng, limit first, alpha flattened, then encoded
//   preview    pick's input: terminal bytes decoded as keys; a frame of any claimed format and
//              size (first 5 bytes) scaled for the preview, drawn live into a terminal of any
//              size, and encoded
import Foundation

enum FuzzTarget: String {
    case mjpeg, jpeg, template, arguments, values, exif, png, preview

    static let current: FuzzTarget = {
        let name = ProcessInfo.processInfo.environment["CAMROLL_FUZZ_TARGET"] ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            FileHandle.standardError.write(Data("set CAMROLL_FUZZ_TARGET to mjpeg, jpeg, template, arguments, values, exif, png or preview\n".utf8))
            exit(2)
        }
        // What a hostile file may make camroll decode, kept small so a run stays within memory.
        JPEGDecoder.maxPixels = 4_000_000
        return target
    }()
}

nonisolated(unsafe) private let decoder = try? JPEGDecoder()
nonisolated(unsafe) private let encoder = try? JPEGEncoder()
nonisolated(unsafe) private let livePainter: TerminalPainter? = {
    let painter = try? TerminalPainter(
        requested: .symbols, environment: ["TERM": "xterm-256color", "COLORTERM": "truecolor"], color: true)
    painter?.live = true
    return painter
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    switch FuzzTarget.current {
    case .mjpeg:
        if let jpeg = try? MJPEGFrame.jpeg(from: bytes) {
            _ = try? decoder?.decodeRGB(jpeg)
        }
    case .jpeg:
        guard let decoder, let encoder else { return 0 }
        if (try? decoder.decodeRGB(bytes)) != nil {
            let box = Resolution(width: 8 + Int(bytes.last ?? 0) % 200, height: 8 + Int(bytes.first ?? 0) % 200)
            _ = try? Thumbnail.make(from: bytes, fitting: box, encoder: encoder)
        }
    case .template:
        let text = String(decoding: bytes, as: UTF8.self)
        if let template = try? OutputTemplate(text) {
            let values = OutputTemplate.Values(
                seq: size, seqWidth: size % 20, run: 1, frame: 2, frameWidth: 3, time: Date(timeIntervalSince1970: Double(size) * 1e7))
            _ = template.render(values)
            _ = try? Regex(template.pathPattern(run: 7))
            _ = template.fixedDirectory
            _ = template.depthBelowFixedDirectory
            _ = template.namesEachSave
        }
    case .arguments:
        var arguments = bytes.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        _ = GlobalOptions.colorMode(in: arguments)
        _ = GlobalOptions.leading(&arguments)
        _ = try? SnapOptions.parse(arguments)
        for command in ["list", "show", "verify", "delete", "stats"] {
            _ = try? CatalogCommands(command: command, arguments: arguments, environment: [:])
        }
        for command in ["devices", "formats", "check", "controls"] {
            _ = try? DeviceCommands(command: command, arguments: arguments, environment: [:])
        }
    case .values:
        let text = String(decoding: bytes, as: UTF8.self)
        _ = try? ValueParser.duration(text, option: "--interval")
        _ = try? ValueParser.size(text, option: "--max-bytes")
        _ = try? ValueParser.integer(text, option: "-n", range: 1...SnapOptions.maxCount)
        _ = Resolution(parsing: text)
        _ = try? DeviceChoice(parsing: text)
        _ = PixelFormatName.parse(text)
        if let crop = CropRequest(parsing: text) { _ = try? crop.rect(width: 640, height: 480) }
        _ = UserDirectories.userDirsEntry("XDG_PICTURES_DIR", in: text, home: "/home/u")
    case .exif:
        // The input is the EXIF block of a JPEG's APP1 ("Exif\0\0" and the TIFF structure).
        let payload = [0x45, 0x78, 0x69, 0x66, 0, 0] + bytes.prefix(65_000)
        guard let segment = JPEGSegments.app1(exif: payload) else { return 0 }
        let jpeg: [UInt8] = [0xFF, 0xD8] + segment + [0xFF, 0xD9]
        _ = Exif.orientation(of: jpeg)
        if let rebuilt = Exif.segment(
            origin: PhotoOrigin(make: "m", model: "n"), takenAt: Date(timeIntervalSince1970: 1e9), width: 64, height: 48,
            existing: payload[...], orientation: 1) {
            _ = JPEGSegments.replacingExif(in: jpeg, with: rebuilt)
        }
    case .png:
        guard let encoder, let image = try? PNGDecoder.decode(bytes, subject: "input") else { return 0 }
        _ = try? encoder.encode(image.frame, quality: 50)
    case .preview:
        _ = Key.decode(bytes)
        guard bytes.count >= 5 else { return 0 }
        let formats: [PixelFormat] = [.yuyv, .yuv420, .rgb24, .mjpeg]
        let width = Int(bytes[1]) * 4 + Int(bytes[2] & 3), height = Int(bytes[3]) * 2 + Int(bytes[4] & 1)
        let format = formats[Int(bytes[0]) % formats.count]
        let data = Array(bytes.dropFirst(5))
        let frame = Frame(
            format: format, width: width, height: height,
            bytesPerLine: format == .yuyv ? width * 2 : format == .rgb24 ? width * 3 : 0, bytes: data,
            sequence: 0, capturedAt: Date())
        _ = try? PreviewScaler().picture(of: frame, width: Int(bytes[0]) + 1, height: Int(bytes[4]) + 1)
        // The whole live path: fitted, scaled and drawn in half blocks into a terminal of any size.
        _ = try? livePainter?.draw(frame, fitting: 1 + Int(bytes[2]) % 60, rows: 1 + Int(bytes[4]) % 30, cell: nil)
        // And the shot kept: encoded (YUYV and 4:2:0 through the strip encoder in C), with a
        // thumbnail of any size (YUYV's averaged from the frame).
        let thumbnailBox = Resolution(width: 1 + Int(bytes[1]) % 200, height: 1 + Int(bytes[3]) % 150)
        _ = try? encoder?.encode(frame, quality: 1 + Int(bytes[4]) % 100, thumbnailBox: thumbnailBox)
    }
    return 0
}
