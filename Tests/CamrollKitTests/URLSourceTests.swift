@testable import CamrollKit
import Foundation
import Testing

/// `-d http://…` against a real HTTP server on 127.0.0.1 (Tests/http/server.py): downloaded
/// once, cached, asked again conditionally, fetched again when it changed; every failure one
/// line, its own exit status, nothing saved, the cache untouched.
@Suite(.serialized) struct URLSourceTests {
    /// The server, started for one test and stopped with it.
    final class Server {
        let process: Process
        let port: Int
        let log: String
        let root: String

        init(in dir: TemporaryDirectory) throws {
            root = dir.file("www")
            log = dir.file("server.log")
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            let script = repositoryFile("Tests/http/server.py")
            process = CamrollBinary.programProcess(["/usr/bin/python3", script, root, log])
            let out = Pipe()
            process.standardOutput = out
            try process.run()
            let line = String(decoding: out.fileHandleForReading.availableData, as: UTF8.self)
            port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        }

        deinit {
            // SIGKILL: a server thread may be sleeping in /slow, and SIGTERM may be blocked in
            // a child of the test runner.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }

        func url(_ path: String) -> String { "http://127.0.0.1:\(port)/\(path)" }
        /// One line per request: "PATH STATUS conditional|plain", then " USER:PASSWORD" if sent.
        var requests: [String] {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
    }

    /// camroll with its cache in `dir` and no proxy between it and 127.0.0.1.
    static func snap(_ dir: TemporaryDirectory, _ arguments: [String]) throws -> CamrollBinary.Result {
        try CamrollBinary.run(
            options(["--db", dir.file("c.db")], then: arguments),
            environment: ["XDG_CACHE_HOME": dir.file("cache"), "no_proxy": "*", "NO_PROXY": "*"])
    }

    static func photo(_ dir: TemporaryDirectory, _ name: String, size: String) throws {
        let made = try CamrollBinary.run(["-d", "pattern", "-r", size, "-o", dir.file("www/" + name), "--overwrite", "--db", dir.file("make.db")])
        #expect(made.status == 0, "\(made.stderr)")
    }

    @Test func downloadedOnceThenAskedConditionallyThenOfflineThenAgainWhenChanged() throws {
        let dir = try TemporaryDirectory()
        let server = try Server(in: dir)
        try Self.photo(dir, "photo.jpg", size: "320x240")
        let url = server.url("photo.jpg")

        let first = try Self.snap(dir, ["-d", url, "-n", "3", "-o", dir.file("out/a{seq}.jpg")])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(server.requests == ["/photo.jpg 200 plain"])
        let original = try fileBytes(dir.file("www/photo.jpg"))
        for seq in 1...3 { #expect(XXH128.hex(of: try fileBytes(dir.file("out/a\(seq).jpg"))) == XXH128.hex(of: original)) }
        let db = try CatalogReader(dir.file("c.db"))
        #expect(try db.text("SELECT device FROM runs") == url)
        let cached = try #require(try db.text("SELECT cached_path FROM sources WHERE url = '\(url)'"))
        #expect(cached.hasPrefix(dir.file("cache/camroll/")))
        #expect(XXH128.hex(of: try fileBytes(cached)) == XXH128.hex(of: original))
        #expect(try db.text("SELECT xxh128 FROM sources") == XXH128.hex(of: original))
        #expect(try db.text("SELECT etag FROM sources") != nil && db.text("SELECT last_modified FROM sources") != nil)

        // Second time: a conditional request, answered 304; the cached copy is used.
        let second = try Self.snap(dir, ["-d", url, "-o", dir.file("out/b.jpg")])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(server.requests.last == "/photo.jpg 304 conditional" && server.requests.count == 2)
        #expect(XXH128.hex(of: try fileBytes(dir.file("out/b.jpg"))) == XXH128.hex(of: original))

        // --offline: no request at all.
        let offline = try Self.snap(dir, ["-d", url, "--offline", "-o", dir.file("out/c.jpg")])
        #expect(offline.status == 0, "\(offline.stderr)")
        #expect(server.requests.count == 2)
        #expect(XXH128.hex(of: try fileBytes(dir.file("out/c.jpg"))) == XXH128.hex(of: original))

        // Changed on the server: fetched again (a conditional request answered 200).
        try Self.photo(dir, "photo.jpg", size: "160x120")
        let changed = try fileBytes(dir.file("www/photo.jpg"))
        #expect(XXH128.hex(of: changed) != XXH128.hex(of: original))
        let third = try Self.snap(dir, ["-d", url, "-o", dir.file("out/d.jpg")])
        #expect(third.status == 0, "\(third.stderr)")
        #expect(server.requests.last == "/photo.jpg 200 conditional")
        #expect(XXH128.hex(of: try fileBytes(dir.file("out/d.jpg"))) == XXH128.hex(of: changed))
        #expect(try db.text("SELECT xxh128 FROM sources") == XXH128.hex(of: changed))
        #expect(try db.int("SELECT count(*) FROM sources") == 1)

        // A redirect is followed; the cache is per URL asked for.
        let redirected = try Self.snap(dir, ["-d", server.url("redirect/photo.jpg"), "-o", dir.file("out/e.jpg")])
        #expect(redirected.status == 0, "\(redirected.stderr)")
        #expect(XXH128.hex(of: try fileBytes(dir.file("out/e.jpg"))) == XXH128.hex(of: changed))

        // A cached copy altered on disk is not trusted: downloaded again, unconditionally.
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: cached))
        let repaired = try Self.snap(dir, ["-d", url, "-o", dir.file("out/f.jpg")])
        #expect(repaired.status == 0, "\(repaired.stderr)")
        #expect(server.requests.last == "/photo.jpg 200 plain")
        #expect(XXH128.hex(of: try fileBytes(cached)) == XXH128.hex(of: changed))

        // Gone from the server: an error, and the cached copy and its row stay as they were.
        try FileManager.default.removeItem(atPath: dir.file("www/photo.jpg"))
        let gone = try Self.snap(dir, ["-d", url, "-o", dir.file("out/g.jpg")])
        #expect(gone.status == 66 && gone.stderr.contains("not found (HTTP 404)"), "\(gone.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("out/g.jpg")))
        #expect(XXH128.hex(of: try fileBytes(cached)) == XXH128.hex(of: changed))
        #expect(try db.text("SELECT xxh128 FROM sources") == XXH128.hex(of: changed))
        let stillOffline = try Self.snap(dir, ["-d", url, "--offline", "-o", dir.file("out/h.jpg")])
        #expect(stillOffline.status == 0, "\(stillOffline.stderr)")
    }

