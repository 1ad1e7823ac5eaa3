// The facade's API speaks in the types of the modules it composes: importing Peregrine brings
// the queue's (and through it the engine's, Core's, the list model's and the store protocol's)
// types along, the OpenSSL verification the manager uses by default, and the thumbnails'
// pictures — and swift-log's `Logger`, which the configuration takes, so that an app sets or
// silences the manager's logging without adding swift-log to its own dependencies.
@_exported import Logging
@_exported import PeregrineQueue
@_exported import PeregrineVerification

#if Thumbnails
    @_exported import PeregrineThumbnails
#endif
