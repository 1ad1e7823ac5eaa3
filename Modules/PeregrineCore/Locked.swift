import Synchronization

/// The lock every module and test guards its state with: `Synchronization.Mutex`, except in
/// sanitizer builds (`-Xswiftc -DPEREGRINE_TSAN`, `Scripts/sanitize.sh`), which lock with a
/// mutex ThreadSanitizer sees (``SanitizerMutex`` says why). One alias for the whole package, so
/// a sanitized build changes every lock and an ordinary one pays nothing.
#if PEREGRINE_TSAN
    package typealias Locked<Value: ~Copyable> = SanitizerMutex<Value>
#else
    package typealias Locked<Value: ~Copyable> = Mutex<Value>
#endif