    @Test func aPNGFromAURLIsEncodedWithExif() throws {
        let dir = try TemporaryDirectory()
        let server = try Server(in: dir)
        let png = "import zlib, struct\nrows = b''.join(b'\\0' + b'\\x10\\x80\\xf0' * 20 for _ in range(10))\n"
            + "c = lambda t, d: struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))\n"
            + "open('\(dir.file("www/p.png"))', 'wb').write(b'\\x89PNG\\r\\n\\x1a\\n' + c(b'IHDR', struct.pack('>IIBBBBB', 20, 10, 8, 2, 0, 0, 0)) + c(b'IDAT', zlib.compress(rows)) + c(b'IEND', b''))\n"
        #expect(try CamrollBinary.runProgram(["/usr/bin/python3", "-c", png]).status == 0)
        let result = try Self.snap(dir, ["-d", server.url("p.png"), "-o", dir.file("p.jpg")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try JPEGDecoder().header(of: fileBytes(dir.file("p.jpg"))).width == 20)
        #expect(JPEGSegments.exifPayload(of: try fileBytes(dir.file("p.jpg"))) != nil)
        #expect(try CatalogReader(dir.file("c.db")).text("SELECT cached_path FROM sources")?.hasSuffix(".png") == true)
    }

    /// Each failure: its message, its exit status; no file, no save, nothing cached.
    @Test(arguments: [
        ("status/404", Int32(66), "not found (HTTP 404)"),
        ("status/500", 69, "the server failed (HTTP 500)"),
        ("status/403", 77, "access refused (HTTP 403)"),
        ("loop", 76, "too many redirects"),
        ("short", 74, "the download was cut short"),
        ("slow", 75, "timed out"),
        ("huge", 65, "larger than 256 MB"),
        ("page.html", 65, "is not a JPEG or PNG file"),
        // What the server says of its answer is printed with control characters escaped.
        ("hostile", 65, "nothing saved\n" + #"The server sent Content-Type: text/\e[31mhtml\e]0;owned\x07."# + "\n"),
    ])
    func aFailedDownloadSavesNothing(path: String, status: Int32, message: String) throws {
        let dir = try TemporaryDirectory()
        let server = try Server(in: dir)
        try Data("<html>a web page</html>".utf8).write(to: URL(fileURLWithPath: dir.file("www/page.html")))
        let result = try Self.snap(dir, ["-d", server.url(path), "--timeout", "1s", "-o", dir.file("out/x.jpg")])
        #expect(result.status == status, "\(path): \(result.stderr)")
        #expect(result.stderr.hasPrefix("camroll: error: ") && result.stderr.contains(message), "\(path): \(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("out/x.jpg")))
        #expect((try? FileManager.default.contentsOfDirectory(atPath: dir.file("cache/camroll"))) ?? [] == [])
        let db = try CatalogReader(dir.file("c.db"))
        #expect(try db.int("SELECT count(*) FROM saves") == 0 && db.int("SELECT count(*) FROM sources") == 0)
    }

    @Test func aWebAddressIsShownWithoutItsPassword() {
        for (given, shown) in [
            ("http://admin:s3cret@camera.local/snapshot.jpg", "http://admin:***@camera.local/snapshot.jpg"),
            ("https://u:p:q@[::1]:8443/x?y=1", "https://u:***@[::1]:8443/x?y=1"),
            ("--device=http://a:b@h/x", "--device=http://a:***@h/x"),
            ("http://admin@camera.local/a.jpg", "http://admin@camera.local/a.jpg"),
            ("http://camera.local/me@home.jpg", "http://camera.local/me@home.jpg"),
            ("http://a:b@one/x http://c:d@two/y", "http://a:***@one/x http://c:***@two/y"),
            ("/tmp/shots/{seq}.jpg", "/tmp/shots/{seq}.jpg"),
        ] {
            #expect(WebAddress.withoutPassword(given) == shown)
        }
    }

    /// The password of a web address (an IP camera's snapshot address often has one) goes to
    /// the server and nowhere else: the catalog, the cache and the messages show it hidden.
    @Test func aURLsPasswordIsSentButNeverKeptOrShown() throws {
        let dir = try TemporaryDirectory()
        let server = try Server(in: dir)
        try Self.photo(dir, "photo.jpg", size: "320x240")
        let address = server.url("photo.jpg").replacing("http://", with: "http://admin:s3cret@")
        let hidden = server.url("photo.jpg").replacing("http://", with: "http://admin:***@")
        let saved = try Self.snap(dir, ["-d", address, "-o", dir.file("out/p.jpg")])
        #expect(saved.status == 0, "\(saved.stderr)")
        #expect(server.requests == ["/photo.jpg 200 plain admin:s3cret"])
        let offline = try Self.snap(dir, ["-d", address, "--offline", "-o", dir.file("out/q.jpg")])
        #expect(offline.status == 0, "the cached copy is found by the address without its password: \(offline.stderr)")
        let missing = try Self.snap(dir, ["-d", address.replacing("photo.jpg", with: "gone.jpg"), "-o", dir.file("out/r.jpg")])
        // First the warning that the password was readable in the arguments, then the error.
        let lines = missing.stderr.split(separator: "\n")
        #expect(missing.status == 66 && lines.first?.hasPrefix("camroll: warning: a password in a URL on the command line") == true
                    && lines.contains { $0.hasPrefix("camroll: error: \(hidden.replacing("photo.jpg", with: "gone.jpg")): not found") },
                "\(missing.stderr)")
        #expect(!(saved.stdout + saved.stderr + offline.stdout + offline.stderr + missing.stderr).contains("s3cret"))
        let catalog = try CatalogReader(dir.file("c.db"))
        #expect(try catalog.text("SELECT device FROM runs WHERE id = 1") == hidden)
        #expect(try catalog.text("SELECT command FROM runs WHERE id = 1")?.contains("-d '\(hidden)'") == true)
        #expect(try catalog.text("SELECT url FROM sources") == hidden)
        // Not in any file camroll wrote (the catalog with its WAL, the cache, the photos).
        for path in try FileManager.default.subpathsOfDirectory(atPath: dir.path) where path != "server.log" {
            guard let bytes = FileManager.default.contents(atPath: dir.file(path)) else { continue }
            #expect(!String(decoding: bytes, as: UTF8.self).contains("s3cret"), "\(path) holds the password")
        }
    }

    /// A cache that cannot be written: said to be the cache, with where it is set; nothing saved.
    @Test func aCacheThatCannotBeWrittenIsNamed() throws {
        let dir = try TemporaryDirectory()
        let server = try Server(in: dir)
        try Self.photo(dir, "photo.jpg", size: "320x240")
        try Data("a file, not a directory".utf8).write(to: URL(fileURLWithPath: dir.file("cache")))
        let result = try Self.snap(dir, ["-d", server.url("photo.jpg"), "-o", dir.file("out/p.jpg")])
        #expect(result.status == 73, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("camroll: error: cannot keep the download in the cache: cannot create directory \(dir.file("cache"))"),
                "\(result.stderr)")
        #expect(result.stderr.contains("\nThe cache is $XDG_CACHE_HOME/camroll (else ~/.cache/camroll)"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("out/p.jpg")))
    }

