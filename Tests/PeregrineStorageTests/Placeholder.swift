// Replaced by the storage conformance suite.
