import ArgumentParser
import GPSDLocation

extension WhereAmI {
    /// The command a plain command line asks for, read without swift-argument-parser's parse; `nil` for any other,
    /// which ``runAsMain()`` leaves to that parse.
    ///
    /// The parse costs most of a one-shot's start: it reflects on the command's properties (`Mirror`) and casts each
    /// to its protocols, and in a binary with the standard library linked in, each first cast of a type scans every
    /// protocol conformance record of the program, about 4,000 (16.1 million of a one-shot's 24.5 million
    /// instructions; Documentation/Performance.md, "The one-shot"). This reads the command lines a script or a
    /// person types most (`whereami`, `whereami HOST --max-age 5 --format json -q`, `whereami -f --count 10`) with
    /// the same option names, the same conversions of values (each type's `init(argument:)`, the server's
    /// transform) and the same `validate()`s, and declines everything else: a name it does not know (help,
    /// `--version`, the completion script's), a name given twice, short flags run together (`-fq`), `--`, a value
    /// that is empty or begins with `-`, a second positional argument, a value that does not convert, a command
    /// line that `validate()` refuses. What it declines, the parser reads as before, its errors and help
    /// included; what it reads, the parser would read to the same command (`QuickParseTests`, and the
    /// `arguments` fuzz target, compare the two).
    package static func quickParse(_ arguments: [String]) -> WhereAmI? {
        // The values first, so that a command line declined costs next to nothing (the option groups are made last).
        var plain = PlainCommandLine()
        var given: UInt32 = 0   // a bit for each name given (QuickName), so that one given twice is declined
        func once(_ name: QuickName) -> Bool {
            defer { given |= name.bit }
            return given & name.bit == 0
        }
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            guard Self.isOptionLike(argument) else {
                // The one positional argument, gpsd's address.
                guard !argument.isEmpty, once(.server),
                      let server = try? ConnectionOptions.server(parsing: argument) else { return nil }
                plain.server = server
                continue
            }
            var spelled = Substring(argument)
            var attached: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                spelled = argument[..<equals]
                attached = String(argument[argument.index(after: equals)...])
            }
            guard let name = QuickName(spelled: spelled), once(name) else { return nil }
            // A flag takes no value; an option's value is attached (`--format=json`) or the next argument.
            let isFlag = attached == nil
            func value() -> String? {
                guard let value = attached ?? rest.popFirst(), !value.isEmpty, !Self.isOptionLike(value) else { return nil }
                return value
            }
            switch name {
            case .server:
                return nil
            case .demo:
                guard isFlag else { return nil }
                plain.demo = true
            case .follow:
                guard isFlag else { return nil }
                plain.follow = true
            case .watch:
                guard isFlag else { return nil }
                plain.watch = true
            case .quiet:
                guard isFlag else { return nil }
                plain.quiet = true
            case .sky:
                guard isFlag else { return nil }
                plain.sky = true
            case .replay:
                guard let file = value().flatMap(String.init(argument:)) else { return nil }
                plain.replay = file
            case .speed:
                guard let factor = value().flatMap(Double.init(argument:)) else { return nil }
                plain.speed = factor
            case .timeout:
                guard let seconds = value().flatMap(Seconds.init(argument:)) else { return nil }
                plain.timeout = seconds
            case .maxAge:
                guard let seconds = value().flatMap(Seconds.init(argument:)) else { return nil }
                plain.maxAge = seconds
            case .accuracy:
                guard let metres = value().flatMap(Double.init(argument:)) else { return nil }
                plain.accuracy = metres
            case .count:
                guard let count = value().flatMap(Int.init(argument:)) else { return nil }
                plain.count = count
            case .distance:
                guard let metres = value().flatMap(Double.init(argument:)) else { return nil }
                plain.distance = metres
            case .interval:
                guard let seconds = value().flatMap(Double.init(argument:)) else { return nil }
                plain.interval = seconds
            case .format:
                guard let format = value().flatMap(OutputFormat.init(argument:)) else { return nil }
                plain.format = format
            }
        }

        // Every property is set: one left as swift-argument-parser's definition traps when read (the tests compare
        // every property's description with the parser's).
        var connection = ConnectionOptions()
        connection.server = plain.server
        connection.replay = plain.replay
        connection.demo = plain.demo
        connection.speed = plain.speed
        var request = RequestOptions()
        request.timeout = plain.timeout
        request.maxAge = plain.maxAge
        request.accuracy = plain.accuracy
        request.follow = plain.follow
        request.watch = plain.watch
        request.count = plain.count
        request.distance = plain.distance
        request.interval = plain.interval
        var output = OutputOptions()
        output.format = plain.format
        output.quiet = plain.quiet
        var satellites = SkyOptions()
        satellites.sky = plain.sky
        var command = WhereAmI()
        command.connection = connection
        command.request = request
        command.output = output
        command.satellites = satellites
        do {
            try connection.validate()
            try request.validate()
            try command.validate()
        } catch {
            return nil
        }
        return command
    }

    /// Whether swift-argument-parser could take `argument` for an option's name (or `--`): its first byte is a
    /// dash. The parser looks at its first character; a character that begins with a dash and is more (a dash and
    /// a combining mark) is declined here, and left to it.
    private static func isOptionLike(_ argument: String) -> Bool {
        argument.utf8.first == UInt8(ascii: "-")
    }
}

/// What ``WhereAmI/quickParse(_:)`` read: each option's value, or its default as the option declares it.
private struct PlainCommandLine {
    var server: GPSDServer?
    var replay: String?
    var demo = false
    var speed: Double?
    var timeout: Seconds?
    var maxAge: Seconds?
    var accuracy: Double?
    var follow = false
    var watch = false
    var count: Int?
    var distance: Double?
    var interval: Double?
    var format = OutputFormat.text
    var quiet = false
    var sky = false
}

/// The names ``WhereAmI/quickParse(_:)`` reads, as the options declare them (`QuickParseTests` holds the list to
/// the parser's), and the positional server.
enum QuickName: Int {
    case server, demo, follow, watch, quiet, sky
    case replay, speed, timeout, maxAge, accuracy, count, distance, interval, format

    init?(spelled name: Substring) {
        switch name {
        case "--demo": self = .demo
        case "-f", "--follow": self = .follow
        case "-w", "--watch": self = .watch
        case "-q", "--quiet": self = .quiet
        case "--sky": self = .sky
        case "--replay": self = .replay
        case "--speed": self = .speed
        case "--timeout": self = .timeout
        case "--max-age": self = .maxAge
        case "--accuracy": self = .accuracy
        case "--count": self = .count
        case "--distance": self = .distance
        case "--interval": self = .interval
        case "--format": self = .format
        default: return nil
        }
    }

    var bit: UInt32 { 1 << UInt32(rawValue) }
}
