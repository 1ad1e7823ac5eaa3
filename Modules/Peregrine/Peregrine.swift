// The facade's API speaks in the types of the modules it composes: importing Peregrine brings
// the engine's (and Core's) task types, the list model's index paths and sort settings, the
// store protocol and property-list values, and the thumbnails' pictures along.
@_exported import PeregrineEngine
@_exported import PeregrineSorting
@_exported import PeregrineStorage
@_exported import PeregrineThumbnails
@_exported import PeregrineTransport
@_exported import PeregrineVerification
