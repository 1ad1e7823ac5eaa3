import PostgresNIO

/// The store's tables, as numbered migrations.
///
/// A database is brought to ``latestVersion`` when a store opens: in one transaction that first
/// takes a transaction-scoped advisory lock (``migrationLock``), so of several services starting
/// together one migrates and the others wait, then find nothing left to do. Every applied
/// migration is a row of `peregrine_schema`. A database whose highest version is above
/// ``latestVersion`` was migrated by newer code: it is refused (`unsupportedVersion`) and not
/// touched, because this code cannot know what the newer tables mean.
///
/// Rules for new migrations: append, never edit one that shipped; each runs once, inside the
/// migrating transaction.
enum PostgresSchema {
    /// One step of the schema.
    struct Migration: Sendable {
        var version: Int32
        var summary: String
        var statements: [String]
    }

    /// The advisory lock key (`pg_advisory_xact_lock(bigint)`) that serialises migrations;
    /// "PGRNSCHM" in ASCII.
    static let migrationLock: Int64 = 0x5047_524E_5343_484D
    /// The first key of the per-store session lock (`pg_try_advisory_lock(int, int)`), whose second
    /// key is `hashtext(identifier)`; "PGST" in ASCII.
    static let storeLockClass: Int32 = 0x5047_5354

    /// The version this code writes and reads.
    static var latestVersion: Int32 { migrations.last?.version ?? 0 }

    /// Every migration, in order.
    static let migrations: [Migration] = [
        Migration(
            version: 1, summary: "tasks, lists with their rows, configuration, thumbnails",
            statements: [
                """
                CREATE TABLE peregrine_stores (
                    store text PRIMARY KEY,
                    opened_at timestamptz NOT NULL DEFAULT now(),
                    saved_at timestamptz
                )
                """,
                "CREATE SEQUENCE peregrine_task_order AS bigint",
                """
                CREATE TABLE peregrine_tasks (
                    store text NOT NULL,
                    url text NOT NULL,
                    added_order bigint NOT NULL,
                    list text NOT NULL,
                    state text NOT NULL,
                    received_length bigint NOT NULL,
                    record text NOT NULL,
                    PRIMARY KEY (store, url)
                )
                """,
                "CREATE INDEX peregrine_tasks_by_order ON peregrine_tasks (store, added_order)",
                "CREATE INDEX peregrine_tasks_by_state ON peregrine_tasks (store, list, state)",
                """
                CREATE TABLE peregrine_lists (
                    store text NOT NULL,
                    list text NOT NULL,
                    settings text NOT NULL,
                    PRIMARY KEY (store, list)
                )
                """,
                """
                CREATE TABLE peregrine_list_entries (
                    store text NOT NULL,
                    list text NOT NULL,
                    position bigint NOT NULL,
                    section integer NOT NULL,
                    url text NOT NULL,
                    PRIMARY KEY (store, list, position)
                )
                """,
                """
                CREATE TABLE peregrine_configuration (
                    store text PRIMARY KEY,
                    record text NOT NULL
                )
                """,
                """
                CREATE TABLE peregrine_thumbnails (
                    store text NOT NULL,
                    url text NOT NULL,
                    record text NOT NULL,
                    PRIMARY KEY (store, url)
                )
                """,
            ]),
        Migration(
            version: 2, summary: "leases for queues shared by several services",
            statements: [
                """
                ALTER TABLE peregrine_tasks
                    ADD COLUMN lease_owner text,
                    ADD COLUMN lease_expires timestamptz,
                    ADD COLUMN claims integer NOT NULL DEFAULT 0
                """,
                // What a claim scans: the waiting and downloading tasks of a queue, oldest first
                // (finished tasks leave the index, so a long history does not slow claims).
                """
                CREATE INDEX peregrine_tasks_claimable ON peregrine_tasks (store, added_order)
                WHERE state IN ('pending', 'downloading')
                """,
            ]),
        Migration(
            version: 3, summary: "limits across a fleet, tasks found by their fleet key, the order of endings",
            statements: [
                // `origin`: scheme and authority without user information, lowercased (the
                // URLs are normalized: default ports are already gone), computed by the server
                // for every row, old ones included. `lease_connections`: the connections the
                // holder may open for the task. `url_hash`: the queue key's FNV-1a, set by
                // `enqueue`, by which a service finds a task from its fleet-wide GID.
                // `ended_order`: set by `finish` from a sequence.
                #"""
                ALTER TABLE peregrine_tasks
                    ADD COLUMN origin text GENERATED ALWAYS AS (lower(regexp_replace(
                        url, '^([A-Za-z][A-Za-z0-9+.-]*://)([^/?#@]*@)?([^/?#]*).*$', '\1\3'))) STORED,
                    ADD COLUMN lease_connections integer NOT NULL DEFAULT 1,
                    ADD COLUMN url_hash bigint,
                    ADD COLUMN ended_order bigint
                """#,
                // The order in which a queue's tasks ended, for its followers (`endings`).
                "CREATE SEQUENCE peregrine_ended_order AS bigint",
                """
                CREATE INDEX peregrine_tasks_by_ending ON peregrine_tasks (store, ended_order)
                WHERE ended_order IS NOT NULL
                """,
                // What a limited claim counts: the held tasks of a queue.
                "CREATE INDEX peregrine_tasks_held ON peregrine_tasks (store) WHERE state = 'downloading'",
                """
                CREATE INDEX peregrine_tasks_by_hash ON peregrine_tasks (store, url_hash)
                WHERE url_hash IS NOT NULL
                """,
                // A queue's limits, the same for every service of the fleet; no row, no limit.
                """
                CREATE TABLE peregrine_queues (
                    store text PRIMARY KEY,
                    max_downloads integer CHECK (max_downloads > 0),
                    max_connections_per_origin integer CHECK (max_connections_per_origin > 0),
                    changed_at timestamptz NOT NULL DEFAULT now()
                )
                """,
            ]),
    ]

    /// The statement that makes the version table when the database has none.
    static let versionTable = """
        CREATE TABLE IF NOT EXISTS peregrine_schema (
            version integer PRIMARY KEY,
            summary text NOT NULL,
            applied_at timestamptz NOT NULL DEFAULT now()
        )
        """
}
