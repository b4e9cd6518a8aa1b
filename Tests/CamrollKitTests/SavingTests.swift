@testable import CamrollKit
import Foundation
import Synchronization
import Testing

@Suite struct SavingTests {
    func render(_ template: String, seq: Int = 7, total: Int = 1000, frame: Int = 1) throws -> String {
        let time = Date(timeIntervalSince1970: 1_764_693_005.123)  // fixed instant
        return try OutputTemplate(template).render(
            .init(seq: seq, seqWidth: String(total).count, run: 42, frame: frame, frameWidth: 1, time: time))
    }

    /// `.NAME.camroll-PID-RANDOM.tmp`: hidden, named after the file and the process, 12 random
    /// hex digits, what `verify --repair` looks for; a long name cut to fit NAME_MAX.
    @Test func temporaryNamesAreHiddenUnpredictableAndFoundByRepair() throws {
        let pattern = try Regex(AtomicFileWriter.temporaryNamePattern(pid: getpid()))
        let names = (0..<3).map { _ in AtomicFileWriter.temporaryName(for: "shot_0001.jpg") }
        for name in names {
            #expect(name.hasPrefix(".shot_0001.jpg.camroll-\(getpid())-") && name.hasSuffix(".tmp"), "\(name)")
            let random = name.dropLast(4).suffix(13)
            #expect(random.first == "-" && random.dropFirst().allSatisfy { "0123456789abcdef".contains($0) }, "\(name)")
            #expect(name.wholeMatch(of: pattern) != nil, "\(name)")
        }
        #expect(Set(names).count == 3)
        let long = AtomicFileWriter.temporaryName(for: Substring(String(repeating: "é", count: 127)))
        #expect(long.utf8.count <= 255 && long.wholeMatch(of: pattern) != nil, "\(long)")
    }

    /// After a short writev, the next one starts at the first byte not written: inside a
    /// piece, on a piece's edge, or past several pieces.
    @Test func aShortWriteResumesAtTheFirstUnwrittenByte() {
        let bytes = [UInt8](repeating: 0, count: 100)
        bytes.withUnsafeBytes { buffer in
            let base = UnsafeMutableRawPointer(mutating: buffer.baseAddress!)
            func pieces() -> ArraySlice<iovec> {
                [iovec(iov_base: base, iov_len: 2), iovec(iov_base: base + 2, iov_len: 60),
                 iovec(iov_base: base + 62, iov_len: 38)][...]
            }
            func left(after counts: [Int]) -> [(offset: Int, count: Int)] {
                var vectors = pieces()
                for count in counts { AtomicFileWriter.skip(count, of: &vectors) }
                return vectors.map { (base.distance(to: $0.iov_base!), $0.iov_len) }
            }
            #expect(left(after: [1]).map(\.offset) == [1, 2, 62] && left(after: [1]).map(\.count) == [1, 60, 38])
            #expect(left(after: [2]).map(\.offset) == [2, 62])
            #expect(left(after: [30]).map(\.offset) == [30, 62] && left(after: [30]).map(\.count) == [32, 38])
            #expect(left(after: [62]).map(\.offset) == [62])
            #expect(left(after: [70, 20]).map(\.offset) == [90] && left(after: [70, 20]).map(\.count) == [10])
            #expect(left(after: [100]).isEmpty)
        }
    }

    @Test func seqIsPaddedToTheWidthOfTheTotal() throws {
        #expect(try render("/d/{seq}.jpg") == "/d/0007.jpg")
        #expect(try render("/d/{seq}.jpg", total: 9) == "/d/7.jpg")
        #expect(try render("/d/{seq:6}.jpg") == "/d/000007.jpg")
        #expect(try render("/d/{seq:1}.jpg", seq: 1234) == "/d/1234.jpg")
    }

