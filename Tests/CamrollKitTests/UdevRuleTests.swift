import Foundation
import Testing

/// udev/70-camroll.rules parsed the way udev reads rule lines: comma-separated KEY op "value"
/// pairs, with keys and operators udev knows. (`udevadm verify` needs systemd 253; Debian 12
/// has 252.)
@Suite struct UdevRuleTests {
    static let rulesPath = repositoryFile("udev/70-camroll.rules")

    struct Pair: Equatable {
        var key: String
        var attribute: String?
        var op: String
        var value: String
    }

    static let matchKeys: Set<String> = ["SUBSYSTEM", "KERNEL", "ATTR", "ATTRS", "ENV", "ACTION", "DRIVERS", "SUBSYSTEMS", "TAG"]
    static let assignKeys: Set<String> = ["GROUP", "MODE", "OWNER", "TAG", "SYMLINK", "ENV", "GOTO", "LABEL", "RUN"]

    /// One rule line → its pairs; throws a description of the first thing udev would reject.
    static func parse(_ line: String) throws -> [Pair] {
        var pairs: [Pair] = []
        var rest = Substring(line)
        while true {
            rest = rest.drop(while: { $0 == " " || $0 == "\t" })
            if rest.isEmpty { break }
            guard let keyEnd = rest.firstIndex(where: { !($0.isUppercase || $0 == "_") }) else { throw RuleError("no operator in '\(rest)'") }
            let key = String(rest[..<keyEnd])
            rest = rest[keyEnd...]
            var attribute: String?
            if rest.first == "{" {
                guard let close = rest.firstIndex(of: "}") else { throw RuleError("unclosed '{' after \(key)") }
                attribute = String(rest[rest.index(after: rest.startIndex)..<close])
                rest = rest[rest.index(after: close)...]
            }
            guard let op = ["==", "!=", "+=", "-=", ":=", "="].first(where: { rest.hasPrefix($0) }) else {
                throw RuleError("bad operator after \(key)")
            }
            rest = rest.dropFirst(op.count)
            guard rest.first == "\"" else { throw RuleError("value of \(key) is not quoted") }
            rest = rest.dropFirst()
            guard let quote = rest.firstIndex(of: "\"") else { throw RuleError("unterminated value of \(key)") }
            let value = String(rest[..<quote])
            rest = rest[rest.index(after: quote)...]
            let isMatch = op == "==" || op == "!="
            guard (isMatch ? matchKeys : assignKeys).contains(key) else { throw RuleError("\(key) cannot be used with \(op)") }
            pairs.append(Pair(key: key, attribute: attribute, op: op, value: value))
            rest = rest.drop(while: { $0 == " " })
            if rest.isEmpty { break }
            guard rest.first == "," else { throw RuleError("missing ',' after \(key)") }
            rest = rest.dropFirst()
        }
        return pairs
    }

    func ruleLines() throws -> [[Pair]] {
        let text = try String(contentsOfFile: Self.rulesPath, encoding: .utf8)
        return try text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }.map { try Self.parse($0) }
    }

    @Test func everyLineParses() throws {
        let rules = try ruleLines()
        #expect(rules.count >= 5)
    }

    @Test func parserRejectsWhatUdevRejects() {
        for bad in ["GROUP=video", "FOO==\"x\"", "GROUP==\"video\" MODE=\"0660\"", "SYMLINK+=\"x", "GROUP~\"x\""] {
            #expect(throws: (any Error).self, "\(bad)") { try Self.parse(bad) }
        }
    }

    @Test func grantsAccessLikeSystemdAndNeverWorldWritable() throws {
        let pairs = try ruleLines().flatMap { $0 }
        #expect(pairs.contains(Pair(key: "GROUP", op: "=", value: "video")))
        #expect(pairs.contains(Pair(key: "TAG", op: "+=", value: "uaccess")))
        let modes = pairs.filter { $0.key == "MODE" }.map(\.value)
        #expect(modes == ["0660"])
    }

    @Test func everyGotoHasItsLabelAndSymlinksGoUnderDevCamroll() throws {
        let pairs = try ruleLines().flatMap { $0 }
        let labels = Set(pairs.filter { $0.key == "LABEL" }.map(\.value))
        for target in pairs.filter({ $0.key == "GOTO" }).map(\.value) { #expect(labels.contains(target)) }
        let links = pairs.filter { $0.key == "SYMLINK" }
        #expect(!links.isEmpty && links.allSatisfy { $0.value.hasPrefix("camroll/") && $0.op == "+=" })
    }
}

struct RuleError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
