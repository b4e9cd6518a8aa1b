import CExif
import CLinux
import CSpng
import CSQLite
import CTurboJPEG
import CV4L2
import CXXHash

/// `camroll --version`: camroll's own, then the C libraries it runs with.
enum Versions {
    static var text: String {
        let xxhash = Int(XXH_versionNumber())
        var lines = [
            Help.version,
            "libjpeg-turbo \(String(cString: cturbojpeg_version())) (built against)",
            "SQLite \(String(cString: sqlite3_libversion()))",
            "xxHash \(xxhash / 10000).\(xxhash / 100 % 100).\(xxhash % 100)",
            "libspng \(cspng_version_string().map { String(cString: $0) } ?? "(not installed)")",
        ]
        // libv4l2 has no version call: where it was loaded from says which one it is.
        lines.append("libv4l2 (v4l-utils) \(cv4l2_library_file().map { String(cString: $0) } ?? "(not installed)")")
        let exif: @convention(c) () -> UnsafeMutablePointer<ExifData>? = exif_data_new
        if let file = clinux_library_of(unsafeBitCast(exif, to: UnsafeRawPointer.self)) {
            lines.append("libexif \(String(cString: file))")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
