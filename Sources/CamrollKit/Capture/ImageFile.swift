import FoundationEssentials
import Glibc

/// `--device file:PATH` (and a downloaded URL): an existing photo, checked once. A JPEG is
/// saved byte for byte unless asked to change it; a PNG is decoded and encoded like a frame.
public final class ImageFile: FrameSource {
    public let deviceName: String
    /// A file's own EXIF, if any, says who took it; camroll claims nothing.
    public let origin = PhotoOrigin()
    private let frame: Frame
    private var frameNumber = 0

    /// Reads and fully decodes the file so that a damaged picture is refused before anything is
    /// saved.
    public convenience init(path: String) throws {
        let absolute = try AbsolutePath.resolve(path, code: .noInput)
        try self.init(bytes: try Self.read(absolute), name: "file:\(absolute)", subject: "'\(path)'")
    }

    /// `bytes` of a picture that `name` identifies (the catalog's device); `subject` names it
    /// in messages.
    public init(bytes: [UInt8], name: String, subject: String) throws {
        deviceName = name
        if PNGDecoder.isPNG(bytes) {
            // Its pixels are always decoded, so set upright by its eXIf Orientation here: the
            // block written with them says 1 (docs/snap.md, Orientation).
            let picture = try PNGDecoder.read(bytes, subject: subject)
            var decoded = try picture.image.upright(picture.orientation).frame
            decoded.sourceExif = picture.exif
            frame = decoded
            return
        }
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else {
            throw CamrollError(.dataError, "\(subject) is not a JPEG or PNG file")
        }
        // The size first: a file that claims too many pixels is refused before any decoding.
        let decoder = try JPEGDecoder()
        func invalid(_ error: CamrollError) -> CamrollError {
            CamrollError(.dataError, "\(subject) is not a valid JPEG: \(error.message)")
        }
        let header: JPEGDecoder.Header
        do { header = try decoder.frameHeader(of: bytes) } catch let error as CamrollError { throw invalid(error) }
        try JPEGDecoder.refuseIfTooLarge(header, subject: subject)
        do { try decoder.validate(bytes) } catch let error as CamrollError {
            throw ImageMemory.isTooLarge(error) ? error : invalid(error)
        }
        frame = Frame(format: .jpeg, width: header.width, height: header.height, bytesPerLine: 0, bytes: bytes,
                      sequence: 0, capturedAt: Date())
    }

    /// A compressed picture (JPEG), as opposed to pixels decoded from a PNG.
    public var isJPEG: Bool { frame.format == .jpeg }

    public func nextFrame() throws -> Frame {
        frameNumber += 1
        var next = frame
        next.sequence = frameNumber
        next.capturedAt = Date()  // when it was read, for the catalog; not when it was taken
        next.isShotTime = false
        return next
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
    /// `path` made absolute against the working directory, with `.` and `..` removed. A relative
    /// path with no working directory to resolve it against is an error, exit `code`: it was
    /// once resolved against "/", and `-o a.jpg` in a directory removed meanwhile saved /a.jpg.
    static func resolve(_ path: String, code: ExitCode = .cannotCreate) throws -> String {
        var joined = path
        if !path.hasPrefix("/") {
            guard let directory = ProcessEnvironment.currentDirectory() else {
                let reason = errno == ENOENT ? "was removed" : "cannot be found (\(SystemError("getcwd").reason))"
                throw CamrollError(code, "cannot tell where '\(path)' is: the working directory \(reason)",
                                   hint: "Change to a directory that exists, or give an absolute path.")
            }
            joined = directory + "/" + path
        }
        var parts: [Substring] = []
        for part in joined.split(separator: "/") {
            switch part {
            case ".": continue
            case "..": _ = parts.popLast()
            default: parts.append(part)
            }
        }
        // Not `parts.joined(separator:)`, nor `+=` of a Substring: both run the standard
        // library's unspecialized generic code, whose associated types the runtime finds by
        // demangling their names. A one-photo process would run that machinery for this alone,
        // and under qemu all code run once is translated first (docs/benchmarks.md, Time to the first JPEG).
        var resolved = ""
        for part in parts {
            resolved += "/"
            resolved += String(part)
        }
        return resolved.isEmpty ? "/" : resolved
    }
}
