// The test bed's API speaks in the facade's and the mock transport's types (the manager, the
// server, its routes and faults): importing PeregrineTestKit brings both along.
@_exported import Peregrine
@_exported import PeregrineMockTransport
