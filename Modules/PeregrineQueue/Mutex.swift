// Sanitizer builds (-DPEREGRINE_TSAN, Scripts/sanitize.sh) lock with a mutex ThreadSanitizer
// sees (PeregrineCore's SanitizerMutex says why); other builds declare nothing here and use
// Synchronization.Mutex itself.
#if PEREGRINE_TSAN
    import PeregrineCore

    typealias Mutex<Value: ~Copyable> = SanitizerMutex<Value>
#endif
