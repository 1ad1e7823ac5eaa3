// The engine's API speaks in Core's value types (states, failure reasons, resume records, URLs,
// file kinds): importing the engine brings them along, as the placeholder of this target did.
@_exported import PeregrineCore
