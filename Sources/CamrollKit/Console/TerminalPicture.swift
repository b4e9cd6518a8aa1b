import CChafa
import CLinux
import Glibc

/// How pictures are drawn in the terminal (`--preview-mode`): an image protocol, colour symbol
/// blocks, or not at all.
public enum PreviewMode: String, CaseIterable, Sendable {
    case kitty, sixel, iterm2, symbols, none
}

/// The size of a terminal, in cells and (where it reports them) pixels.
public struct TerminalSize: Equatable, Sendable {
    public var columns: Int
    public var rows: Int
    public var widthPixels: Int
    public var heightPixels: Int

    public static func of(_ fd: Int32) -> TerminalSize? {
        var columns: Int32 = 0, rows: Int32 = 0, width: Int32 = 0, height: Int32 = 0
        guard clinux_terminal_size(fd, &columns, &rows, &width, &height) == 0, columns > 0, rows > 0 else { return nil }
        return TerminalSize(columns: Int(columns), rows: Int(rows), widthPixels: Int(width), heightPixels: Int(height))
    }

    /// One cell's size in pixels, when the terminal says.
    var cell: (width: Int, height: Int)? {
        guard widthPixels > 0, heightPixels > 0 else { return nil }
        return (widthPixels / columns, heightPixels / rows)
    }
}

/// Draws RGB pictures as terminal text with libchafa: kitty graphics, sixels or iTerm2 images
/// where the terminal shows them, colour symbols otherwise, the choice made as chafa's own tool
/// makes it from the environment. Knows nothing of cameras: it is given pictures.
public final class TerminalPainter {
    public let mode: PreviewMode
    /// Why the mode is not the one asked for or detected, to tell the user.
    public let note: String?
    private let terminal: OpaquePointer
    private let canvasMode: Int32
    private let pixelMode: Int32
    private var canvas: (key: [Int], pointer: OpaquePointer)?
    private let scaler = PreviewScaler()

