// This target holds the binary property-list store (issue 4).
// Until that lands it re-exports what it builds on, so that the package layout, products and
// dependency graph are final and users can already depend on it.
@_exported import PeregrineStorage
