// File kinds, type icons, image and video thumbnails, and their caches (issue 8).
// Re-exports the core value types the API speaks in (`FileKind`).
@_exported import PeregrineCore