    /// - Parameters:
    ///   - requested: `--preview-mode`, or nil to use what the terminal supports.
    ///   - color: false (`--color never`, `NO_COLOR`, not a terminal) draws symbols in the
    ///     terminal's own two colours unless an image protocol was asked for by name.
    ///   - drawsSixels: whether the terminal answers that it draws sixels (asked of it only
    ///     when sixels are chosen); nil asks the terminal on stdin/stderr.
    public init(requested: PreviewMode?, environment: [String: String], color: Bool,
                drawsSixels: (() -> Bool)? = nil) throws {
        var why = [CChar](repeating: 0, count: 256)
        guard cchafa_load(&why, why.count) == 1 else {
            throw CamrollError(
                .unavailable, "cannot draw pictures in the terminal: \(String(nulTerminated: why))",
                hint: "Install libchafa (Debian: apt install libchafa0), or use --preview-mode none.")
        }
        var detectedCanvas: Int32 = 0, detectedPixels: Int32 = 0
        let strings = TerminalQuery.colorEnvironment(environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { strings.forEach { free($0) } }
        var envp = strings
        terminal = cchafa_detect(&envp, &detectedCanvas, &detectedPixels)
        let detected: PreviewMode = switch detectedPixels {
        case Int32(CHAFA_PIXEL_MODE_KITTY): .kitty
        case Int32(CHAFA_PIXEL_MODE_SIXELS): .sixel
        default: .symbols
        }
        let chosen = requested ?? (color ? detected : .symbols)
        // Sixels drawn where they are not understood show nothing at all (tmux built without
        // them): drawn only where the terminal answers that it draws them.
        if chosen == .sixel && !(drawsSixels ?? { TerminalQuery.drawsSixels() })() {
            mode = .symbols
            note = "the terminal does not say it draws sixels (no 4 in its answer to ESC [ c): drawing colour blocks instead"
        } else {
            mode = chosen
            note = nil
        }
        pixelMode = switch mode {
        case .kitty: Int32(CHAFA_PIXEL_MODE_KITTY)
        case .sixel: Int32(CHAFA_PIXEL_MODE_SIXELS)
        case .iterm2: Int32(CHAFA_PIXEL_MODE_ITERM2)
        case .symbols, .none: Int32(CHAFA_PIXEL_MODE_SYMBOLS)
        }
        canvasMode = color ? detectedCanvas : Int32(CHAFA_CANVAS_MODE_FGBG)
    }

    deinit {
        if let canvas { cchafa_canvas_release(canvas.pointer) }
        cchafa_terminal_release(terminal)
    }

    /// `frame` as large as fits in `columns` x `rows` cells, aspect kept; scaled first only as
    /// far as the drawing can show.
    public func draw(_ frame: Frame, fitting columns: Int, rows: Int, cell: (width: Int, height: Int)?) throws -> [UInt8] {
        let cells = fit(width: frame.width, height: frame.height, columns: columns, rows: rows, cell: cell)
        let wanted = pixelsWanted(columns: cells.columns, rows: cells.rows, cell: cell)
        let picture = try scaler.picture(of: frame, width: wanted.width, height: wanted.height)
        return draw(picture, columns: cells.columns, rows: cells.rows, cell: cell)
    }

    /// The cells a `width` x `height` picture takes, aspect kept, inside `columns` x `rows`.
    func fit(width: Int, height: Int, columns: Int, rows: Int, cell: (width: Int, height: Int)?) -> (columns: Int, rows: Int) {
        var fittedColumns = Int32(max(1, columns)), fittedRows = Int32(max(1, rows))
        let ratio = cell.map { Float($0.width) / Float(max(1, $0.height)) } ?? 0.5
        cchafa_fit(Int32(width), Int32(height), &fittedColumns, &fittedRows, ratio)
        return (Int(max(1, fittedColumns)), Int(max(1, fittedRows)))
    }

    /// The picture size worth handing over for a canvas of that many cells: for symbols, 2x4
    /// pixels a cell (the detail a block symbol's shape can show; chafa spreads them over its
    /// 8x8 cell itself), 1x2 for a live frame in half blocks; for the image protocols, the
    /// picture's pixels (`imageCell`).
    func pixelsWanted(columns: Int, rows: Int, cell: (width: Int, height: Int)?) -> (width: Int, height: Int) {
        switch mode {
        case .symbols, .none: return drawsHalves ? (columns, rows * 2) : (columns * 2, rows * 4)
        default:
            let size = imageCell(columns: columns, cell: cell)
            return (columns * size.width, rows * size.height)
        }
    }

    /// The pixels one cell stands for in an image (kitty, sixel, iTerm2): the terminal's (10x20
    /// if it does not say) for a still picture; for a live one in kitty or iTerm2, fewer, so that
    /// the picture is at most `livePictureWidth` wide. Those terminals scale an image to the
    /// cells it is placed in, so a live view keeps its size and aspect and costs a fraction of
    /// the bytes: 160 columns of 10x20 cells are 2.6 MB of base64 a frame at full size, ~0.33 MB
    /// at 2x4. Sixels are shown at their own pixel size, so they keep the terminal's.
    func imageCell(columns: Int, cell: (width: Int, height: Int)?) -> (width: Int, height: Int) {
        let size = cell ?? (10, 20)
        guard live, mode == .kitty || mode == .iterm2, columns * size.width > Self.livePictureWidth else { return size }
        let scale = Double(Self.livePictureWidth) / Double(columns * size.width)
        return (max(1, Int(Double(size.width) * scale)), max(1, Int(Double(size.height) * scale)))
    }

    static let livePictureWidth = 320

    /// A live frame on a colour symbol canvas is drawn in half blocks (cchafa_draw_halves):
    /// chafa's own symbol matching costs tens of milliseconds a frame at 160x48 cells.
    var drawsHalves: Bool {
        live && (mode == .symbols || mode == .none)
            && canvasMode != Int32(CHAFA_CANVAS_MODE_FGBG) && canvasMode != Int32(CHAFA_CANVAS_MODE_FGBG_BGFG)
    }

    /// The text that draws `image` in `columns` x `rows` cells from the cursor on.
    public func draw(_ image: RGBImage, columns: Int, rows: Int, cell: (width: Int, height: Int)?) -> [UInt8] {
        let pixelCell: (width: Int, height: Int)? = switch mode {
        case .symbols, .none: cell
        default: imageCell(columns: columns, cell: cell)
        }
        let key = [columns, rows, pixelCell?.width ?? 0, pixelCell?.height ?? 0, live ? 1 : 0]
        if canvas?.key != key {
            if let canvas { cchafa_canvas_release(canvas.pointer) }
            let pointer = cchafa_canvas_new(
                Int32(columns), Int32(rows), canvasMode, pixelMode, Int32(pixelCell?.width ?? 0),
                Int32(pixelCell?.height ?? 0), live ? 0 : 0.5, live ? 1 : 0)
            canvas = (key, pointer!)
        }
        var length = 0
        let text = image.pixels.withUnsafeBufferPointer { pixels in
            if drawsHalves, image.width >= columns, image.height >= rows * 2 {
                cchafa_draw_halves(canvas!.pointer, terminal, pixels.baseAddress, Int32(image.width), Int32(image.height),
                                   Int32(image.width * 3), Int32(columns), Int32(rows), &length)
            } else {
                cchafa_draw(canvas!.pointer, terminal, pixels.baseAddress, Int32(image.width), Int32(image.height),
                            Int32(image.width * 3), &length)
            }
        }
        guard let text else { return [] }
        defer { free(text) }
        return Array(UnsafeRawBufferPointer(start: text, count: length))
    }

    /// Drawing many times a second (a live preview): chafa's least work per cell and fewer
    /// symbols to choose from; a still picture gets its default care.
    public var live = false
}