    /// On a terminal the download shows a progress line, then the line is cleared.
    @Test func aDownloadShowsItsProgressOnATerminal() throws {
        let dir = try TemporaryDirectory()
        let server = try Server(in: dir)
        try Self.photo(dir, "photo.jpg", size: "320x240")
        let command = "\(CamrollBinary.path) -d \(server.url("photo.jpg")) -o \(dir.file("p.jpg")) --db \(dir.file("c.db"))"
        let result = try CamrollBinary.runProgram(
            ["/usr/bin/script", "-qfec", command, "/dev/null"],
            environment: ["XDG_CACHE_HOME": dir.file("cache"), "no_proxy": "*", "NO_PROXY": "*", "TERM": "xterm"])
        #expect(result.status == 0, "\(result.stdout)")
        #expect(result.stdout.contains("downloading \(server.url("photo.jpg"))"), "\(result.stdout)")
        #expect(FileManager.default.fileExists(atPath: dir.file("p.jpg")))
    }

    /// Ctrl-C while the server is silent: out at once, 130, nothing saved or cached.
    @Test func ctrlCDuringADownloadCancelsIt() throws {
        let dir = try TemporaryDirectory()
        let server = try Server(in: dir)
        let process = CamrollBinary.process(
            ["-d", server.url("slow"), "--timeout", "30s", "-o", dir.file("x.jpg"), "--db", dir.file("c.db")],
            environment: ["XDG_CACHE_HOME": dir.file("cache"), "no_proxy": "*", "NO_PROXY": "*"])
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        // Until the request has reached the server.
        for _ in 0..<100 where server.requests.isEmpty { usleep(50_000) }
        let sent = Date()
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        #expect(process.terminationStatus == 130)
        #expect(Date().timeIntervalSince(sent) < 5, "took \(Date().timeIntervalSince(sent)) s to stop")
        #expect(String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).contains("cancelled"))
        #expect(!FileManager.default.fileExists(atPath: dir.file("x.jpg")))
        #expect((try? FileManager.default.contentsOfDirectory(atPath: dir.file("cache/camroll"))) ?? [] == [])
        #expect(try CatalogReader(dir.file("c.db")).int("SELECT count(*) FROM runs") == 0)
    }

    @Test func unreachableHostsAndAMissingCacheEntry() throws {
        let dir = try TemporaryDirectory()
        let unresolvable = try Self.snap(dir, ["-d", "http://camroll-test.invalid/x.jpg", "-o", dir.file("x.jpg")])
        #expect(unresolvable.status == 68, "\(unresolvable.stderr)")
        #expect(unresolvable.stderr.contains("camroll-test.invalid"))
        let refused = try Self.snap(dir, ["-d", "http://127.0.0.1:1/x.jpg", "-o", dir.file("x.jpg")])
        #expect(refused.status == 69, "\(refused.stderr)")
        let offline = try Self.snap(dir, ["-d", "http://127.0.0.1:1/x.jpg", "--offline", "-o", dir.file("x.jpg")])
        #expect(offline.status == 66 && offline.stderr.contains("no cached copy"), "\(offline.stderr)")
        let misplaced = try Self.snap(dir, ["-d", "pattern", "--offline", "-o", dir.file("x.jpg")])
        #expect(misplaced.status == 64, "\(misplaced.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("x.jpg")))
    }
}
