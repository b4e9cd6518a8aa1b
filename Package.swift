// swift-tools-version:6.0
import PackageDescription

// The type metadata of a generic type (a dictionary of strings, an array of a struct) made by
// calling its accessor, not by the runtime reading the type's mangled name: that way needs the
// runtime's demangler, code which a one-photo process otherwise runs once and which under qemu
// (the VM suite, small boards' first runs) is translated before it runs. With it: 1 000 fewer
// blocks translated for one photo and 4% fewer instructions natively (docs/benchmarks.md,
// Findings behind the code); the binary 0.1% larger.
let metadataByAccessor: [SwiftSetting] = [
    .unsafeFlags(["-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors"])
]

// Exclusive access to a class's properties checked at run time in debug builds only (`swift
// test`, `make asan` and `make race` build so): in release builds (the shipped one, the VM suites',
// `make hostile`'s) each check looked the access up in a thread-local set, about 900 of the 5 000
// instructions camroll spent on a save beside its system calls (callgrind, make bench-save's
// 23 KB saves).
let exclusivityCheckedInDebugOnly: [SwiftSetting] = [
    .unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))
]

// The shipped build's C targets hardened as Debian builds C (`make static`, the VM suite):
// CAMROLL_C_FLAGS holds dpkg-buildflags' CPPFLAGS and CFLAGS (packaging/static-link-flags
// --c-flags), for the release configuration only. Other builds leave it unset.
let hardenedC: [CSetting] = Context.environment["CAMROLL_C_FLAGS"].map { flags in
    [.unsafeFlags(flags.split(separator: " ").map(String.init), .when(configuration: .release))]
} ?? []

let package = Package(
    name: "camroll",
    products: [
        .executable(name: "camroll", targets: ["camroll"])
    ],
    targets: [
        .systemLibrary(
            name: "CTurboJPEG", pkgConfig: "libturbojpeg",
            providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(
            name: "CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(
            name: "CXXHash", pkgConfig: "libxxhash",
            providers: [.apt(["libxxhash-dev"])]),
        .systemLibrary(
            name: "CExif", pkgConfig: "libexif",
            providers: [.apt(["libexif-dev"])]),
        // C libraries a photo from a YUYV or MJPEG camera never calls, loaded with dlopen on
        // first use instead of by the dynamic loader at every start (library_loader.h): libv4l2
        // and libv4lconvert (other formats), libspng (PNG files; zlib with it).
        // Their headers come from libv4l-dev and libspng-dev.
        .target(name: "CLibraryLoader", cSettings: hardenedC, linkerSettings: [.linkedLibrary("dl")]),
        .target(name: "CV4L2", dependencies: ["CLibraryLoader"], cSettings: hardenedC),
        .target(name: "CSpng", dependencies: ["CLibraryLoader"], cSettings: hardenedC),
        // libcurl is loaded with dlopen when a URL is fetched: only its header is used (no
        // pkgConfig, which would link it).
        .systemLibrary(name: "CCurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        // libchafa (terminal pictures) is loaded with dlopen when a picture is drawn, for the
        // same reason: GLib is not loaded by a photo that shows none. A C target of its own (not
        // a header-only system library) so that the table of loaded functions exists once.
        .target(name: "CChafa", dependencies: ["CLibraryLoader"], cSettings: hardenedC),
        // librsvg (SVG drawn into PNG, for `stats --plot run.png`) through dlopen likewise.
        .target(name: "CRsvg", dependencies: ["CLibraryLoader"], cSettings: hardenedC),
        // GTK 4 (pick's window) likewise: loaded when a window is opened, never by a photo; a
        // machine without it runs everything else.
        .target(name: "CGtk", dependencies: ["CLibraryLoader"], cSettings: hardenedC),
        // Pango and cairo (the --timestamp/--title banner) likewise: loaded when a banner is
        // drawn, never by a plain photo.
        .target(name: "CPango", dependencies: ["CLibraryLoader"], cSettings: hardenedC),
        .systemLibrary(name: "CLinux"),
        // The per-pixel loops of the JPEG path (YUYV to planes, range expansion) and the
        // resampling filter (Lanczos-3, cpixels.h), vectorized by the C compiler, and
        // the YUV encoder that calls libjpeg (libjpeg62-turbo, the library turbojpeg is built on)
        // directly.
        .target(name: "CPixels", cSettings: hardenedC, linkerSettings: [.linkedLibrary("jpeg")]),
        // The SIGBUS handler and the room it gives back, in one copy (see its header).
        .target(name: "CBusErrors", cSettings: hardenedC),
        // SIGINT, SIGTERM and SIGHUP blocked at the first instruction of camroll's own code.
        .target(name: "CEarlySignals", cSettings: hardenedC),
        .target(
            name: "CamrollKit",
            dependencies: ["CTurboJPEG", "CSQLite", "CXXHash", "CV4L2", "CExif", "CSpng", "CCurl", "CChafa", "CRsvg", "CGtk", "CPango", "CLinux", "CPixels", "CBusErrors"],
            swiftSettings: metadataByAccessor + exclusivityCheckedInDebugOnly),
        .executableTarget(name: "camroll", dependencies: ["CamrollKit", "CLinux", "CEarlySignals"], swiftSettings: metadataByAccessor),
        .testTarget(name: "CamrollKitTests", dependencies: ["CamrollKit", "camroll"]),
    ],
    swiftLanguageModes: [.v6]
)
