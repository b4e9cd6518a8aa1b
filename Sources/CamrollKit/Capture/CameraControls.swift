import CV4L2
import Glibc

/// The camera's controls (brightness, exposure, …): listed by `camroll controls`, set with
/// `--set NAME=VALUE`. Names are v4l2-ctl's: lower case, words joined by '_'.
public struct CameraControls {
    public struct Control: Sendable {
        public var id: UInt32
        public var name: String
        public var label: String
        public var type: UInt32
        public var minimum: Int64
        public var maximum: Int64
        public var step: UInt64
        public var defaultValue: Int64
        public var flags: UInt32
        public var menu: [(index: Int64, name: String)]

        public var kind: String {
            switch type {
            case V4L2_CTRL_TYPE_INTEGER.rawValue: "int"
            case V4L2_CTRL_TYPE_BOOLEAN.rawValue: "bool"
            case V4L2_CTRL_TYPE_MENU.rawValue: "menu"
            case V4L2_CTRL_TYPE_INTEGER_MENU.rawValue: "intmenu"
            case V4L2_CTRL_TYPE_BUTTON.rawValue: "button"
            case V4L2_CTRL_TYPE_INTEGER64.rawValue: "int64"
            case V4L2_CTRL_TYPE_STRING.rawValue: "string"
            case V4L2_CTRL_TYPE_BITMASK.rawValue: "bitmask"
            default: "other"
            }
        }

        var isSettable: Bool {
            flags & (CV4L2_CTRL_FLAG_READ_ONLY | CV4L2_CTRL_FLAG_DISABLED) == 0
                && ["int", "bool", "menu", "intmenu", "button"].contains(kind)
        }
    }

    let device: V4L2Device

    public init(device: V4L2Device) { self.device = device }

    /// Every control but the class headings.
    public func list() -> [Control] {
        var controls: [Control] = []
        var query = v4l2_query_ext_ctrl()
        query.id = CV4L2_CTRL_FLAG_NEXT_CTRL
        while (try? device.ioctl(CV4L2_VIDIOC_QUERY_EXT_CTRL, "VIDIOC_QUERY_EXT_CTRL", &query)) != nil {
            let label = V4L2Device.string(query.name)
            if query.type != V4L2_CTRL_TYPE_CTRL_CLASS.rawValue && query.flags & CV4L2_CTRL_FLAG_DISABLED == 0 {
                var control = Control(
                    id: query.id, name: Self.shortName(label), label: label, type: query.type, minimum: query.minimum,
                    maximum: query.maximum, step: query.step, defaultValue: query.default_value, flags: query.flags,
                    menu: [])
                if control.kind == "menu" || control.kind == "intmenu" { control.menu = menu(of: control) }
                controls.append(control)
            }
            query.id |= CV4L2_CTRL_FLAG_NEXT_CTRL
        }
        return controls
    }

    public func value(of control: Control) -> Int64? {
        var value = v4l2_control(id: control.id, value: 0)
        guard (try? device.ioctl(CV4L2_VIDIOC_G_CTRL, "VIDIOC_G_CTRL", &value)) != nil else { return nil }
        return Int64(value.value)
    }

    private func menu(of control: Control) -> [(Int64, String)] {
        var entries: [(Int64, String)] = []
        guard control.minimum <= control.maximum, control.maximum - control.minimum < 1024 else { return [] }
        for index in control.minimum...control.maximum {
            var item = v4l2_querymenu()
            item.id = control.id
            item.index = UInt32(index)
            guard (try? device.ioctl(CV4L2_VIDIOC_QUERYMENU, "VIDIOC_QUERYMENU", &item)) != nil else { continue }
            let name = control.kind == "menu" ? V4L2Device.string(item.name) : String(item.value)
            entries.append((index, name))
        }
        return entries
    }

    /// "Brightness" → "brightness", "White Balance, Automatic" → "white_balance_automatic".
    static func shortName(_ label: String) -> String {
        var out = ""
        for character in label.lowercased() {
            if character.isLetter || character.isNumber {
                out.append(character)
            } else if !out.isEmpty && out.last != "_" {
                out.append("_")
            }
        }
        while out.hasSuffix("_") { out.removeLast() }
        return out
    }

    /// Validates every `NAME=VALUE` against the control's type, range and menu, then sets them.
    public func apply(_ assignments: [(name: String, value: String)]) throws {
        guard !assignments.isEmpty else { return }
        let controls = list()
        for (name, text) in assignments {
            guard let control = controls.first(where: { $0.name == name }) else {
                throw CamrollError(.usage, "\(device.path) has no control '\(name)'",
                                   hint: "List its controls with 'camroll controls -d \(device.path)'.")
            }
            guard control.isSettable else {
                throw CamrollError(.usage, "control '\(name)' of \(device.path) cannot be set (\(control.kind), "
                                   + (control.flags & CV4L2_CTRL_FLAG_READ_ONLY != 0 ? "read-only)" : "unsupported type)"))
            }
            try set(control, to: try Self.parse(text, for: control), as: text)
        }
    }

