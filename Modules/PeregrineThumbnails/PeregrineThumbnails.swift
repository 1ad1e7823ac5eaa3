// This target holds file kinds, type icons and thumbnails (issue 8).
// Until that lands it re-exports what it builds on, so that the package layout, products and
// dependency graph are final and users can already depend on it.
@_exported import PeregrineCore
