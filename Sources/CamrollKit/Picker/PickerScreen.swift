/// What a user asks of the picker, from whichever front end they use: keys in a terminal,
/// buttons, keys and menus in a window. `Picker.run` decides what each means in the state it is in.
enum PickerAction: Equatable, Sendable {
    /// Space, the shutter button: take the picture shown (after the timer, if one is set).
    case shutter
    /// Enter: the shutter while live, keep while reviewing.
    case confirm
    /// u, Use Photo.
    case keep
    /// r, Retake.
    case retake
    /// q, Esc, Ctrl-C, the window's close button, Cancel.
    case cancel
    /// t, the timer button: the shutter after a countdown.
    case timer
    /// Ctrl-Z in a terminal.
    case suspend
    /// The terminal went away.
    case hangUp
    /// Up/down in a terminal: the next or previous control.
    case selectControl(Int)
    /// Left/right in a terminal: the selected control a step down or up.
    case stepControl(Int)
    /// A window's slider: control `index` (of `ControlPanel.adjustable`) set to `value`.
    case setControl(index: Int, value: Int64)
    /// A window's camera menu: `PickerSources.cameras[index]`.
    case switchCamera(Int)
    /// A window's size menu: `PickerSources.sizes[index]`.
    case switchSize(Int)
}

/// What the picker shows: the picture, and what it is doing with it.
struct PickerView {
    enum Phase: Equatable {
        case live
        /// The self-timer: whole seconds left.
        case countdown(Int)
        /// The shot held still, to keep or retake.
        case review
    }

    var phase: Phase
    /// `/dev/video0  YUYV 640x480`.
    var source: String
    var frameSequence: Int
    var framesPerSecond: Double
    /// The selected control and its value (a terminal's arrows turn one at a time).
    var control: String?
    /// Something to tell the user (a damaged frame, a control the camera refused).
    var notice: String?
    /// Saves a kept picture gets (`-n`).
    var copies: Int
}

/// A front end of the picker: the terminal (`TerminalPickerScreen`) or a window
/// (`PickerWindow`). It shows what it is given and reports what the user did; it decides nothing.
protocol PickerScreen: AnyObject {
    /// Waits up to `microseconds` for the user; what they asked for, oldest first.
    func actions(waiting microseconds: Int) throws -> [PickerAction]
    /// Shows `frame` as `view` says.
    func show(_ frame: Frame, _ view: PickerView) throws
    /// The sources to choose from changed (another camera opened): its menus, its controls.
    func sourcesChanged(_ sources: PickerSources, controls: ControlPanel?)
}

/// The cameras and sizes a window offers in its menus, and how to open one: a terminal offers
/// none and never asks.
struct PickerSources {
    struct Camera {
        var label: String
        var device: DeviceChoice
    }

    var cameras: [Camera]
    var selectedCamera: Int
    var sizes: [Resolution]
    var selectedSize: Int
}