    /// Sets one control (its value already checked against its range). `text` is the value as
    /// the user gave it, for the message.
    public func set(_ control: Control, to value: Int64, as text: String? = nil) throws {
        var setting = v4l2_control(id: control.id, value: Int32(truncatingIfNeeded: value))
        do {
            try device.ioctl(CV4L2_VIDIOC_S_CTRL, "VIDIOC_S_CTRL", &setting)
        } catch let error as V4L2Device.IoctlError {
            throw CamrollError(error.errno == EBUSY ? .unavailable : .failure,
                               "cannot set \(control.name)=\(text ?? String(value)) on \(device.path): \(String(cString: strerror(error.errno)))")
        }
    }

    /// The value one step up (`direction` 1) or down (-1) from `value`: a twentieth of an
    /// integer control's range (on its step grid; at least one step), the next menu entry,
    /// the other state of a switch. Always inside the control's range.
    public static func stepped(_ control: Control, from value: Int64, direction: Int) -> Int64 {
        switch control.kind {
        case "bool":
            return value == 0 ? 1 : 0
        case "menu", "intmenu":
            let indices = control.menu.map(\.index)
            guard let at = indices.firstIndex(of: value) else { return indices.first ?? value }
            return indices[max(0, min(indices.count - 1, at + direction))]
        default:
            let step = Int64(max(1, min(control.step, UInt64(Int64.max))))
            // Saturating arithmetic: a 64-bit control may span the whole of Int64.
            let (range, wide) = control.maximum.subtractingReportingOverflow(control.minimum)
            let increment = max(step, ((wide ? Int64.max : range) / 20) / step * step)
            let (moved, past) = value.addingReportingOverflow(direction < 0 ? -increment : increment)
            guard !past else { return direction < 0 ? control.minimum : control.maximum }
            let clamped = max(control.minimum, min(control.maximum, moved))
            // Back onto the step grid (counted from the minimum).
            let (offset, far) = clamped.subtractingReportingOverflow(control.minimum)
            return far ? clamped : control.minimum + offset / step * step
        }
    }

    /// `value` made one the control takes: inside its range, on its step grid, a menu's nearest
    /// entry, a switch's 0 or 1 (a window's slider can stand anywhere).
    public static func clamped(_ control: Control, _ value: Int64) -> Int64 {
        switch control.kind {
        case "bool":
            return value == 0 ? 0 : 1
        case "menu", "intmenu":
            return control.menu.map(\.index).min { ($0 - value).magnitude < ($1 - value).magnitude } ?? value
        default:
            let step = Int64(max(1, min(control.step, UInt64(Int64.max))))
            let inside = max(control.minimum, min(control.maximum, value))
            let (offset, far) = inside.subtractingReportingOverflow(control.minimum)
            guard !far else { return inside }
            let down = control.minimum + offset / step * step, remainder = offset % step
            let (up, past) = down.addingReportingOverflow(step)
            return remainder >= step - remainder && !past && up <= control.maximum ? up : down
        }
    }

    /// Controls a user turns while looking: numbers, switches, menus; not buttons or read-only ones.
    public func adjustable() -> [Control] {
        list().filter { $0.isSettable && $0.kind != "button" && $0.maximum > $0.minimum }
    }

    /// `--set`'s VALUE for `control`, checked against its kind, range and step.
    static func parse(_ text: String, for control: Control) throws -> Int64 {
        let lowered = text.lowercased()
        switch control.kind {
        case "bool":
            if ["1", "true", "on", "yes"].contains(lowered) { return 1 }
            if ["0", "false", "off", "no"].contains(lowered) { return 0 }
            throw CamrollError.usage("invalid value '\(text)' for control '\(control.name)': expected 0 or 1")
        case "menu", "intmenu":
            if let entry = control.menu.first(where: { Self.shortName($0.name) == Self.shortName(text) || String($0.index) == text }) {
                return entry.index
            }
            let choices = control.menu.map { "\($0.index) (\($0.name))" }.joined(separator: ", ")
            throw CamrollError.usage("invalid value '\(text)' for control '\(control.name)'", hint: "Choices: \(choices).")
        case "button":
            return 1
        default:
            let parsed = Int64(text)
            guard parsed != nil || ValueParser.isWholeNumber(text) else {
                throw CamrollError.usage("invalid value '\(text)' for control '\(control.name)': expected a whole number")
            }
            // The distance from the minimum as unsigned: a 64-bit control's whole range does not
            // fit in an Int64.
            guard let value = parsed, value >= control.minimum, value <= control.maximum,
                  control.step <= 1 || UInt64(bitPattern: value &- control.minimum) % control.step == 0
            else {
                throw CamrollError.usage(
                    "invalid value '\(text)' for control '\(control.name)': range \(control.minimum)…\(control.maximum)"
                        + (control.step > 1 ? ", step \(control.step)" : ""))
            }
            return value
        }
    }
}
