import Foundation
import Testing

@testable import CamrollKit

/// camroll as a storage tester: `--fill` and what `verify` says of it.
@Suite(.serialized) struct StorageTests {
    /// A small tmpfs, mounted for one test (needs root, as mount does).
    final class SmallFileSystem {
        let path: String

        init(_ dir: TemporaryDirectory, size: String) throws {
            path = dir.file("small")
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            let mount = try CamrollBinary.runProgram(["/bin/mount", "-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path])
            try #require(mount.status == 0, "cannot mount a tmpfs: \(mount.stderr)")
        }

        deinit { _ = try? CamrollBinary.runProgram(["/bin/umount", path]) }

        var freeBytes: Int {
            var info = statvfs()
            return statvfs(path, &info) == 0 ? Int(info.f_bavail) * Int(info.f_frsize) : -1
        }
    }

    /// Saves until ENOSPC, which is the normal end of a fill: exit 0, every file on disk has its
    /// row and reads back intact, no partial file is left, and the space left is less than one
    /// more file.
    @Test(.enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
    func aFillSavesUntilTheFileSystemIsFullAndEndsCleanly() throws {
        let dir = try TemporaryDirectory()
        let small = try SmallFileSystem(dir, size: "4m")
        let result = try CamrollBinary.run(
            ["-d", "pattern", "-r", "320x240", "--fill", "-o", small.path + "/{seq}.jpg", "--db", dir.file("c.sqlite3")])
        #expect(result.status == 0, "\(result.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: small.path)
        #expect(files.allSatisfy { !$0.hasPrefix(".") }, "partial temporary file left: \(files)")
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        let saved = try catalog.int("SELECT count(*) FROM saves WHERE status = 'saved'")
        #expect(saved == files.count && saved > 100)
        #expect(try catalog.text("SELECT status FROM runs") == "completed")
        let largest = try catalog.int("SELECT max(bytes) FROM saves")
        #expect(small.freeBytes >= 0 && small.freeBytes < largest + 4096, "free \(small.freeBytes), a file \(largest)")
        let bytes = try catalog.int("SELECT sum(bytes) FROM saves")
        #expect(result.stdout.hasPrefix("filled \(saved) files, \(Units.bytes(bytes)) in"), "\(result.stdout)")
        #expect(result.stdout.contains("the file system is full"))
        // Names as wide as the most files that could fit, not the ten digits of the upper bound.
        #expect(files.contains { $0.count < 10 } && Set(files.map(\.count)).count == 1, "\(files.prefix(3))")
        // Stamped: every file's bytes differ.
        #expect(try catalog.int("SELECT count(DISTINCT xxh128) FROM saves") == saved)
        let verify = try CamrollBinary.run(["verify", "--db", dir.file("c.sqlite3")])
        #expect(verify.status == 0, "\(verify.stdout)")
        #expect(verify.stdout.contains("\(saved) ok"))
    }

    /// `-n` bounds a fill; on a file system with room, it stops there like any run.
    @Test func aFillStopsAtTheCountGiven() throws {
        let dir = try TemporaryDirectory()
        let result = try CamrollBinary.run(
            ["-d", "pattern", "-r", "64x48", "--fill", "-n", "7", "-o", dir.file("out/{seq}.jpg"), "--db", dir.file("c.sqlite3"),
             "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(dir.files(in: "out", suffix: ".jpg").count == 7)
        #expect(result.stdout.contains("\"event\":\"summary\"") && !result.stdout.contains("\"filled\""))
        #expect(result.stdout.contains("\"free_bytes\""))
        let pick = try CamrollBinary.run(["pick", "-d", "pattern", "--fill"])
        #expect(pick.status == 64 && pick.stderr.contains("camroll snap --fill"), "\(pick.stderr)")
    }
}
