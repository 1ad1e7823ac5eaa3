// Replaced as this target is written.
