// This target holds the scheduler and task state machine (issue 3).
// Until that lands it re-exports what it builds on, so that the package layout, products and
// dependency graph are final and users can already depend on it.
@_exported import PeregrineCore
