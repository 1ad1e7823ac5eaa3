// The facade's API speaks in the types of the modules it composes: importing Peregrine brings
// the engine's (and Core's) task types, the list model's index paths and sort settings, the
// store protocol and property-list values, and the thumbnails' pictures along — and swift-log's
// `Logger`, which the configuration takes, so that an app sets or silences the manager's logging
// without adding swift-log to its own dependencies.
@_exported import Logging
@_exported import PeregrineEngine
@_exported import PeregrineSorting
@_exported import PeregrineStorage
@_exported import PeregrineTransport
@_exported import PeregrineVerification

#if Thumbnails
    @_exported import PeregrineThumbnails
#endif
