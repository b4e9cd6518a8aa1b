import Foundation
import Glibc

/// `--device file:PATH`: an existing JPEG, checked once and then saved byte for byte.
public final class ImageFile: FrameSource {
    public let deviceName: String
    private let image: EncodedImage
    private var frameNumber = 0

    /// Reads and fully decodes the file so that a damaged JPEG is refused before anything is saved.
    public init(path: String) throws {
        let absolute = AbsolutePath.resolve(path)
        deviceName = "file:\(absolute)"
        let bytes = try Self.read(absolute)
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else {
            throw CamrollError(.dataError, "'\(path)' is not a JPEG file (no JPEG start-of-image marker)")
        }
        // The size first: a file that claims too many pixels is refused before any decoding.
        let decoder = try JPEGDecoder()
        func invalid(_ error: CamrollError) -> CamrollError {
            CamrollError(.dataError, "'\(path)' is not a valid JPEG: \(error.message)")
        }
        let header: JPEGDecoder.Header
        do { header = try decoder.frameHeader(of: bytes) } catch let error as CamrollError { throw invalid(error) }
        try JPEGDecoder.refuseIfTooLarge(header, subject: "'\(path)'")
        do { _ = try decoder.decodeRGB(bytes) } catch let error as CamrollError { throw invalid(error) }
        image = EncodedImage(bytes: bytes, width: header.width, height: header.height, quality: nil)
    }

    public func nextFrame() throws -> Frame {
        frameNumber += 1
        return Frame(
            format: .jpeg, width: image.width, height: image.height, bytesPerLine: 0,
            bytes: image.bytes, sequence: frameNumber, capturedAt: Date())
    }

    private static func read(_ path: String) throws -> [UInt8] {
        var status = stat()
        guard stat(path, &status) == 0 else {
            let error = SystemError("stat", path: path)
            switch error.errno {
            case ENOENT, ENOTDIR: throw CamrollError(.noInput, "no such file: \(path)")
            case EACCES: throw CamrollError(.permissionDenied, "cannot read \(path): permission denied")
            default: throw CamrollError(.noInput, "cannot read \(error)")
            }
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            throw CamrollError(.dataError, "'\(path)' is not a regular file")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = access(path, R_OK) != 0 ? "permission denied" : "read failed"
            throw CamrollError(access(path, R_OK) != 0 ? .permissionDenied : .ioError, "cannot read \(path): \(reason)")
        }
        return [UInt8](data)
    }
}

enum AbsolutePath {
    /// `path` made absolute against the working directory, with `.` and `..` removed.
    static func resolve(_ path: String) -> String {
        let joined = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var parts: [Substring] = []
        for part in joined.split(separator: "/") {
            switch part {
            case ".": continue
            case "..": _ = parts.popLast()
            default: parts.append(part)
            }
        }
        return "/" + parts.joined(separator: "/")
    }
}
