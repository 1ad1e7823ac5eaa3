// Replaced by the facade tests.