    /// `{seq/N}`: a directory for every N saves (FAT holds 65 536 names in one), numbered from 1
    /// and as wide as the last group a run of that many digits can reach.
    @Test func seqGroupsNumberEveryNSaves() throws {
        #expect(try render("/d/{seq/1000}/{seq}.jpg", seq: 1, total: 2500) == "/d/01/0001.jpg")
        #expect(try render("/d/{seq/1000}/{seq}.jpg", seq: 1000, total: 2500) == "/d/01/1000.jpg")
        #expect(try render("/d/{seq/1000}/{seq}.jpg", seq: 1001, total: 2500) == "/d/02/1001.jpg")
        #expect(try render("/d/{seq/10}/{seq}.jpg", seq: 99, total: 99) == "/d/10/99.jpg")
        #expect(try render("/d/{seq/1000}/{seq}.jpg", seq: 7, total: 9) == "/d/1/7.jpg")
        let regex = try NSRegularExpression(pattern: OutputTemplate("/d/{seq/1000}/{seq}.jpg").pathPattern(run: 1))
        let path = "/d/02/1001.jpg"
        let match = try #require(regex.firstMatch(in: path, range: NSRange(path.startIndex..., in: path)))
        #expect((path as NSString).substring(with: match.range(at: 1)) == "1001")
        #expect(try !OutputTemplate("/d/{seq/1000}.jpg").namesEachSave)
        // Repair looks for a killed run's files one directory down, not two.
        #expect(try OutputTemplate("/d/{seq/1000}/{seq}.jpg").depthBelowFixedDirectory == 1)
    }

    @Test func otherTokens() throws {
        #expect(try render("/r{run}/f{frame}/{ms}") == "/r42/f1/123")
        let uuid = try render("/{uuid}"), another = try render("/{uuid}")
        #expect(uuid.count == 37 && uuid != another)
        setenv("TZ", "UTC", 1)
        tzset()
        #expect(try render("/{date}_{time}") == "/20251202_163005")
        #expect(try render("/%Y-%m-%d %H:%M:%S 100%%") == "/2025-12-02 16:30:05 100%")
    }

    @Test(arguments: ["", "/d/", "/d/{bogus}", "/d/{seq", "/d/%Q", "/d/{seq:0}", "/d/{seq:x}", "/d/{seq/1}", "/d/{seq/0}", "/d/{seq/-5}", "/d/{seq/x}", "/d/50%"])
    func badTemplatesAreUsageErrors(_ text: String) {
        #expect { try OutputTemplate(text) } throws: { ($0 as? CamrollError)?.exitCode == .usage }
    }

    @Test func aSeqNumberOutOfRangeNamesTheRange() {
        for (text, range) in [("/d/{seq:0}", "width in '{seq:0}' must be from 1 to 18"), ("/d/{seq:19}", "from 1 to 18"),
                              ("/d/{seq/1}", "group size in '{seq/1}' must be from 2 to 1000000000")] {
            #expect { try OutputTemplate(text) } throws: { ($0 as? CamrollError)?.message.hasSuffix(range) == true }
        }
    }

    @Test func templateKnowsWhetherSavesGetDistinctNames() throws {
        #expect(try OutputTemplate("/a/{seq}.jpg").namesEachSave)
        #expect(try OutputTemplate("/a/{uuid}.jpg").namesEachSave)
        #expect(try !OutputTemplate("/a/{date}.jpg").namesEachSave)
    }

