#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A POSIX thread that can be joined (Foundation's `Thread` cannot).
struct LoopbackThread: @unchecked Sendable {
    // pthread_t is an integer on Linux; joining from any thread is allowed.
    private let handle: pthread_t

    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Starts a thread that runs `body`.
    static func spawn(_ body: @escaping @Sendable () -> Void) throws(LoopbackServerError) -> LoopbackThread {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var handle = pthread_t()
        let result = pthread_create(
            &handle, nil,
            { raw in
                let body = Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue()
                body.run()
                return nil
            }, context)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw LoopbackServerError(
                message: "pthread_create failed: \(String(cString: strerror(result)))", errno: result)
        }
        return LoopbackThread(handle: handle)
    }

    private init(handle: pthread_t) { self.handle = handle }

    /// Waits for the thread to end.
    func join() {
        _ = pthread_join(handle, nil)
    }
}
