import PeregrineEngine
import PeregrineTransport
import Testing

/// A named set of ``FileSink/Options`` that a file-sink test runs under.
struct FileSinkConfiguration: Sendable, CustomTestStringConvertible {
    var name: String
    var options: FileSink.Options
    /// Distinguishes the seeds of the configurations.
    var salt: UInt64

    var testDescription: String { name }

    /// Two 8 KiB buffers, always written on the caller's thread through the page cache.
    static let smallSynchronous = FileSinkConfiguration(
        name: "8 KiB buffers, never in the background",
        options: .init(bufferCapacity: 8192, backgroundThreshold: .max), salt: 1)
    /// Two 8 KiB buffers, every full buffer written in the background with direct I/O.
    static let smallBackground = FileSinkConfiguration(
        name: "8 KiB buffers, background from 0",
        options: .init(bufferCapacity: 8192, backgroundThreshold: 0), salt: 2)
    /// Two 8 KiB buffers, switching to the background at an offset that is not a buffer boundary.
    static let smallCrossing = FileSinkConfiguration(
        name: "8 KiB buffers, background from 20000",
        options: .init(bufferCapacity: 8192, backgroundThreshold: 20_000), salt: 3)
    /// A capacity that is not a multiple of 4096 (rounded up to 12 KiB), background from 0.
    static let oddBackground = FileSinkConfiguration(
        name: "10000-byte buffers, background from 0",
        options: .init(bufferCapacity: 10_000, backgroundThreshold: 0), salt: 4)
    /// Background writing without direct I/O.
    static let bufferedBackground = FileSinkConfiguration(
        name: "8 KiB buffers, background from 0, no direct I/O",
        options: .init(bufferCapacity: 8192, backgroundThreshold: 0, usesDirectIO: false), salt: 5)
    /// Large direct writes from the start.
    static let largeBackground = FileSinkConfiguration(
        name: "1 MiB buffers, background from 0",
        options: .init(bufferCapacity: 1 << 20, backgroundThreshold: 0), salt: 6)
    /// What a backend gets when it passes nothing: 2 MiB buffers, background from 8 MiB.
    static let defaults = FileSinkConfiguration(name: "default options", options: .init(), salt: 7)

    static let all: [FileSinkConfiguration] = [
        .smallSynchronous, .smallBackground, .smallCrossing, .oddBackground, .bufferedBackground,
        .largeBackground, .defaults,
    ]
}