    @Test func writerNeverReplacesAnExistingFile() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("a/b/photo.jpg")
        let writer = AtomicFileWriter(overwrite: false, sync: true)
        let first: [UInt8] = [1, 2, 3], second: [UInt8] = [9, 9]
        _ = try first.withUnsafeBytes { try writer.write([$0], to: path) }
        #expect(try fileBytes(path) == first)
        #expect { try second.withUnsafeBytes { try writer.write([$0], to: path) } } throws: {
            ($0 as? CamrollError)?.exitCode == .cannotCreate
        }
        #expect(try fileBytes(path) == first)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.file("a/b")) == ["photo.jpg"])
    }

    /// With `--direct`, the last piece stays in the aligned buffer between writes with the same
    /// `lastPieceID`: what comes before it may change, also in length, and a different ID with
    /// the same size at the same place is copied again, never written stale.
    @Test func directWritesCopyAPhotoOnceAndNeverStale() throws {
        let dir = try TemporaryDirectory()
        let writer = AtomicFileWriter(existing: .refuse, sync: false, direct: true)
        let refused = Mutex<String?>(nil)
        writer.directRefused = { message in refused.withLock { $0 = message } }
        let photo = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let other = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) }
        let writes: [(prefix: [UInt8], body: [UInt8], id: Int?)] = [
            ([1, 2, 3], photo, 1), ([4, 5, 6], photo, 1), ([7, 8], photo, 1), ([9, 9, 9], photo, 1),
            ([9, 9, 9], other, 2), ([1, 2, 3], photo, 1), ([1, 2, 3], other, nil), ([1, 2, 3], photo, nil),
        ]
        for (index, write) in writes.enumerated() {
            let path = dir.file("\(index).jpg")
            try write.prefix.withUnsafeBytes { prefix in
                try write.body.withUnsafeBytes { body in _ = try writer.write([prefix, body], to: path, lastPieceID: write.id) }
            }
            #expect(try fileBytes(path) == write.prefix + write.body, "write \(index)")
        }
        // Else the aligned buffer was never used, and nothing above was tested.
        #expect(refused.withLock { $0 } == nil, "\(refused.withLock { $0 } ?? "")")
    }

    @Test func defaultNamingKeepsTheOldFileAndNumbersTheNewOne() throws {
        let dir = try TemporaryDirectory()
        let writer = AtomicFileWriter(existing: .keepAndNumber, sync: false)
        var saved: [String] = []
        for byte in [UInt8(1), 2, 3] {
            try [byte].withUnsafeBytes { saved.append(try writer.write([$0], to: dir.file("IMG_1.jpg"))) }
        }
        #expect(saved == [dir.file("IMG_1.jpg"), dir.file("IMG_1-2.jpg"), dir.file("IMG_1-3.jpg")])
        #expect(try saved.map { try fileBytes($0) } == [[1], [2], [3]])
        #expect(AtomicFileWriter.numbered("/d/noext", 2) == "/d/noext-2")
        #expect(AtomicFileWriter.numbered("/d.x/name", 4) == "/d.x/name-4")
    }

    @Test func pathPatternsFindNumberedFilesAndTheirSeq() throws {
        let template = try OutputTemplate("/d/{date}/shot_{seq}.jpg")
        let regex = try NSRegularExpression(pattern: template.pathPattern(run: 3))
        for (path, seq) in [("/d/20261202/shot_0007.jpg", "0007"), ("/d/20261202/shot_0007-2.jpg", "0007")] {
            let match = try #require(regex.firstMatch(in: path, range: NSRange(path.startIndex..., in: path)))
            #expect((path as NSString).substring(with: match.range(at: 1)) == seq)
        }
        for path in ["/d/20261202/shot_0007.png", "/d/x/shot_1.jpg", "/d/20261202/other_1.jpg"] {
            #expect(regex.firstMatch(in: path, range: NSRange(path.startIndex..., in: path)) == nil, "\(path)")
        }
        #expect(template.fixedDirectory == "/d" && template.depthBelowFixedDirectory == 1)
    }

    @Test func overwritingWriterReplacesAtomically() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("photo.jpg")
        let writer = AtomicFileWriter(overwrite: true, sync: false)
        let first: [UInt8] = [1, 2, 3], second: [UInt8] = [9, 9]
        _ = try first.withUnsafeBytes { try writer.write([$0], to: path) }
        _ = try second.withUnsafeBytes { try writer.write([$0], to: path) }
        #expect(try fileBytes(path) == second)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["photo.jpg"])
    }

    @Test func piecesAreWrittenInOrder() throws {
        let dir = try TemporaryDirectory()
        let a: [UInt8] = [0xFF, 0xD8], b: [UInt8] = [1, 2], c: [UInt8] = [3, 4, 5]
        try a.withUnsafeBytes { pa in
            try b.withUnsafeBytes { pb in
                try c.withUnsafeBytes { pc in
                    try AtomicFileWriter(overwrite: false, sync: false).write([pa, pb, pc], to: dir.file("x"))
                    #expect(XXH128.hex(ofPieces: [pa, pb, pc]) == XXH128.hex(of: a + b + c))
                }
            }
        }
        #expect(try fileBytes(dir.file("x")) == a + b + c)
    }

    @Test func xxh128MatchesTheReferenceVectors() throws {
        // Values printed by `xxhsum -H2` for an empty file and for "abc".
        #expect(XXH128.hex(of: []) == "99aa06d3014798d86001c324468d497f")
        #expect(XXH128.hex(of: Array("abc".utf8)) == "06b05ab6733a618578af5f94892f3950")
    }

    @Test func latencyPercentilesAreCloseToExact() {
        var histogram = LatencyHistogram()
        for value in 1...10_000 { histogram.record(value) }
        #expect(histogram.count == 10_000)
        #expect(histogram.maximum == 10_000 && histogram.minimum == 1)
        for (fraction, exact) in [(0.5, 5000.0), (0.95, 9500.0), (0.99, 9900.0)] {
            let got = Double(histogram.percentile(fraction))
            #expect(abs(got - exact) / exact < 0.02, "p\(fraction): \(got) vs \(exact)")
        }
        #expect(histogram.percentile(1.0) == 10_000)
    }
}
