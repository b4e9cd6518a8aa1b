import CTurboJPEG

/// `--rotate`, `--flip` and `--greyscale`: what is done to the picture after it is upright and
/// cropped (and, for a file, scaled into `-r`'s box), just before its EXIF is written.
public struct ImageTurn: Sendable, Equatable {
    public enum Flip: String, Sendable, Equatable { case horizontal = "h", vertical = "v" }

    /// Clockwise degrees: 0, 90, 180 or 270.
    public var rotation = 0
    /// Applied after the rotation: mirrored left-right (`h`) or top-bottom (`v`).
    public var flip: Flip?
    /// One component: luma only.
    public var greyscale = false

    public init(rotation: Int = 0, flip: Flip? = nil, greyscale: Bool = false) {
        self.rotation = rotation
        self.flip = flip
        self.greyscale = greyscale
    }

    public var isNone: Bool { rotation == 0 && flip == nil && !greyscale }
    /// Moves pixels (a rotation or a flip), as opposed to only dropping colour.
    var movesPixels: Bool { rotation != 0 || flip != nil }
    var swapsSides: Bool { rotation == 90 || rotation == 270 }

    /// The steps as tjTransform's operations, in order.
    var operations: [TJXOP] {
        var steps: [TJXOP] = []
        switch rotation {
        case 90: steps.append(TJXOP_ROT90)
        case 180: steps.append(TJXOP_ROT180)
        case 270: steps.append(TJXOP_ROT270)
        default: break
        }
        switch flip {
        case .horizontal: steps.append(TJXOP_HFLIP)
        case .vertical: steps.append(TJXOP_VFLIP)
        case nil: break
        }
        return steps
    }

    /// The same steps as EXIF orientations applied to decoded pixels (`RGBImage.upright`): the
    /// picture stored with Orientation 6 is shown turned 90° clockwise, and so on.
    var orientations: [Int] {
        var steps: [Int] = []
        switch rotation {
        case 90: steps.append(6)
        case 180: steps.append(3)
        case 270: steps.append(8)
        default: break
        }
        switch flip {
        case .horizontal: steps.append(2)
        case .vertical: steps.append(4)
        case nil: break
        }
        return steps
    }

    /// The turned JPEG: on its DCT blocks (tjTransform, no quality lost) when the picture's
    /// edges fall on whole MCUs where the steps need it (`TJXOPT_PERFECT`); otherwise nil, and
    /// the caller decodes. Greyscale alone is always lossless (the chroma is dropped).
    static func lossless(_ jpeg: [UInt8], _ turn: ImageTurn) throws -> [UInt8]? {
        var bytes = jpeg
        var steps = turn.operations
        if steps.isEmpty { steps = [TJXOP_NONE] }
        for (index, step) in steps.enumerated() {
            let grey = turn.greyscale && index == steps.count - 1
            guard let turned = try transform(bytes, op: step, options: TJXOPT_PERFECT | (grey ? TJXOPT_GRAY : 0)) else {
                return nil
            }
            bytes = turned
        }
        return bytes
    }

    /// A JPEG made one component, losslessly.
    static func greyscale(_ jpeg: [UInt8]) throws -> [UInt8] {
        guard let grey = try transform(jpeg, op: TJXOP_NONE, options: TJXOPT_GRAY) else {
            throw CamrollError(.failure, "cannot make the JPEG greyscale")
        }
        return grey
    }

    /// One tjTransform; nil when it is refused as not perfect.
    private static func transform(_ jpeg: [UInt8], op: TJXOP, options: Int32) throws -> [UInt8]? {
        var transform = tjtransform()
        transform.op = Int32(op.rawValue)
        transform.options = options
        return try LosslessCrop.apply(jpeg, transform) { why in
            options & TJXOPT_PERFECT != 0 ? nil : CamrollError(.dataError, "cannot transform the JPEG: \(why)")
        }
    }
}
