/// The camera controls pick's arrow keys turn: one selected at a time, changed through the same
/// code as `--set` (range and step kept), its value read back from the camera.
final class ControlPanel {
    private let controls: CameraControls
    private let adjustable: [CameraControls.Control]
    private var values: [Int64?]
    private var selected = 0

    /// nil when the camera offers nothing to adjust.
    init?(_ controls: CameraControls) {
        self.controls = controls
        adjustable = controls.adjustable()
        guard !adjustable.isEmpty else { return nil }
        values = adjustable.map { controls.value(of: $0) }
        // Brightness first where there is one: what a user reaches for.
        selected = adjustable.firstIndex { $0.name == "brightness" } ?? 0
    }

    func select(by offset: Int) {
        selected = (selected + offset + adjustable.count) % adjustable.count
        values[selected] = controls.value(of: adjustable[selected])
    }

    func adjust(by direction: Int) throws {
        let control = adjustable[selected]
        let current = values[selected] ?? controls.value(of: control) ?? control.defaultValue
        try controls.set(control, to: CameraControls.stepped(control, from: current, direction: direction))
        values[selected] = controls.value(of: control)
    }

    /// A window's slider: control `index` (of the adjustable ones) set to `value`, clamped to its
    /// range and step as `--set` does.
    func set(_ index: Int, to value: Int64) throws {
        guard adjustable.indices.contains(index) else { return }
        let control = adjustable[index]
        let clamped = CameraControls.clamped(control, value)
        try controls.set(control, to: clamped)
        values[index] = controls.value(of: control)
        selected = index
    }

    /// What a window shows of each adjustable control: a slider, or a check box for a boolean.
    var entries: [(label: String, minimum: Int64, maximum: Int64, step: Int64, value: Int64, isBoolean: Bool)] {
        adjustable.indices.map { index in
            let control = adjustable[index]
            return (control.label, control.minimum, control.maximum, Int64(clamping: max(1, control.step)),
                    values[index] ?? control.defaultValue, control.kind == "bool")
        }
    }

    /// `brightness 140 (0–255)`, or a menu entry's name.
    var status: String {
        let control = adjustable[selected]
        guard let value = values[selected] else { return "\(control.name) ?" }
        switch control.kind {
        case "bool": return "\(control.name) \(value == 0 ? "off" : "on")"
        case "menu", "intmenu":
            return "\(control.name) \(control.menu.first { $0.index == value }?.name ?? String(value))"
        default: return "\(control.name) \(value) (\(control.minimum)–\(control.maximum))"
        }
    }
}
