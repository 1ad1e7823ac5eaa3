// The queue's API speaks in the types of the modules it composes: importing PeregrineQueue brings
// the engine's (and Core's) task types, the checksums' results, the list model's index paths and
// sort settings, the store protocol and property-list values along — and swift-log's `Logger`,
// which the engine's configuration takes.
@_exported import Logging
@_exported import PeregrineChecksums
@_exported import PeregrineEngine
@_exported import PeregrineSorting
@_exported import PeregrineStorage
@_exported import PeregrineTransport
