import CExif
import CLinux
import CSQLite
import CTurboJPEG
import CXXHash
import Glibc

/// `camroll --version`: camroll's own, the C libraries it is linked with, then every library it
/// loads on use (library_loader.h), each with its version or "(not installed)". Those are
/// loaded here, under --version only: a photo still loads none it does not call.
enum Versions {
    static var text: String {
        let xxhash = Int(XXH_versionNumber())
        var lines = [
            Help.version,
            "libjpeg-turbo \(String(cString: cturbojpeg_version())) (built against)",
            "SQLite \(String(cString: sqlite3_libversion()))",
            "xxHash \(xxhash / 10000).\(xxhash / 100 % 100).\(xxhash % 100)",
        ]
        let exif: @convention(c) () -> UnsafeMutablePointer<ExifData>? = exif_data_new
        if let file = clinux_library_of(unsafeBitCast(exif, to: UnsafeRawPointer.self)) {
            lines.append("libexif \(realFile(String(cString: file)))")
        }
        lines += loadedOnUse.map { "\($0.name) \($0.version() ?? "(not installed)")" }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A library camroll loads with dlopen when a command first needs it.
    struct Loadable {
        var name: String
        /// Tried in order (libcurl is built against OpenSSL or GnuTLS).
        var sonames: [String]
        /// A function it has, to find the file it was loaded from where it does not say its version.
        var symbol: String
        var versionCall: VersionCall

        enum VersionCall {
            /// `const char *f(void)`, the version first in it and what it is built with next
            /// ("libcurl/7.88.1 OpenSSL/3.0.15 …" → "7.88.1 (OpenSSL/3.0.15)").
            case text(String)
            /// `const unsigned` variables: major, minor, micro (GLib's and librsvg's way).
            case numbers(String, String, String)
            /// None: the library's real file, whose name carries its version (libv4l2.so.0.0.0).
            case file
        }

        /// Its version, or nil when it cannot be loaded.
        func version() -> String? {
            guard let handle = sonames.lazy.compactMap({ dlopen($0, RTLD_LAZY | RTLD_LOCAL) }).first else { return nil }
            switch versionCall {
            case .text(let function):
                typealias Call = @convention(c) () -> UnsafePointer<CChar>?
                if let address = dlsym(handle, function), let text = unsafeBitCast(address, to: Call.self)() {
                    let words = String(cString: text).split(separator: " ")
                    guard let first = words.first else { return "(version unknown)" }
                    let version = first.split(separator: "/").last.map(String.init) ?? String(first)
                    return words.count > 1 ? "\(version) (\(words[1]))" : version
                }
            case .numbers(let major, let minor, let micro):
                let parts = [major, minor, micro].compactMap { (name: String) -> UInt32? in dlsym(handle, name)?.load(as: UInt32.self) }
                if parts.count == 3 { return parts.map(String.init).joined(separator: ".") }
            case .file:
                break
            }
            guard let address = dlsym(handle, symbol), let file = clinux_library_of(address) else { return "(version unknown)" }
            return realFile(String(cString: file))
        }
    }

    static let loadedOnUse: [Loadable] = [
        Loadable(name: "libv4l2 (v4l-utils)", sonames: ["libv4l2.so.0"], symbol: "v4l2_open", versionCall: .file),
        Loadable(name: "libv4lconvert (v4l-utils)", sonames: ["libv4lconvert.so.0"], symbol: "v4lconvert_create", versionCall: .file),
        Loadable(name: "libspng", sonames: ["libspng.so.0"], symbol: "spng_ctx_new", versionCall: .text("spng_version_string")),
        Loadable(name: "libcurl", sonames: ["libcurl.so.4", "libcurl-gnutls.so.4"], symbol: "curl_easy_init",
                 versionCall: .text("curl_version")),
        Loadable(name: "libchafa", sonames: ["libchafa.so.0"], symbol: "chafa_canvas_new", versionCall: .file),
        Loadable(name: "librsvg", sonames: ["librsvg-2.so.2"], symbol: "rsvg_handle_new_from_data",
                 versionCall: .numbers("rsvg_major_version", "rsvg_minor_version", "rsvg_micro_version")),
        // The --timestamp/--title banner's: Pango's version, found through pangocairo's handle.
        Loadable(name: "libpango", sonames: ["libpangocairo-1.0.so.0"], symbol: "pango_cairo_show_layout",
                 versionCall: .text("pango_version_string")),
    ]

    /// The file a library's name leads to (`libv4l2.so.0` → `…/libv4l2.so.0.0.0`).
    static func realFile(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
