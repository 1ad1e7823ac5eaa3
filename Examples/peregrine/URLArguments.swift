import ArgumentParser
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The URLs of `peregrine get`, taken out of the command line before ArgumentParser reads it.
///
/// ArgumentParser's time grows with the square of the number of arguments (2,000 URLs took
/// longer than downloading them), while a list of URLs is exactly what people paste or expand
/// from a glob. Every positional argument with a scheme (`…://`) is lifted out in order when all
/// positional arguments have one; the parser sees only the options, and `GetCommand.validate()`
/// takes the URLs back. Which options take a value (so that the word after them is not a
/// positional argument) comes from the command's own definition, never from a list kept here.
enum URLArguments {
    private static let lifted = Mutex<[String]>([])

    /// `arguments` (without the program's name) with the URLs of a `get` command taken out.
    static func lift(_ arguments: [String]) -> [String] {
        guard let commandIndex = arguments.firstIndex(where: { !$0.hasPrefix("-") }),
            arguments[commandIndex] == GetCommand._commandName
        else { return arguments }
        let rest = arguments[(commandIndex + 1)...]
        // Only worth it for many words; few go through the parser unchanged.
        guard rest.count > liftingThreshold, let valued = optionsTakingAValue() else { return arguments }
        var kept = Array(arguments[...commandIndex])
        var urls: [String] = []
        var index = rest.startIndex
        var onlyPositional = false
        while index < rest.endIndex {
            let word = rest[index]
            index += 1
            if onlyPositional || !word.hasPrefix("-") || word == "-" {
                guard word.utf8.firstRange(of: "://".utf8) != nil else { return arguments }
                urls.append(word)
                continue
            }
            kept.append(word)
            if word == "--" {
                onlyPositional = true
            } else if takesNextWord(word, valued: valued), index < rest.endIndex {
                kept.append(rest[index])
                index += 1
            }
        }
        lifted.withLock { $0 = urls }
        return kept
    }

    /// The URLs lifted out of the command line, once.
    static func take() -> [String] {
        lifted.withLock { urls in
            let taken = urls
            urls = []
            return taken
        }
    }

    /// Below this many words after `get`, the parser's cost is too small to matter.
    static let liftingThreshold = 32

    /// Whether the option word `word` is followed by its value as the next word: `--name`
    /// or `-n` of an option that takes one, or a cluster of short names (`-qj`) ending in one.
    private static func takesNextWord(_ word: String, valued: Set<String>) -> Bool {
        guard !word.utf8.contains(UInt8(ascii: "=")) else { return false }
        if word.hasPrefix("--") { return valued.contains(String(word.dropFirst(2))) }
        guard let last = word.dropFirst().last else { return false }
        return valued.contains(String(last)) && word.dropFirst().allSatisfy { $0.isLetter }
    }

    /// The names (without dashes) of `get`'s options that take a value, read from the command's
    /// own help (every option, hidden ones included, listed as `-o, --dir <dir>`); nil when none
    /// is found (then nothing is lifted). (ArgumentParser's JSON description of the command
    /// would link the whole of Foundation.)
    private static func optionsTakingAValue() -> Set<String>? {
        var names: Set<String> = []
        for line in GetCommand.helpMessage(includeHidden: true, columns: 10_000).split(separator: "\n") {
            let trimmed = line.drop { $0 == " " }
            guard trimmed.hasPrefix("-"), let value = trimmed.firstIndex(of: "<") else { continue }
            // The names before the value: "-o, -d, --dir, --directory <dir>  The directory…".
            let definition = trimmed[..<value]
            guard definition.utf8.firstRange(of: "  ".utf8) == nil else { continue }
            for name in definition.split(separator: ",") {
                let word = name.filter { $0 != " " }
                guard word.hasPrefix("-") else { continue }
                names.insert(String(word.drop { $0 == "-" }))
            }
        }
        return names.isEmpty ? nil : names
    }
}
