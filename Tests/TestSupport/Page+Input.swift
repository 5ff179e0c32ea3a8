import Foundation

/// Real input: the browser dispatches these mouse and key events as a user's, with the hit testing, focus
/// changes, default actions and user activation that a script's `element.click()` skips.
extension Page {
    /// Clicks the centre of the first element `selector` matches, after scrolling it into view. Throws when none
    /// matches, or it is disabled, has no size, or another element covers its centre (a click there would not
    /// reach it).
    public func click(_ selector: String) async throws {
        let point = try await call(#"""
            selector => {
              const element = document.querySelector(selector);
              if (element === null) return { problem: "no element matches it" };
              if (element.disabled) return { problem: "it is disabled" };
              element.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
              const box = element.getBoundingClientRect();
              if (box.width === 0 || box.height === 0) return { problem: "it has no size (hidden?)" };
              const x = box.left + box.width / 2, y = box.top + box.height / 2;
              const hit = document.elementFromPoint(x, y);
              if (hit === null || !element.contains(hit)) {
                return { problem: "its centre is covered by " + (hit === null ? "nothing" : hit.outerHTML.slice(0, 160)) };
              }
              return { x, y };
            }
            """#, .string(selector))
        guard let x = point["x"]?.number, let y = point["y"]?.number else {
            throw PageError(description: "cannot click \(selector): \(point["problem"]?.string ?? "\(point)")")
        }
        for (type, buttons, clickCount) in [("mouseMoved", 0, 0), ("mousePressed", 1, 1), ("mouseReleased", 0, 1)] {
            try await send("Input.dispatchMouseEvent", [
                "type": .string(type), "x": .number(x), "y": .number(y),
                "button": type == "mouseMoved" ? "none" : "left",
                "buttons": .number(Double(buttons)), "clickCount": .number(Double(clickCount)),
            ])
        }
    }

    /// `click`, then waits for the navigation it causes (a link, a form POST answered with a redirect) to load;
    /// throws when none starts, the new document cannot be loaded or answers an HTTP status of 400 or more.
    public func clickAndWaitForNavigation(_ selector: String) async throws {
        let before = events.snapshot.commits.count
        try await click(selector)
        let commit = try await events.wait("a navigation after clicking \(selector)", within: timeout) { record in
            record.commits.count > before ? record.commits[before] : nil
        }
        if let unreachable = commit.unreachableURL {
            throw PageError(description: "clicking \(selector) led to \(unreachable), which did not load")
        }
        try await loaded(commit.loader, commit.url)
    }

    /// Replaces the text of the text field or text area `selector` matches with `text`, typed as a user would
    /// (select all, Backspace, then the text as keyboard input), so the page sees its input events.
    public func fill(_ selector: String, _ text: String) async throws {
        let problem = try await call(#"""
            selector => {
              const element = document.querySelector(selector);
              if (element === null) return "no element matches it";
              if (typeof element.select !== "function") return "it is not a text field or text area";
              element.scrollIntoView({ block: "center", behavior: "instant" });
              element.focus();
              if (document.activeElement !== element) return "it cannot take focus";
              element.select();
              return null;
            }
            """#, .string(selector))
        if let problem = problem.string { throw PageError(description: "cannot fill \(selector): \(problem)") }
        try await press(.backspace)
        if !text.isEmpty { try await send("Input.insertText", ["text": .string(text)]) }
    }

    /// Presses and releases `key` where the focus is (Tab moves it, Enter submits or activates).
    public func press(_ key: Key) async throws {
        var down: [String: JSONValue] = [
            "key": .string(key.key), "code": .string(key.code), "modifiers": .number(Double(key.modifiers)),
            "windowsVirtualKeyCode": .number(Double(key.keyCode)), "nativeVirtualKeyCode": .number(Double(key.keyCode)),
        ]
        var up = down
        // A key that types text goes down as `keyDown` with the text (Enter's "\r" is what submits a form), any
        // other as `rawKeyDown`.
        if let text = key.text {
            down["type"] = "keyDown"
            down["text"] = .string(text)
            down["unmodifiedText"] = .string(text)
        } else {
            down["type"] = "rawKeyDown"
        }
        up["type"] = "keyUp"
        try await send("Input.dispatchKeyEvent", .object(down))
        try await send("Input.dispatchKeyEvent", .object(up))
    }
}

/// A key as `Page.press` sends it: the DOM `key` and `code`, the Windows virtual key code Chromium's input
/// pipeline keys on, the text it types, and the modifiers held.
public struct Key: Sendable {
    public let key: String
    public let code: String
    public let keyCode: Int
    public let text: String?
    /// The protocol's bit mask: 1 Alt, 2 Ctrl, 4 Meta, 8 Shift.
    public let modifiers: Int

    public init(key: String, code: String, keyCode: Int, text: String? = nil, modifiers: Int = 0) {
        self.key = key
        self.code = code
        self.keyCode = keyCode
        self.text = text
        self.modifiers = modifiers
    }

    public static let tab = Key(key: "Tab", code: "Tab", keyCode: 9)
    public static let shiftTab = Key(key: "Tab", code: "Tab", keyCode: 9, modifiers: 8)
    public static let enter = Key(key: "Enter", code: "Enter", keyCode: 13, text: "\r")
    public static let space = Key(key: " ", code: "Space", keyCode: 32, text: " ")
    public static let escape = Key(key: "Escape", code: "Escape", keyCode: 27)
    public static let backspace = Key(key: "Backspace", code: "Backspace", keyCode: 8)
    public static let arrowUp = Key(key: "ArrowUp", code: "ArrowUp", keyCode: 38)
    public static let arrowDown = Key(key: "ArrowDown", code: "ArrowDown", keyCode: 40)
}
