@testable import CamrollKit
import Foundation
import Testing

/// `-o -`: the JPEG to standard output, as fswebcam and ffmpeg take `-`; the run and its
/// captures recorded, no file saved.
@Suite struct StandardOutputTests {
    /// Runs camroll with stdout into `output` (bytes, not text) and stderr collected.
    static func run(_ arguments: [String], output: String, in directory: String) throws -> (status: Int32, stderr: String) {
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        let process = CamrollBinary.process(arguments)
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let stdout = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        let err = Pipe()
        process.standardOutput = stdout
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try stdout.close()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, stderr)
    }

    /// Three frames, one JPEG after another: each is the capture its row describes, and it
    /// decodes; no file named '-' appears, no save is recorded.
    @Test func framesGoToStandardOutputOneAfterAnother() throws {
        let dir = try TemporaryDirectory()
        let (status, stderr) = try Self.run(
            ["-d", "pattern", "-r", "320x240", "--frames", "3", "-o", "-", "--db", dir.file("c.sqlite3")],
            output: dir.file("stream.mjpeg"), in: dir.path)
        #expect(status == 0, "\(stderr)")
        let stream = try fileBytes(dir.file("stream.mjpeg"))
        #expect(stderr.hasPrefix("sent 3 photos, ") && stderr.hasSuffix(
            ", to standard output; run 1 in \(dir.file("c.sqlite3"))\n"), "\(stderr)")
        #expect(stderr.contains(Units.bytes(stream.count)), "\(stderr)")

        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.int("SELECT count(*) FROM saves") == 0)
        #expect(try catalog.text("SELECT status || ' ' || requested_count || ' ' || output_template FROM runs") == "completed 0 -")
        var offset = 0
        let decoder = try JPEGDecoder()
        for id in 1...3 {
            let size = try catalog.int("SELECT jpeg_bytes FROM captures WHERE id = \(id)")
            let jpeg = Array(stream[offset..<(offset + size)])
            #expect(XXH128.hex(of: jpeg) == (try catalog.text("SELECT xxh128 FROM captures WHERE id = \(id)")))
            #expect(try decoder.decodeRGB(jpeg).0 == JPEGDecoder.Header(width: 320, height: 240))
            offset += size
        }
        #expect(offset == stream.count)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
            == ["c.sqlite3", "c.sqlite3-shm", "c.sqlite3-wal", "c.sqlite3.runs-lock", "stream.mjpeg"])
    }

    /// What would save files, or write something else to stdout, is a usage error; so is a
    /// terminal on stdout (a JPEG is not for reading there), and `pick`.
    @Test func whatCannotGoWithStandardOutputIsRefused() throws {
        let dir = try TemporaryDirectory()
        for extra in [["-n", "2"], ["--fill"], ["--jobs", "2"], ["--direct"], ["--fsync"], ["--overwrite"], ["--stamp"], ["--json"]] {
            let result = try CamrollBinary.run(options(["-d", "pattern", "-o", "-", "--db", dir.file("c.sqlite3")], then: extra))
            #expect(result.status == 64, "\(extra): \(result.stderr)")
            #expect(result.stderr.contains("camroll: error: '\(extra[0])' cannot be used with -o - (standard output)"),
                    "\(extra): \(result.stderr)")
        }
        // pick's -o - is its result (PickWindowTests); with --json both would want stdout.
        let pick = try CamrollBinary.run(["pick", "-d", "pattern", "-o", "-", "--json", "--db", dir.file("c.sqlite3")])
        #expect(pick.status == 64 && pick.stdout.contains("'--json' cannot be used with -o - (standard output)"), "\(pick.stdout)")
        let command = [CamrollBinary.path, "-d", "pattern", "-o", "-", "--db", dir.file("c.sqlite3")].joined(separator: " ")
        let terminal = try CamrollBinary.runProgram(["/usr/bin/script", "-qfec", command, "/dev/null"])
        #expect(terminal.status == 64, "\(terminal.stdout)")
        #expect(terminal.stdout.contains("sends the JPEG to standard output, which is a terminal here"), "\(terminal.stdout)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("c.sqlite3")))
    }

    /// With stderr on a terminal (a pty from script(1)) and stdout into a file: a live line on
    /// stderr while the frames go out, the file holding only the JPEGs.
    @Test func onATerminalProgressGoesToStderrAndOnlyPhotosToStdout() throws {
        let dir = try TemporaryDirectory()
        let command = "'\(CamrollBinary.path)' -d pattern -r 320x240 --frames 3 --interval 200ms -o - --db '\(dir.file("c.sqlite3"))'"
            + " > '\(dir.file("stream.mjpeg"))'"
        let result = try CamrollBinary.runProgram(["/usr/bin/script", "-qfec", command, "/dev/null"])
        #expect(result.status == 0, "\(result.stdout)")
        #expect(result.stdout.contains("\r\u{1B}[2Ksent 1/3 photos to standard output, "), "\(result.stdout)")
        #expect(result.stdout.contains("sent 3 photos, "), "\(result.stdout)")
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try fileBytes(dir.file("stream.mjpeg")).count == catalog.int("SELECT sum(jpeg_bytes) FROM captures"))
    }

    /// The reader gone (`| head -c 100`): exit 74 and the run failed with why, not a crash or
    /// a silent end.
    @Test func aReaderThatGoesAwayEndsTheRunWithAnError() throws {
        let dir = try TemporaryDirectory()
        let command = "set -o pipefail; '\(CamrollBinary.path)' -d pattern -r 320x240 --frames 200 -o - --db '\(dir.file("c.sqlite3"))'"
            + " | head -c 100 > /dev/null"
        let result = try CamrollBinary.runProgram(["/bin/bash", "-c", command])
        #expect(result.status == 74, "\(result.stderr)")
        #expect(result.stderr.contains("camroll: error: cannot write to standard output: Broken pipe"), "\(result.stderr)")
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.text("SELECT status || ': ' || error FROM runs") == "failed: cannot write to standard output: Broken pipe")
    }

    /// Killed mid-run, such a run is closed by `verify --repair`, with its captures and no saves.
    @Test func repairClosesAKilledRun() throws {
        let dir = try TemporaryDirectory()
        let process = CamrollBinary.process(
            ["-d", "pattern", "-r", "64x48", "--frames", "1000", "--interval", "50ms", "-o", "-", "--db", dir.file("c.sqlite3")])
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, (try? CatalogReader(dir.file("c.sqlite3")).int("SELECT count(*) FROM captures")) ?? 0 < 2 {
            usleep(20_000)
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let repair = try CamrollBinary.run(["verify", "--repair", "--db", dir.file("c.sqlite3")])
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        #expect(repair.stdout.contains("1 interrupted run(s) closed, 0 unrecorded file(s)"), "\(repair.stdout)")
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.text("SELECT status FROM runs") != "running")
        #expect(try catalog.int("SELECT count(*) FROM captures") >= 2 && catalog.int("SELECT count(*) FROM saves") == 0)
    }
}
