import CRsvg
import Glibc

/// `stats --plot FILE.svg`: one run as three charts in one SVG — save latency over time (the
/// median, p99 and slowest save of each slice of time, on a log scale), throughput over time,
/// and the latency histogram. SVG is text: no drawing library is needed, and any browser shows
/// it. `FILE.png` is the same SVG drawn by librsvg, loaded only then.
enum RunPlot {
    static let width = 960.0
    static let panelHeight = 220.0
    static let left = 80.0, right = 20.0, top = 64.0, gap = 70.0
    static let height = top + 3 * panelHeight + 2 * gap + 40
    /// A PNG has twice the SVG's pixels each way: sharp on a high-density screen, and still
    /// readable when zoomed on any other.
    static let pngScale = 2.0

    /// What `--plot` writes, by the name's extension.
    enum FileKind {
        case svg, png

        init?(path: String) {
            let name = path.lowercased()
            if name.hasSuffix(".svg") {
                self = .svg
            } else if name.hasSuffix(".png") {
                self = .png
            } else {
                return nil
            }
        }
    }

    /// The file's bytes: the SVG, or the PNG librsvg draws from it.
    static func file(_ timeline: SaveTimeline, kind: FileKind) throws -> [UInt8] {
        let svg = svg(timeline)
        switch kind {
        case .svg: return Array(svg.utf8)
        case .png: return try png(fromSVG: svg)
        }
    }

    static func png(fromSVG svg: String) throws -> [UInt8] {
        var why = [CChar](repeating: 0, count: 256)
        guard crsvg_load(&why, why.count) == 1 else {
            throw CamrollError(
                .unavailable, "cannot draw a PNG: \(String(nulTerminated: why))",
                hint: "Install librsvg (Debian: apt install librsvg2-2), or write SVG: --plot run.svg.")
        }
        var length = 0
        let drawn = svg.utf8CString.withUnsafeBufferPointer { text in
            crsvg_render_png(text.baseAddress, text.count - 1, Int32(width), Int32(height), pngScale, &length, &why, why.count)
        }
        guard let drawn else { throw CamrollError(.failure, "cannot draw a PNG: \(String(nulTerminated: why))") }
        defer { free(drawn) }
        return Array(UnsafeBufferPointer(start: drawn, count: length))
    }

