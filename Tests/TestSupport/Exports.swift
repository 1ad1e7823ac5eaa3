// The Transport conformance kit (loopback server, scenarios, runner) was part of this target
// before it became a library product; tests that used it from here keep working.
@_exported import PeregrineTransportTestKit
