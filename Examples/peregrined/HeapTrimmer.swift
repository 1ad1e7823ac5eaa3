import ServiceLifecycle

#if canImport(Glibc)
    import Glibc
#endif

/// Gives the heap's free pages back to the system after the heap grew: glibc's `free` returns
/// memory only from the top of a heap, so what a burst of requests freed between blocks still
/// in use stays resident until something asks for it. Measured with 10,000 tasks added through
/// `system.multicall` (P9): 41 MiB of heap resident right after the burst, 28 MiB after a
/// `malloc_trim(0)`.
///
/// Once an `interval` it reads how much of the process is resident and anonymous (the heap, from
/// `/proc/self/statm`: one small read) and trims when that grew by `growth` since the last trim
/// (a burst under way), and once more when it stopped growing after that, or more than `slack`
/// above it (what a burst left: pages freed after the trim stay resident). A trim holds each arena's lock while it walks that arena's free chunks (tens of
/// milliseconds with hundreds of thousands of them), so a service whose heap holds steady is not
/// trimmed at all, and one that just took a burst is trimmed within a second or two.
struct HeapTrimmer: Service {
    var interval: Duration = .seconds(1)
    var growth = 8 << 20
    var slack = 1 << 20

    func run() async throws {
        #if canImport(Glibc)
            var baseline = Self.residentHeapBytes() ?? 0
            var previous = baseline
            var afterBurst = false
            while !Task.isShuttingDownGracefully {
                let wait = interval
                do {
                    try await cancelWhenGracefulShutdown { try await Task.sleep(for: wait) }
                } catch {
                    return
                }
                guard let resident = Self.residentHeapBytes() else { continue }
                let settled = abs(resident - previous) < slack / 4
                previous = resident
                let growing = resident > baseline + growth
                if growing || (settled && (afterBurst || resident > baseline + slack)) {
                    _ = glibcMallocTrim(0)
                    // A trim during a burst misses what the burst frees after it: one more
                    // once the heap settles.
                    afterBurst = growing
                    baseline = Self.residentHeapBytes() ?? resident
                    previous = baseline
                } else if resident < baseline {
                    baseline = resident
                }
            }
        #endif
    }

    #if canImport(Glibc)
        /// Resident anonymous bytes (`RssAnon`): `/proc/self/statm`'s resident pages less its
        /// shared (file-backed) ones; nil when it cannot be read.
        static func residentHeapBytes() -> Int? {
            let descriptor = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return nil }
            defer { close(descriptor) }
            var buffer = [UInt8](repeating: 0, count: 128)
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return nil }
            let fields = buffer[..<count].split(separator: UInt8(ascii: " ")).prefix(3).map {
                Int(String(decoding: $0, as: UTF8.self))
            }
            guard fields.count == 3, let resident = fields[1], let shared = fields[2] else { return nil }
            return max(0, resident - shared) * Int(sysconf(Int32(_SC_PAGESIZE)))
        }
    #endif
}

#if canImport(Glibc)
    // glibc's `malloc_trim` (<malloc.h>, which the Glibc module does not bring): 1 when it
    // released memory.
    @_silgen_name("malloc_trim") private func glibcMallocTrim(_ pad: Int) -> Int32
#endif