    static func svg(_ timeline: SaveTimeline) -> String {
        // The run's figures as its summary and `stats` give them: bytes over the saving time.
        let figures = timeline.figures
        let title = "camroll run \(timeline.runID): \(timeline.saves.count) save\(timeline.saves.count == 1 ? "" : "s"), "
            + "\(Units.bytes(figures.bytes)) in \(Units.duration(microseconds: figures.savingMicroseconds)) saving, "
            + "\(Format.fixed(figures.megabytesPerSecond, 1)) MB/s"
        let plotWidth = width - left - right
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(left)" y="22" font-size="15" font-weight="bold">\(escaped(title))</text>

            """
        let seconds = timeline.drawnSeconds
        let timeTicks = ticks(upTo: seconds)
        func timeLabel(_ value: Double) -> String { value == 0 ? "0" : Units.duration(microseconds: Int(value * 1e6)) }

        // 1: latency over time, log scale.
        let slices = 240
        var groups = [[Int]](repeating: [], count: slices)
        for save in timeline.saves {
            groups[min(slices - 1, Int(save.start / seconds * Double(slices)))].append(save.durationMicroseconds)
        }
        let longest = max(2, timeline.saves.map(\.durationMicroseconds).max() ?? 2)
        let shortest = max(1, timeline.saves.map(\.durationMicroseconds).min() ?? 1)
        let lowDecade = Double(Int(log10(Double(shortest)).rounded(.down)))
        let highDecade = max(lowDecade + 1, Double(Int(log10(Double(longest)).rounded(.up))))
        var y0 = top
        svg += panel(y: y0, title: "save latency over time (per slice: median, p99, slowest)", xTicks: timeTicks,
                     xMax: seconds, xLabel: timeLabel,
                     yTicks: stride(from: lowDecade, through: highDecade, by: 1).map { ($0 - lowDecade) / (highDecade - lowDecade) },
                     yLabel: { Units.duration(microseconds: Int(pow(10, lowDecade + $0 * (highDecade - lowDecade)).rounded())) })
        func latencyY(_ microseconds: Int) -> Double {
            let fraction = (log10(Double(max(1, microseconds))) - lowDecade) / (highDecade - lowDecade)
            return y0 + panelHeight * (1 - min(1, max(0, fraction)))
        }
        // The median and p99 as lines, the slowest save of each slice as a dot over them.
        for (percentile, colour) in [(0.99, "#ff7f0e"), (0.5, "#1f77b4"), (1.0, "#d62728")] {
            var points: [(x: Double, y: Double)] = []
            for (index, group) in groups.enumerated() where !group.isEmpty {
                let sorted = group.sorted()
                let value = sorted[min(sorted.count - 1, Int((percentile * Double(sorted.count)).rounded(.up)) - 1)]
                points.append((left + plotWidth * (Double(index) + 0.5) / Double(slices), latencyY(value)))
            }
            if percentile == 1 {
                svg += points.map { "<circle cx=\"\(format($0.x))\" cy=\"\(format($0.y))\" r=\"1.6\" fill=\"\(colour)\"/>" }
                    .joined(separator: "\n") + "\n"
            } else {
                svg += "<polyline fill=\"none\" stroke=\"\(colour)\" stroke-width=\"1.2\" points=\""
                    + points.map { "\(format($0.x)),\(format($0.y))" }.joined(separator: " ") + "\"/>\n"
            }
        }
        svg += legend(x: width - right - 250, y: y0 + 14, [("median", "#1f77b4"), ("p99", "#ff7f0e"), ("slowest", "#d62728")])

        // 2: throughput over time.
        y0 += panelHeight + gap
        let rates = timeline.throughput(slices: 200)
        let topRate = niceCeiling(rates.max() ?? 1)
        svg += panel(y: y0, title: "throughput over time (MB/s)", xTicks: timeTicks, xMax: seconds, xLabel: timeLabel,
                     yTicks: [0, 0.25, 0.5, 0.75, 1], yLabel: { Format.fixed($0 * topRate, 1) })
        var area = ["\(format(left)),\(format(y0 + panelHeight))"]
        for (index, rate) in rates.enumerated() {
            let x0 = left + plotWidth * Double(index) / Double(rates.count)
            let x1 = left + plotWidth * Double(index + 1) / Double(rates.count)
            let y = y0 + panelHeight * (1 - rate / topRate)
            area += ["\(format(x0)),\(format(y))", "\(format(x1)),\(format(y))"]
        }
        area.append("\(format(left + plotWidth)),\(format(y0 + panelHeight))")
        svg += "<polygon fill=\"#2ca02c\" fill-opacity=\"0.35\" stroke=\"#2ca02c\" points=\"\(area.joined(separator: " "))\"/>\n"

        // 3: latency histogram, power-of-two buckets, the count on a log scale (log(1 + n), as
        // `stats` draws its bars): the tail's few saves stand beside the thousands.
        y0 += panelHeight + gap
        let buckets = LatencyBuckets(timeline.saves.map(\.durationMicroseconds).sorted()).buckets
        let most = max(1, buckets.map(\.count).max() ?? 1)
        // 0, then each power of ten up to the largest count, then the largest count itself.
        var countTicks = [0] + sequence(first: 1, next: { $0 <= most / 10 ? $0 * 10 : nil })
        if countTicks.last != most && LatencyBuckets.scaled(countTicks.last ?? 0, of: most) < 0.9 { countTicks.append(most) }
        let tickLabels = Dictionary(countTicks.map { (LatencyBuckets.scaled($0, of: most), String($0)) }) { first, _ in first }
        svg += panel(y: y0, title: "save latency histogram (saves per bucket, log scale)", xTicks: [], xMax: 1, xLabel: { _ in "" },
                     yTicks: countTicks.map { LatencyBuckets.scaled($0, of: most) }, yLabel: { tickLabels[$0] ?? "" })
        let barWidth = plotWidth / Double(max(1, buckets.count))
        for (index, bucket) in buckets.enumerated() {
            let barHeight = panelHeight * LatencyBuckets.scaled(bucket.count, of: most)
            let x = left + barWidth * Double(index)
            svg += "<rect x=\"\(format(x + 1))\" y=\"\(format(y0 + panelHeight - barHeight))\" width=\"\(format(max(1, barWidth - 2)))\" "
                + "height=\"\(format(barHeight))\" fill=\"#9467bd\"/>\n"
            svg += "<text x=\"\(format(x + barWidth / 2))\" y=\"\(format(y0 + panelHeight + 16))\" text-anchor=\"middle\" font-size=\"10\">"
                + "≤\(escaped(Units.duration(microseconds: bucket.upper)))</text>\n"
        }
        return svg + "</svg>\n"
    }

    /// A panel's frame, title, grid and tick labels; `yTicks` are fractions of its height.
    private static func panel(
        y: Double, title: String, xTicks: [Double], xMax: Double, xLabel: (Double) -> String, yTicks: [Double],
        yLabel: (Double) -> String
    ) -> String {
        let plotWidth = width - left - right
        var text = "<text x=\"\(left)\" y=\"\(format(y - 10))\" font-weight=\"bold\">\(escaped(title))</text>\n"
        text += "<rect x=\"\(left)\" y=\"\(format(y))\" width=\"\(format(plotWidth))\" height=\"\(panelHeight)\" fill=\"none\" stroke=\"#444\"/>\n"
        for fraction in yTicks {
            let lineY = y + panelHeight * (1 - fraction)
            text += "<line x1=\"\(left)\" x2=\"\(format(left + plotWidth))\" y1=\"\(format(lineY))\" y2=\"\(format(lineY))\" stroke=\"#ddd\"/>\n"
            text += "<text x=\"\(format(left - 6))\" y=\"\(format(lineY + 4))\" text-anchor=\"end\">\(escaped(yLabel(fraction)))</text>\n"
        }
        for tick in xTicks {
            let x = left + plotWidth * tick / xMax
            text += "<line x1=\"\(format(x))\" x2=\"\(format(x))\" y1=\"\(format(y))\" y2=\"\(format(y + panelHeight))\" stroke=\"#eee\"/>\n"
            // The last label ends at the frame's right edge rather than running past the picture's.
            let anchor = x > left + plotWidth - 30 ? "end" : "middle"
            text += "<text x=\"\(format(x))\" y=\"\(format(y + panelHeight + 16))\" text-anchor=\"\(anchor)\">\(escaped(xLabel(tick)))</text>\n"
        }
        return text
    }

    private static func legend(x: Double, y: Double, _ entries: [(String, String)]) -> String {
        entries.enumerated().map { index, entry in
            let at = x + Double(index) * 85
            return "<line x1=\"\(format(at))\" x2=\"\(format(at + 18))\" y1=\"\(format(y - 4))\" y2=\"\(format(y - 4))\" stroke=\"\(entry.1)\" stroke-width=\"2\"/>"
                + "<text x=\"\(format(at + 22))\" y=\"\(format(y))\">\(entry.0)</text>\n"
        }.joined()
    }

    /// About five round values from 0 to `maximum`.
    static func ticks(upTo maximum: Double) -> [Double] {
        let rough = max(maximum / 5, 1e-9)
        let power = pow(10, log10(rough).rounded(.down))
        let step = [1.0, 2, 5, 10].map { $0 * power }.first { $0 >= rough } ?? 10 * power
        return stride(from: 0.0, through: maximum, by: step).map { $0 }
    }

    /// The smallest round number (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten)
    /// at least `value`.
    static func niceCeiling(_ value: Double) -> Double {
        guard value > 0 else { return 1 }
        let power = pow(10, (log10(value)).rounded(.down))
        return [1.0, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10].map { $0 * power }.first { $0 >= value * 0.999_999 } ?? 10 * power
    }

    private static func format(_ value: Double) -> String { Format.fixed(value, 1) }

    private static func escaped(_ text: String) -> String {
        text.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing(">", with: "&gt;")
    }
}
