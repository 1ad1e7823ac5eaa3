// The scenarios name their routes with the in-memory transport's `MockServer`, which the loopback
// server also serves: importing the kit brings it along.
@_exported import PeregrineMockTransport
@_exported import PeregrineTransport
